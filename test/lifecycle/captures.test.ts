// Captures of manual payments (docs/authorise-and-capture.md) over the simulated processors, which
// take several captures: an order with capture_method manual is authorised only; captures take
// its money in parts until the final one, which succeeds the payment, pays the order with what was
// captured and books each capture like a payment; every bad capture is a typed 422 that takes
// nothing; concurrent captures never take more than the authorisation holds.
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { CARDS, eventTypesOf, newOrder, pay } from '../support/payments.js';
import { mandateMethod, newMandate } from '../support/mandates.js';
import { checkLedger } from '../../src/ledger/check.js';

const h = useService();
const { api } = h;

let keys = 0;
const capture = (payment: string, body: Record<string, unknown> = {}) => api.post(`/v1/payments/${payment}/capture`, body, { idempotencyKey: `cap-${payment}-${keys++}` });

async function authorised(amount: number, card: string = CARDS.success) {
  const order = await newOrder(api, { amount, currency: 'EUR', capture_method: 'manual' });
  expect(order.capture_method).toBe('manual');
  const res = await pay(api, order.id, card);
  expect(res.status, res.text).toBe(201);
  expect(res.body).toMatchObject({ status: 'requires_capture', capture_method: 'manual', amount_capturable: amount, amount_captured: 0 });
  expect(res.body.capture_before).toEqual(expect.any(String));
  return { order, payment: res.body };
}

