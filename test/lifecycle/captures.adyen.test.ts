// Adyen confirms captures later: it answers /captures `received` and tells the outcome by a CAPTURE
// or CAPTURE_FAILED notification (signed with the account's HMAC key by Adyen's SDK, as the fake
// does). Through the service: a capture stays pending until its notification, which settles it by
// the capture's own rules — money booked and the payment's amounts moved on CAPTURE, the amount
// given back to the authorisation on CAPTURE_FAILED — and a notification sent again, or one that
// comes after the outcome is known, changes nothing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createConnectorAccount } from '../support/connectors.js';
import { FakeAdyen } from '../support/fakes/adyen.js';
import { useService } from '../support/fixtures.js';
import { availableOf, eventTypesOf, newOrder, pay } from '../support/payments.js';

const fake = new FakeAdyen();
beforeAll(() => fake.start());
afterEach(() => expect(fake.invalid).toEqual([]));
afterAll(() => fake.close());

const h = useService({ late: () => ({ settings: { adyenCheckoutBaseUrl: fake.url } }) });
const HMAC_KEY = '7d'.repeat(32);
let webhookUrl: string;

beforeAll(async () => {
  const account = await createConnectorAccount(h.api, 'adyen', 'adyen-captures', { api_key: `AQE_captures_${'k'.repeat(16)}`, merchant_account: 'CapturesECOM', hmac_key: HMAC_KEY });
  webhookUrl = account.webhook_url;
  const res = await h.api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: account.name }] }] } });
  expect(res.status, res.text).toBe(200);
});

let keys = 0;
const capture = (payment: string, body: Record<string, unknown>) => h.api.post(`/v1/payments/${payment}/capture`, body, { idempotencyKey: `adyen-cap-${keys++}` });
const paymentOf = async (id: string) => (await h.api.get(`/v1/payments/${id}`)).body;
const captureOf = async (id: string) => (await h.api.get(`/v1/captures/${id}`)).body;

/** Posts a notification to the account's webhook URL; Adyen expects `[accepted]` whatever we did. */
async function deliver(body: string) {
  const res = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  expect(res.status).toBe(200);
  expect(await res.text()).toBe('[accepted]');
}

/** A capture taken by Adyen and left pending: its pspReference is what the notification names. */
async function pendingCapture(payment: string, amount: number, finalCapture: boolean) {
  const res = await capture(payment, { amount, final_capture: finalCapture });
  expect(res.status, res.text).toBe(201);
  expect(res.body).toMatchObject({ status: 'pending', amount, final_capture: finalCapture, connector_reference: expect.any(String) });
  expect(fake.modifications.get(res.body.connector_reference)).toMatchObject({ kind: 'capture', reference: res.body.id });
  return res.body as { id: string; connector_reference: string };
}

describe('Adyen capture notifications settle captures', () => {
  it('CAPTURE succeeds a pending capture, CAPTURE_FAILED fails one; repeats and late ones change nothing', async () => {
    const order = await newOrder(h.api, { amount: 1000, currency: 'EUR', capture_method: 'manual' });
    const authorised = await pay(h.api, order.id);
    expect(authorised.status, authorised.text).toBe(201);
    expect(authorised.body).toMatchObject({ status: 'requires_capture', amount_capturable: 1000 });
    const payment = authorised.body.id as string;
    const before = await availableOf(h.api);

    // A partial capture: pending until Adyen confirms it; nothing booked meanwhile.
    const first = await pendingCapture(payment, 600, false);
    expect(await paymentOf(payment)).toMatchObject({ status: 'requires_capture', amount_capturable: 400, amount_captured: 0 });
    expect(await availableOf(h.api)).toBe(before);
    const captured = fake.settled(first.connector_reference, true, HMAC_KEY);
    await deliver(captured);
    expect(await captureOf(first.id)).toMatchObject({ status: 'succeeded', failure_code: null });
    expect(await paymentOf(payment)).toMatchObject({ status: 'requires_capture', amount_capturable: 400, amount_captured: 600 });
    expect(await availableOf(h.api)).toBe(before + 600);

    // The same notification again, and a contradicting one after the outcome: harmless.
    await deliver(captured);
    await deliver(fake.notification('CAPTURE_FAILED', { ...JSON.parse(captured).notificationItems[0].NotificationRequestItem, eventCode: 'CAPTURE_FAILED' }, HMAC_KEY));
    expect(await captureOf(first.id)).toMatchObject({ status: 'succeeded' });
    expect(await paymentOf(payment)).toMatchObject({ amount_capturable: 400, amount_captured: 600 });
    expect(await availableOf(h.api)).toBe(before + 600);
    expect(await eventTypesOf(h.api, first.id)).toEqual(['capture.created', 'capture.succeeded']);

    // The scheme refuses the final capture after Adyen took it: nothing taken, the authorisation holds it again.
    const refused = await pendingCapture(payment, 400, true);
    await deliver(fake.settled(refused.connector_reference, false, HMAC_KEY));
    expect(await captureOf(refused.id)).toMatchObject({ status: 'failed', failure_code: 'capture_declined', failure_message: expect.stringMatching(/Adyen could not capture/) });
    expect(await paymentOf(payment)).toMatchObject({ status: 'requires_capture', amount_capturable: 400, amount_captured: 600 });
    expect(await eventTypesOf(h.api, refused.id)).toEqual(['capture.created', 'capture.failed']);

    // A final capture that goes through succeeds the payment and pays the order with what was captured.
    const last = await pendingCapture(payment, 400, true);
    await deliver(fake.settled(last.connector_reference, true, HMAC_KEY));
    expect(await paymentOf(payment)).toMatchObject({ status: 'succeeded', amount_capturable: 0, amount_captured: 1000 });
    expect((await h.api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 1000 });
    expect(await availableOf(h.api)).toBe(before + 1000);
    expect(fake.payments.get(authorised.body.connector_reference)?.captured).toBe(1000);
  });

  it('a CAPTURE that names no capture of ours (an automatic payment, another merchant account) is acknowledged and applies nothing', async () => {
    const order = await newOrder(h.api, { amount: 500, currency: 'EUR' });
    const paid = await pay(h.api, order.id);
    expect(paid.body).toMatchObject({ status: 'succeeded' });
    const fields = { pspReference: 'AUTOCAPTURE00001', originalReference: paid.body.connector_reference, merchantReference: paid.body.id, merchantAccountCode: 'CapturesECOM', success: 'true' };
    await deliver(fake.notification('CAPTURE', fields, HMAC_KEY));
    const pending = await pendingCapture((await pay(h.api, (await newOrder(h.api, { amount: 300, currency: 'EUR', capture_method: 'manual' })).id)).body.id, 300, true);
    await deliver(fake.notification('CAPTURE', { ...fields, pspReference: pending.connector_reference, merchantReference: pending.id, merchantAccountCode: 'SomeoneElseECOM' }, HMAC_KEY));
    expect(await captureOf(pending.id)).toMatchObject({ status: 'pending' });
    expect(await paymentOf(paid.body.id)).toMatchObject({ status: 'succeeded', amount: 500 });
  });
});
