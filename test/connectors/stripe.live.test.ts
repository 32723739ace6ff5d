// Live mode end to end through a Stripe connector account, with STRIPE_API_BASE_URL pointing at a
// fake Stripe: activate live, create the account, route to it, pay, refund, receive its signed
// webhook (deduplicated by Stripe's event id); and Stripe's 8-digit limit in routing. Stripe's
// faults through the service are scenarios of the contract suite (test/connectors/contract.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, startTestService, type TestDatabase, type TestService } from '../support/helpers.js';
import { cardMethod, newOrder, orderAndPay, pay } from '../support/payments.js';
import { createConnectorAccount, newTenantClients } from '../support/connectors.js';
import { FakeStripe, STRIPE_CARDS } from '../support/fakes/stripe.js';

let testDb: TestDatabase;
let service: TestService;
let fake: FakeStripe;
const SIGNING_SECRET = 'whsec_live_endpoint_secret_0123';

beforeAll(async () => {
  fake = await new FakeStripe().start();
  testDb = await createTestDatabase();
  service = await startTestService(testDb, { settings: { stripeApiBaseUrl: fake.url, connectorTimeoutMs: 5000 } });
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
  await fake?.close();
});

const newTenant = () => newTenantClients(testDb, service.url);
const account = createConnectorAccount;

async function postWebhook(url: string, body: string, signature: string) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body });
  return { status: res.status, body: await res.json() };
}

/** A test-mode tenant routing to a Stripe account first, a simulator account after it. */
async function stripeThenBackup() {
  const { test } = await newTenant();
  const stripe = await account(test, 'stripe', 'stripe', { secret_key: `sk_test_${'b'.repeat(24)}` });
  const backup = await account(test, 'simulator_a', 'backup');
  await test.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'stripe' }, { name: 'backup' }] }] } });
  return { test, stripe, backup };
}

const intentOf = (paymentId: string) => [...fake.intents.values()].find((pi) => pi.metadata.payment_id === paymentId);

describe('Stripe in live mode, end to end', () => {
  it('a live Stripe account takes a payment, a refund and its webhooks', async () => {
    const { live } = await newTenant();
    const stripe = await account(live, 'stripe', 'stripe-live', { secret_key: `sk_live_${'a'.repeat(24)}`, webhook_secret: SIGNING_SECRET });
    expect(stripe.webhook_url).toBe(`${service.url}/v1/connector-accounts/${stripe.id}/webhooks`);
    const rules = await live.request('PUT', '/v1/routing', { body: { rules: [{ currencies: ['EUR'], connectors: [{ name: 'stripe-live' }] }] } });
    expect(rules.status, rules.text).toBe(200);

    // Live mode refuses the simulators' test cards (4242…); the fake charges any other card.
    const { order, payment } = await orderAndPay(live, '4111111111111111', { amount: 2500, currency: 'EUR' });
    expect(payment).toMatchObject({ status: 'succeeded', livemode: true, connector: stripe.id, connector_reference: expect.stringMatching(/^pi_/) });
    expect(intentOf(payment.id)).toMatchObject({ livemode: true, amount: 2500, currency: 'eur', status: 'succeeded' });
    expect((await live.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');

    const refund = await live.post('/v1/refunds', { payment: payment.id, amount: 1000 });
    expect(refund.status, refund.text).toBe(201);
    expect(refund.body).toMatchObject({ status: 'succeeded', amount: 1000 });
    expect([...fake.refunds.values()].find((r) => r.metadata.refund_id === refund.body.id)).toMatchObject({ amount: 1000, payment_intent: payment.connector_reference });

    // 3-D Secure: requires_action until Stripe's webhook says how it ended.
    const order3ds = await newOrder(live, { amount: 700, currency: 'EUR' });
    const asked = { payment: (await pay(live, order3ds.id, STRIPE_CARDS.requiresAction, { return_url: 'https://shop.example.com/done' })).body };
    expect(asked.payment).toMatchObject({ status: 'requires_action', connector: stripe.id });
    const intent = fake.settle(asked.payment.connector_reference, 'succeeded');
    const event = fake.event('payment_intent.succeeded', intent, SIGNING_SECRET);
    expect(await postWebhook(stripe.webhook_url, event.body, event.signature)).toEqual({ status: 200, body: { received: true, duplicate: false, applied: true } });
    expect((await live.get(`/v1/payments/${asked.payment.id}`)).body.status).toBe('succeeded');
    expect(await postWebhook(stripe.webhook_url, event.body, event.signature)).toEqual({ status: 200, body: { received: true, duplicate: true, applied: false } });

  });

  it("an amount above Stripe's 8 digits: Stripe is left out of the route, and a route of Stripe alone is a typed 422", async () => {
    const { test, backup } = await stripeThenBackup();
    const { payment } = await orderAndPay(test, STRIPE_CARDS.success, { amount: 100_000_000, currency: 'EUR' });
    expect(payment).toMatchObject({ status: 'succeeded', connector: backup.id });
    expect(payment.attempts.map((a: any) => a.connector)).toEqual([backup.id]);

    await test.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'stripe' }] }] } });
    const order = (await test.post('/v1/payment-orders', { amount: 100_000_000, currency: 'EUR', reference: 'big', customer: { email: 'a@b.co' } })).body;
    const res = await test.post('/v1/payments', { payment_order: order.id, payment_method: cardMethod(STRIPE_CARDS.success) });
    expect(res.status, res.text).toBe(422);
    expect(res.body.error).toMatchObject({ type: 'eligibility', code: 'amount_above_limit', param: 'payment_order', message: expect.stringMatching(/8 digits/) });
    expect(intentOf(payment.id)).toBeUndefined();
  });
});
