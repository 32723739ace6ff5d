// Adyen end to end through connector accounts, with ADYEN_CHECKOUT_BASE_URL pointing at a fake Adyen
// that validates every request against Adyen's published schema: live mode (activate live, a live
// account with its live URL prefix, route, pay, refund, signed notifications acknowledged
// `[accepted]` and applied once, bad and rotated-out HMAC keys refused), and the core's rules over
// Adyen's faults: 429 → the next connector of the route; 500 after acting → pending, never tried
// elsewhere, settled by Adyen's AUTHORISATION notification with one charge at Adyen.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, startTestService, type Api, type TestDatabase, type TestService } from '../support/helpers.js';
import { CARDS, cardMethod, eventTypesOf, orderAndPay } from '../support/payments.js';
import { createConnectorAccount as account, newTenantClients } from '../support/connectors.js';
import { ADYEN_CARDS, FakeAdyen } from '../support/fakes/adyen.js';

let testDb: TestDatabase;
let service: TestService;
let fake: FakeAdyen;
const KEY_1 = '0f'.repeat(32);
const KEY_2 = '1e'.repeat(32);
const KEY_3 = '2d'.repeat(32);
const MERCHANT = 'OrchestratorLiveECOM';

beforeAll(async () => {
  fake = await new FakeAdyen().start();
  testDb = await createTestDatabase();
  service = await startTestService(testDb, { settings: { adyenCheckoutBaseUrl: fake.url, connectorTimeoutMs: 5000 } });
});
afterEach(() => expect(fake.invalid).toEqual([]));
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
  await fake?.close();
});

const newTenant = () => newTenantClients(testDb, service.url);
const credentials = (mode: 'test' | 'live', hmac_key = KEY_1) => ({
  api_key: `AQE${mode}${'k'.repeat(20)}`,
  merchant_account: MERCHANT,
  hmac_key,
  ...(mode === 'live' ? { live_url_prefix: '1797a841fbb37ca7-OrchestratorDemo' } : {}),
});

async function notify(url: string, body: string) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}
const accepted = { status: 200, type: expect.stringMatching(/^text\/plain/), text: '[accepted]' };

/** A test-mode tenant routing to an Adyen account first, a simulator account after it. */
async function adyenThenBackup() {
  const { test } = await newTenant();
  const adyen = await account(test, 'adyen', 'adyen', credentials('test'));
  const backup = await account(test, 'simulator_a', 'backup');
  await test.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'adyen' }, { name: 'backup' }] }] } });
  return { test, adyen, backup };
}

const chargesAtAdyen = (paymentId: string) => [...fake.payments.values()].filter((p) => p.reference === paymentId);

