// Property: whatever the declines, processor errors and unknown outcomes, a cascade never holds
// two authorisations for one payment (docs/declines.md). Random payments through a service routed
// [Stripe, Adyen] or [Adyen, Stripe] cascading every cascadable type, with random cards (approved,
// declined generic, retry_later or do_not_retry, declined at Stripe only) and random faults
// injected into either fake (a 429 before acting, a 500 after acting); the fakes' own books are
// read under every attempt's reference. A fault a payment never reached meets a later one. Crashes
// are covered by crash.cascade.test.ts (SIGKILL at each point of a cascade).
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { newOrder, pay } from '../support/payments.js';
import { STRIPE_CARDS } from '../support/fakes/stripe.js';
import type { Connected } from '../connectors/contract/harness.js';
import { useStripeAndAdyen } from '../connectors/contract/stripe-and-adyen.js';

const CARDS = [STRIPE_CARDS.success, STRIPE_CARDS.velocity, STRIPE_CARDS.doNotHonor, STRIPE_CARDS.insufficientFunds, '4000000000000853'];
const FAULTS = ['none', 'refuse', 'server_error_after'] as const;

type Attempt = { connector: string; outcome: string; decline_type: string | null };

describe('cascade property: at most one authorisation per payment at the fakes', () => {
  const both = useStripeAndAdyen();
  const { stripe, adyen } = both;
  const h = useService({ late: () => ({ settings: { connectorTimeoutMs: 2000, ...both.settings() } }) });
  let connected: { stripe: Connected; adyen: Connected };
  beforeAll(async () => {
    connected = { stripe: await stripe.connect(h.api, h.url), adyen: await adyen.connect(h.api, h.url) };
  });

  it('holds over random cards, routes and faults', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          stripeFirst: fc.boolean(),
          card: fc.constantFrom(...CARDS),
          stripeFault: fc.constantFrom(...FAULTS),
          adyenFault: fc.constantFrom(...FAULTS),
          maxAttempts: fc.integer({ min: 1, max: 5 }),
        }),
        async ({ stripeFirst, card, stripeFault, adyenFault, maxAttempts }) => {
          const order = stripeFirst ? [connected.stripe, connected.adyen] : [connected.adyen, connected.stripe];
          const cascade = { on: ['generic', 'retry_later', 'processor'], max_attempts: maxAttempts };
          expect((await h.api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: order.map((c) => c.route), cascade }] } })).status).toBe(200);
          for (const [harness, fault] of [[stripe, stripeFault], [adyen, adyenFault]] as const) {
            if (fault === 'refuse') harness.faults!.refuseNext();
            if (fault === 'server_error_after') harness.faults!.serverErrorAfterNext();
          }
          const res = await pay(h.api, (await newOrder(h.api)).id, card);
          expect(res.status, res.text).toBe(201);
          const id = res.body.id as string;
          const references = [id, ...[2, 3, 4, 5].map((n) => `${id}_${n}`)];
          let held = 0;
          for (const ref of references) held += (await stripe.books!.authorisations!(ref)) + (await adyen.books!.authorisations!(ref));
          expect(held, JSON.stringify(res.body.attempts)).toBeLessThanOrEqual(1);
          if (res.body.status === 'succeeded') expect(held).toBe(1);
          if (res.body.status === 'failed') expect(held).toBe(0);
          const attempts = res.body.attempts as Attempt[];
          // No attempt after a do_not_retry or fix_data decline, none after an unknown outcome, within max_attempts.
          const stop = attempts.findIndex((a) => a.decline_type === 'do_not_retry' || a.decline_type === 'fix_data' || a.outcome === 'timeout');
          if (stop >= 0) expect(attempts.length - 1, JSON.stringify(attempts)).toBe(stop);
          expect(attempts.filter((a) => a.outcome === 'declined').length).toBeLessThanOrEqual(maxAttempts);
        },
      ),
      { numRuns: 30, seed: 26 },
    );
  }, 300_000);
});