describe('captures', () => {
  it('take an authorisation in parts; the final one succeeds the payment and pays the order with what was captured', async () => {
    const { order, payment } = await authorised(5000);
    const balance = async () => (await api.get('/v1/balance')).body.available.find((b: { currency: string }) => b.currency === 'EUR')?.amount ?? 0;
    const before = await balance();

    const first = await capture(payment.id, { amount: 2000, final_capture: false });
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ object: 'capture', status: 'succeeded', amount: 2000, final_capture: false, payment: payment.id });
    expect((await api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'requires_capture', amount_capturable: 3000, amount_captured: 2000 });
    expect(await balance()).toBe(before + 2000);
    // Booked once per capture: still authorised with part of it taken, the ledger agrees with itself.
    expect((await checkLedger(h.db)).postingMismatches).toEqual([]);

    const last = await capture(payment.id, { amount: 1500 });
    expect(last.body).toMatchObject({ status: 'succeeded', amount: 1500, final_capture: true });
    expect((await api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'succeeded', amount_capturable: 0, amount_captured: 3500 });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 3500 });
    expect(await balance()).toBe(before + 3500);
    expect(await checkLedger(h.db)).toMatchObject({ ok: true, postingMismatches: [] });
    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.authorized', 'payment.succeeded']);
    expect(await eventTypesOf(api, first.body.id)).toEqual(['capture.created', 'capture.succeeded']);

    const listed = await api.get(`/v1/captures?payment=${payment.id}`);
    expect(listed.body.data.map((c: { id: string }) => c.id).sort()).toEqual([first.body.id, last.body.id].sort());
    // The payment lists its captures, oldest first: when read, in a page of payments, and in the event of its success.
    const both = [
      { id: first.body.id, status: 'succeeded', amount: 2000, final_capture: false },
      { id: last.body.id, status: 'succeeded', amount: 1500, final_capture: true },
    ];
    expect((await api.get(`/v1/payments/${payment.id}`)).body.captures).toMatchObject(both);
    expect((await api.get(`/v1/payments?payment_order=${order.id}`)).body.data[0].captures).toMatchObject(both);
    const events = (await api.get('/v1/events?type=payment.succeeded&limit=100')).body.data as { data: { object: { id: string; captures: unknown[] } } }[];
    expect(events.find((e) => e.data.object.id === payment.id)!.data.object.captures).toMatchObject(both);
    // Captured money is what refunds draw on: not a cent more; nothing is left to capture.
    const tooMuch = await api.post('/v1/refunds', { payment: payment.id, amount: 3501 }, { idempotencyKey: `ref-over-${payment.id}` });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.error.code).toBe('amount_above_refundable');
    const refund = await api.post('/v1/refunds', { payment: payment.id, amount: 3500 }, { idempotencyKey: `ref-all-${payment.id}` });
    expect(refund.status, refund.text).toBe(201);
    const again = await capture(payment.id);
    expect(again.status, again.text).toBe(422);
    expect(again.body.error.code).toBe('invalid_state');
  });

  it('captures everything by default, and a retry with the same key answers the same capture', async () => {
    const { payment } = await authorised(1200);
    const key = `cap-all-${payment.id}`;
    const res = await api.post(`/v1/payments/${payment.id}/capture`, {}, { idempotencyKey: key });
    expect(res.body).toMatchObject({ status: 'succeeded', amount: 1200, final_capture: true });
    const replay = await api.post(`/v1/payments/${payment.id}/capture`, {}, { idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(res.body);
    const after = (await api.get(`/v1/payments/${payment.id}`)).body;
    expect(after).toMatchObject({ status: 'succeeded', amount_captured: 1200 });
    // Two changes of the payment, two versions: its amount held for the capture, then succeeded —
    // the version its payment.succeeded shows.
    expect(after.version).toBe(payment.version + 2);
    const events = (await api.get('/v1/events?limit=100')).body.data as { type: string; data: { object: { id: string; version: number } } }[];
    expect(events.find((e) => e.type === 'payment.succeeded' && e.data.object.id === payment.id)?.data.object.version).toBe(after.version);
  });

  it('a declined capture (card 4000000000000366) takes nothing and leaves the authorisation whole', async () => {
    const { order, payment } = await authorised(800, '4000000000000366');
    const res = await capture(payment.id, { amount: 500 });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'capture_declined', amount: 500 });
    expect((await api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'requires_capture', amount_capturable: 800, amount_captured: 0 });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'processing', amount_paid: 0 });
    expect(await eventTypesOf(api, res.body.id)).toEqual(['capture.created', 'capture.failed']);
  });

  it("capture_method on the payment overrides its order's; a direct debit is never held", async () => {
    const held = await pay(api, (await newOrder(api, { amount: 900 })).id, CARDS.success, { capture_method: 'manual' });
    expect(held.status, held.text).toBe(201);
    expect(held.body).toMatchObject({ status: 'requires_capture', capture_method: 'manual', amount_capturable: 900, amount_captured: 0 });
    const taken = await pay(api, (await newOrder(api, { amount: 900, capture_method: 'manual' })).id, CARDS.success, { capture_method: 'automatic' });
    expect(taken.body).toMatchObject({ status: 'succeeded', capture_method: 'automatic', amount_captured: 900 });
    const bad = await pay(api, (await newOrder(api, { amount: 900 })).id, CARDS.success, { capture_method: 'later' });
    expect(bad.status).toBe(400);

    const mandate = await newMandate(api);
    const order = await newOrder(api, { amount: 900 });
    const debit = await api.post('/v1/payments', { payment_order: order.id, payment_method: mandateMethod(mandate.id), capture_method: 'manual' });
    expect(debit.status, debit.text).toBe(422);
    expect(debit.body.error).toMatchObject({ code: 'capture_not_supported', param: 'capture_method' });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
  });

  it('refuses what it cannot take, each with its typed error, taking nothing', async () => {
    const { payment } = await authorised(1000);
    const above = await capture(payment.id, { amount: 1001 });
    expect(above.status).toBe(422);
    expect(above.body.error).toMatchObject({ code: 'amount_above_capturable', param: 'amount' });
    const bad = await capture(payment.id, { amount: 0 });
    expect(bad.status).toBe(400);
    const missing = await capture('pay_01jd8x3v0pe7wbz0m4k6f2n9qa');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('resource_missing');

    const automatic = await pay(api, (await newOrder(api, { amount: 700 })).id);
    const notManual = await capture(automatic.body.id);
    expect(notManual.status).toBe(422);
    expect(notManual.body.error.code).toBe('invalid_state');
    expect((await api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ amount_capturable: 1000, amount_captured: 0 });
  });

  it('twenty concurrent partial captures never take more than the authorisation holds', async () => {
    const { payment } = await authorised(3000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => capture(payment.id, { amount: 1000, final_capture: false })));
    const taken = answers.filter((r) => r.status === 201 && r.body.status === 'succeeded');
    expect(taken, answers.map((a) => `${a.status} ${a.body.status ?? a.body.error?.code} ${a.body.failure_code ?? ''}`).join(', ')).toHaveLength(3);
    for (const r of answers.filter((a) => a.status !== 201)) expect(r.body.error.code).toBe('amount_above_capturable');
    expect((await api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ amount_capturable: 0, amount_captured: 3000 });
  });
});