describe('Adyen in live mode, end to end', () => {
  let live: Api;
  let adyen: { id: string; webhook_url: string };
  beforeAll(async () => {
    live = (await newTenant()).live;
    adyen = await account(live, 'adyen', 'adyen-live', credentials('live'));
    const rules = await live.request('PUT', '/v1/routing', { body: { rules: [{ currencies: ['EUR'], connectors: [{ name: 'adyen-live' }] }] } });
    expect(rules.status, rules.text).toBe(200);
  });

  it('a live Adyen account takes a payment and a refund, settled by its notifications, each applied once', async () => {
    expect(adyen.webhook_url).toBe(`${service.url}/v1/connector-accounts/${adyen.id}/webhooks`);
    const { order, payment } = await orderAndPay(live, ADYEN_CARDS.success, { amount: 2500, currency: 'EUR' });
    expect(payment).toMatchObject({ status: 'succeeded', livemode: true, connector: adyen.id, connector_reference: expect.stringMatching(/^[0-9A-F]{16}$/) });
    expect(chargesAtAdyen(payment.id)).toEqual([expect.objectContaining({ merchantAccount: MERCHANT, amount: { currency: 'EUR', value: 2500 } })]);
    expect((await live.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');

    const refund = await live.post('/v1/refunds', { payment: payment.id, amount: 1000 });
    expect(refund.status, refund.text).toBe(201);
    expect(refund.body).toMatchObject({ status: 'pending', amount: 1000 });
    const atAdyen = [...fake.refunds.values()].find((r) => r.reference === refund.body.id)!;
    expect(atAdyen).toMatchObject({ paymentPspReference: payment.connector_reference, amount: { currency: 'EUR', value: 1000 } });
    const done = fake.refunded(atAdyen.pspReference, true, KEY_1, true);
    expect(await notify(adyen.webhook_url, done)).toEqual(accepted);
    expect((await live.get(`/v1/refunds/${refund.body.id}`)).body.status).toBe('succeeded');
    // Adyen sends a notification again until it is acknowledged: the repeat is acknowledged, not applied.
    expect(await notify(adyen.webhook_url, done)).toEqual(accepted);
    expect((await eventTypesOf(live, refund.body.id)).filter((t) => t === 'refund.succeeded')).toHaveLength(1);
  });

  it('Received: pending until the AUTHORISATION notification; ?refresh=true answers the stored state', async () => {
    const { payment } = await orderAndPay(live, ADYEN_CARDS.received, { amount: 700, currency: 'EUR' });
    expect(payment).toMatchObject({ status: 'pending', connector: adyen.id });
    const refreshed = await live.get(`/v1/payments/${payment.id}?refresh=true`);
    expect(refreshed.body).toMatchObject({ status: 'pending', connector_reference: payment.connector_reference });
    const authorised = fake.authorisation(payment.connector_reference, true, KEY_1, true);
    expect(await notify(adyen.webhook_url, authorised)).toEqual(accepted);
    expect(await notify(adyen.webhook_url, authorised)).toEqual(accepted);
    expect((await live.get(`/v1/payments/${payment.id}`)).body.status).toBe('succeeded');
    expect((await eventTypesOf(live, payment.id)).filter((t) => t === 'payment.succeeded')).toHaveLength(1);
  });

  it('refuses a notification signed with another key, and a rotated-out key once its grace period ends', async () => {
    const { payment } = await orderAndPay(live, ADYEN_CARDS.received, { amount: 800, currency: 'EUR' });
    const forged = await notify(adyen.webhook_url, fake.authorisation(payment.connector_reference, true, 'ab'.repeat(32), true));
    expect(forged.status).toBe(401);
    expect(JSON.parse(forged.text).error.code).toBe('connector_webhook_signature_invalid');

    const rotate = async (hmac_key: string, grace?: number) => {
      const res = await live.request('PATCH', `/v1/connector-accounts/${adyen.id}`, { body: { credentials: { hmac_key }, ...(grace === undefined ? {} : { grace_period_seconds: grace }) } });
      expect(res.status, res.text).toBe(200);
    };
    await rotate(KEY_2);
    // In its grace period the previous key still verifies (Adyen may have signed with it already).
    expect(await notify(adyen.webhook_url, fake.authorisation(payment.connector_reference, false, KEY_1, true))).toEqual(accepted);
    await rotate(KEY_3, 0);
    for (const stale of [KEY_1, KEY_2]) {
      expect((await notify(adyen.webhook_url, fake.authorisation(payment.connector_reference, true, stale, true))).status).toBe(401);
    }
    expect((await live.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'failed', failure_code: 'card_declined' });
  });
});

describe('Adyen and the core rules over its faults', () => {
  it('429: Adyen did nothing, the next connector of the route takes the payment', async () => {
    const { test, adyen, backup } = await adyenThenBackup();
    fake.inject('429');
    const { payment } = await orderAndPay(test, CARDS.success);
    expect(payment).toMatchObject({ status: 'succeeded', connector: backup.id });
    expect(payment.attempts.map((a: any) => [a.connector, a.outcome, a.error_code])).toEqual([
      [adyen.id, 'error', 'processor_error'],
      [backup.id, 'succeeded', null],
    ]);
    expect(chargesAtAdyen(payment.id)).toEqual([]);
  });

  it('500 after acting: pending, never tried elsewhere; the same-key retry answers it; the notification settles it, one charge at Adyen', async () => {
    const { test, adyen } = await adyenThenBackup();
    fake.inject('500_after');
    const order = (await test.post('/v1/payment-orders', { amount: 1500, currency: 'EUR', reference: 'five-hundred', customer: { email: 'a@b.co' } })).body;
    const body = { payment_order: order.id, payment_method: cardMethod(CARDS.success) };
    const first = await test.post('/v1/payments', body, { idempotencyKey: 'adyen-500' });
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ status: 'pending', connector: adyen.id, connector_reference: null });
    expect(first.body.attempts.map((a: any) => a.connector)).toEqual([adyen.id]);
    expect((await test.post('/v1/payments', body, { idempotencyKey: 'adyen-500' })).body).toMatchObject({ id: first.body.id, status: 'pending', connector: adyen.id });
    const [charged] = chargesAtAdyen(first.body.id);
    expect(await notify(adyen.webhook_url, fake.authorisation(charged!.pspReference, true, KEY_1))).toEqual(accepted);
    expect((await test.get(`/v1/payments/${first.body.id}`)).body).toMatchObject({ status: 'succeeded', connector_reference: charged!.pspReference });
    expect(chargesAtAdyen(first.body.id)).toHaveLength(1);
  });

  it('an amount Adyen cannot take (IDR in part of a rupiah) leaves Adyen out; a route of Adyen alone is a typed 422', async () => {
    const { test, backup } = await adyenThenBackup();
    const { payment } = await orderAndPay(test, CARDS.success, { amount: 150_050, currency: 'IDR' });
    expect(payment).toMatchObject({ status: 'succeeded', connector: backup.id });
    await test.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'adyen' }] }] } });
    const order = (await test.post('/v1/payment-orders', { amount: 150_050, currency: 'IDR', reference: 'idr', customer: { email: 'a@b.co' } })).body;
    const res = await test.post('/v1/payments', { payment_order: order.id, payment_method: cardMethod(CARDS.success) });
    expect(res.status, res.text).toBe(422);
    expect(res.body.error).toMatchObject({ type: 'eligibility', code: 'amount_above_limit', message: expect.stringMatching(/whole units/) });
  });
});
