// The contract of cascading retries across two processors' fakes (docs/declines.md): a payment
// declined at Stripe with a type its rule cascades becomes attempt 2 at Adyen, sent under
// `pay_…_2`; Adyen's do_not_retry (Blocked Card) stops the cascade before Stripe is called. Each
// fake's own books show what it holds under which reference: one authorisation per payment.
import { beforeAll, describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { newOrder, pay } from '../support/payments.js';
import { STRIPE_CARDS } from '../support/fakes/stripe.js';
import type { Connected } from './contract/harness.js';
import { useStripeAndAdyen } from './contract/stripe-and-adyen.js';

describe('cascade across Stripe and Adyen (fakes)', () => {
  const both = useStripeAndAdyen();
  const { stripe, adyen } = both;
  const h = useService({ late: () => ({ settings: { connectorTimeoutMs: 2000, ...both.settings() } }) });
  let atStripe: Connected;
  let atAdyen: Connected;
  beforeAll(async () => {
    atStripe = await stripe.connect(h.api, h.url);
    atAdyen = await adyen.connect(h.api, h.url);
  });
  const route = async (first: Connected, second: Connected) => {
    const body = { rules: [{ connectors: [first.route, second.route], cascade: { on: ['generic', 'retry_later'], max_attempts: 2 } }] };
    const res = await h.api.request('PUT', '/v1/routing', { body });
    expect(res.status, res.text).toBe(200);
  };

  it('Stripe declines (card_velocity_exceeded: retry_later), Adyen approves attempt 2 under pay_…_2: one authorisation in all', async () => {
    await route(atStripe, atAdyen);
    const res = await pay(h.api, (await newOrder(h.api)).id, STRIPE_CARDS.velocity);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'succeeded', connector: atAdyen.connector, decline_type: null });
    expect(res.body.attempts).toEqual([
      expect.objectContaining({ connector: atStripe.connector, outcome: 'declined', decline_type: 'retry_later' }),
      expect.objectContaining({ connector: atAdyen.connector, outcome: 'succeeded' }),
    ]);
    const id = res.body.id as string;
    // Stripe holds the declined attempt 1 under the payment's id, Adyen the authorised attempt 2 under id_2; nothing else.
    expect(await stripe.books!.chargesHeld(id)).toBe(1);
    expect(await stripe.books!.chargesHeld(`${id}_2`)).toBe(0);
    expect(await adyen.books!.chargesHeld(id)).toBe(0);
    expect(await adyen.books!.chargesHeld(`${id}_2`)).toBe(1);
    expect(await adyen.books!.chargeRequests(`${id}_2`)).toBe(1);
  });

  it('a generic decline at both: attempt 2 declined at Adyen, the payment failed with the last attempt', async () => {
    await route(atStripe, atAdyen);
    const res = await pay(h.api, (await newOrder(h.api)).id, STRIPE_CARDS.doNotHonor);
    expect(res.body).toMatchObject({ status: 'failed', connector: atAdyen.connector, decline_type: 'generic', failure_code: 'card_declined' });
    expect(res.body.attempts.map((a: { outcome: string; decline_type: string }) => [a.outcome, a.decline_type])).toEqual([
      ['declined', 'generic'],
      ['declined', 'generic'],
    ]);
  });

  it('Adyen first: Blocked Card (do_not_retry) stops the cascade, Stripe is never called', async () => {
    await route(atAdyen, atStripe);
    const res = await pay(h.api, (await newOrder(h.api)).id, '4000000000000853');
    expect(res.body).toMatchObject({ status: 'failed', connector: atAdyen.connector, decline_type: 'do_not_retry' });
    expect(res.body.attempts).toHaveLength(1);
    const id = res.body.id as string;
    expect(await stripe.books!.chargeRequests(id)).toBe(0);
    expect(await stripe.books!.chargeRequests(`${id}_2`)).toBe(0);
  });
});
