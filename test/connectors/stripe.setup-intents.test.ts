// A verification whose answer was lost is found at Stripe by our payment method id, which Stripe
// cannot search SetupIntents by: the connector reads the account's newest, page after page (its
// list's `starting_after`), up to a bound. Against the fake Stripe, which lists them as Stripe does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStripeConnector } from '../../src/connectors/stripe/connector.js';
import { SETUP_INTENT_PAGE, SETUP_INTENT_PAGES } from '../../src/connectors/stripe/setup-intents.js';
import { FakeStripe } from '../support/fakes/stripe.js';

let stripe: FakeStripe;
beforeAll(async () => {
  stripe = await new FakeStripe().start();
});
afterAll(async () => {
  await stripe?.close();
});

describe('finding a SetupIntent by our id', () => {
  const connector = () => createStripeConnector({ secretKey: `sk_test_${'s'.repeat(24)}`, webhookSecrets: [], livemode: false, apiBaseUrl: stripe.url });
  const card = { number: '4242424242424242', expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123' };
  const verify = (reference: string) => connector().verifyCard!({ reference, currency: 'EUR', card, usage: 'off_session' }, AbortSignal.timeout(5000));
  const statusOf = (reference: string) => connector().verificationStatus!({ reference, connectorReference: null }, AbortSignal.timeout(5000));
  const others = async (n: number) => {
    for (let i = 0; i < n; i++) await verify(`pm_other_${Math.random().toString(36).slice(2)}`);
  };

  it('found behind more than one page of newer ones; absent only once every page was read', async () => {
    const ours = await verify('pm_ours_0001');
    expect(ours.kind).toBe('succeeded');
    await others(SETUP_INTENT_PAGE + 20);
    expect(stripe.setupIntents.size).toBeGreaterThan(SETUP_INTENT_PAGE + 1);
    expect(await statusOf('pm_ours_0001')).toMatchObject({ kind: 'succeeded', connectorReference: (ours as { connectorReference: string }).connectorReference });
    expect(await statusOf('pm_never_sent')).toEqual({ kind: 'not_found' });
  });

  it('past the bound it says nothing rather than absent', async () => {
    const bound = SETUP_INTENT_PAGE * SETUP_INTENT_PAGES;
    await verify('pm_buried_0001');
    await others(bound);
    const status = await statusOf('pm_buried_0001');
    expect(status.kind).not.toBe('not_found');
    expect(status.kind).not.toBe('succeeded');
  });
});
