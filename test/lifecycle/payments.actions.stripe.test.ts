// 3-D Secure through a Stripe connector account, against the fake Stripe (test/support/fakes/stripe.ts):
// the PaymentIntent's redirect becomes next_action, Stripe is given our return endpoint, and the
// customer coming back there (with what Stripe appends) makes the service ask Stripe, which alone
// decides. Without a return_url Stripe is told not to start 3-D Secure: authentication_required.
// Live mode, and test mode through a sandbox account: there Stripe's own test cards apply (docs/test-mode.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { createConnectorAccount } from '../support/connectors.js';
import { FakeStripe, STRIPE_CARDS } from '../support/fakes/stripe.js';
import { CARDS, eventTypesOf, newOrder, pay } from '../support/payments.js';
import { expectError } from '../support/helpers.js';
import { browse, MERCHANT_RETURN } from '../support/payments.actions.js';

let fake: FakeStripe;
beforeAll(async () => {
  fake = await new FakeStripe().start();
});
afterAll(() => fake?.close());
const s = useService({ late: () => ({ settings: { stripeApiBaseUrl: fake.url, connectorTimeoutMs: 5000 } }) });

beforeAll(async () => {
  await createConnectorAccount(s.live, 'stripe', 'stripe', { secret_key: `sk_live_${'c'.repeat(24)}` });
  const routing = await s.live.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'stripe' }] }] } });
  expect(routing.status, routing.text).toBe(200);
});

const intentOf = (paymentId: string) => [...fake.intents.values()].find((pi) => pi.metadata.payment_id === paymentId)!;

async function payWith3ds(extra: Record<string, unknown> = { return_url: MERCHANT_RETURN }) {
  const order = await newOrder(s.live);
  const res = await pay(s.live, order.id, STRIPE_CARDS.threeDSecureRequired, extra);
  expect(res.status, res.text).toBe(201);
  return { order, payment: res.body };
}

describe('3-D Secure through Stripe', () => {
  it('requires_action with Stripe\'s page; back through our return endpoint, Stripe says succeeded', async () => {
    const { order, payment } = await payWith3ds();
    const intent = intentOf(payment.id);
    expect(payment).toMatchObject({ status: 'requires_action', connector_reference: intent.id, next_action: { type: 'redirect_to_url', return_url: MERCHANT_RETURN } });
    expect(payment.next_action.url).toBe(intent.next_action.redirect_to_url.url);
    // Stripe was given our return endpoint, never the merchant's page.
    expect(intent.next_action.redirect_to_url.return_url).toMatch(new RegExp(`^${s.url}/v1/payments/${payment.id}/return/`));
    const returnUrl = intent.next_action.redirect_to_url.return_url;

    fake.settle(intent.id, 'succeeded');
    const landed = await browse(`${returnUrl}?payment_intent=${intent.id}&redirect_status=succeeded`);
    expect(landed.status).toBe(303);
    expect(new URL(landed.location!).searchParams.get('payment')).toBe(payment.id);
    expect((await s.live.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'succeeded', next_action: null });
    expect((await s.live.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
    expect(await eventTypesOf(s.live, payment.id)).toEqual(['payment.created', 'payment.requires_action', 'payment.succeeded']);
  });

  it("redirect_status=succeeded on a PaymentIntent Stripe still holds waiting changes nothing; Stripe's failure does", async () => {
    const { payment } = await payWith3ds();
    const returnUrl = intentOf(payment.id).next_action.redirect_to_url.return_url;
    expect((await browse(`${returnUrl}?redirect_status=succeeded`)).status).toBe(303);
    expect((await s.live.get(`/v1/payments/${payment.id}`)).body.status).toBe('requires_action');
    fake.settle(intentOf(payment.id).id, 'failed');
    expect((await browse(`${returnUrl}?redirect_status=succeeded`)).status).toBe(303);
    expect((await s.live.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'failed', failure_code: 'authentication_failed' });
  });

  it('without return_url: authentication_required, and the PaymentIntent is cancelled', async () => {
    const { order, payment } = await payWith3ds({});
    expect(payment).toMatchObject({ status: 'failed', failure_code: 'authentication_required' });
    expect(intentOf(payment.id)).toMatchObject({ status: 'canceled' });
    expect((await s.live.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
  });
});

describe('test mode through a Stripe sandbox account', () => {
  it("takes Stripe's own test cards, which the simulators' route refuses", async () => {
    const tenant = await s.newTenant('Sandbox');
    // The simulators of the default route know only the documented test cards.
    expectError(await pay(tenant.api, (await newOrder(tenant.api)).id, STRIPE_CARDS.threeDSecureRequired), 400, 'parameter_invalid', { param: 'payment_method.card.number' });
    await createConnectorAccount(tenant.api, 'stripe', 'sandbox', { secret_key: `sk_test_${'d'.repeat(24)}` });
    const routing = await tenant.api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'sandbox' }] }] } });
    expect(routing.status, routing.text).toBe(200);
    const order = await newOrder(tenant.api);
    const res = await pay(tenant.api, order.id, STRIPE_CARDS.threeDSecureRequired, { return_url: MERCHANT_RETURN });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'requires_action', livemode: false, next_action: { type: 'redirect_to_url' } });
    expect(intentOf(res.body.id).livemode).toBe(false);
    // The common test cards work there too.
    expect((await pay(tenant.api, (await newOrder(tenant.api)).id, CARDS.success)).body.status).toBe('succeeded');
  });
});
