// The pending-capture test card (docs/test-mode.md): the simulated processor holds each capture of
// it pending, as a processor confirming later would, until POST /v1/test-helpers/captures/{id}/resolve
// has it confirm or refuse the capture; the answer is applied as Adyen's CAPTURE / CAPTURE_FAILED
// notification is (docs/authorise-and-capture.md), and the processor's own webhook, which follows,
// changes nothing more.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { eventually } from '../support/helpers.js';
import { availableOf, CARDS, eventTypesOf, newOrder, pay } from '../support/payments.js';
import { checkLedger } from '../../src/ledger/check.js';

const h = useService();
const { api } = h;

let keys = 0;

async function pendingCapture(amount: number, captured = amount) {
  const order = await newOrder(api, { amount, currency: 'EUR', capture_method: 'manual' });
  const paid = await pay(api, order.id, CARDS.pendingCapture);
  expect(paid.status, paid.text).toBe(201);
  expect(paid.body).toMatchObject({ status: 'requires_capture', amount_capturable: amount });
  const res = await api.post(`/v1/payments/${paid.body.id}/capture`, { amount: captured }, { idempotencyKey: `pc-${keys++}` });
  expect(res.status, res.text).toBe(201);
  expect(res.body).toMatchObject({ status: 'pending', amount: captured, final_capture: true, connector_reference: expect.any(String) });
  return { order, payment: paid.body.id as string, capture: res.body.id as string };
}

const resolve = (id: string, outcome: string, client = api) => client.post(`/v1/test-helpers/captures/${id}/resolve`, { outcome });

/** The processor's webhook about the capture has been received (and deduplicated by its event id). */
const webhookSeen = (capture: string) =>
  eventually(
    () => h.query(sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${capture}`),
    (rows) => Number(rows[0]!.n) >= 1,
  );

const paymentTransactions = async (payment: string) =>
  ((await api.get(`/v1/balance-transactions?source=${payment}`)).body.data as { type: string; amount: number }[]).filter((t) => t.type === 'payment');

describe('test helper: resolve a pending capture', () => {
  it('succeeded: the capture succeeds, is booked once, the payment succeeds and its order is paid', async () => {
    const before = await availableOf(api);
    const { order, payment, capture } = await pendingCapture(2500);
    // Pending: nothing booked, the payment still authorised with its amount held by the capture.
    expect(await availableOf(api)).toBe(before);
    expect((await api.get(`/v1/payments/${payment}`)).body).toMatchObject({ status: 'requires_capture', amount_capturable: 0, amount_captured: 0 });

    const res = await resolve(capture, 'succeeded');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: capture, object: 'capture', status: 'succeeded', amount: 2500, failure_code: null });
    await webhookSeen(capture);

    expect((await api.get(`/v1/captures/${capture}`)).body.status).toBe('succeeded');
    expect((await api.get(`/v1/payments/${payment}`)).body).toMatchObject({ status: 'succeeded', amount_capturable: 0, amount_captured: 2500 });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 2500 });
    expect(await eventTypesOf(api, capture)).toEqual(['capture.created', 'capture.succeeded']);
    expect(await eventTypesOf(api, payment)).toEqual(['payment.created', 'payment.authorized', 'payment.succeeded']);
    expect((await paymentTransactions(payment)).map((t) => t.amount)).toEqual([2500]);
    expect(await availableOf(api)).toBe(before + 2500);
    expect(await checkLedger(h.db)).toMatchObject({ ok: true, postingMismatches: [] });
  });

  it('failed: the capture fails capture_declined and the authorisation holds its amount again', async () => {
    const before = await availableOf(api);
    const { order, payment, capture } = await pendingCapture(1800, 1000);
    const res = await resolve(capture, 'failed');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'capture_declined' });
    await webhookSeen(capture);
    expect(await eventTypesOf(api, capture)).toEqual(['capture.created', 'capture.failed']);
    expect((await api.get(`/v1/payments/${payment}`)).body).toMatchObject({ status: 'requires_capture', amount_capturable: 1800, amount_captured: 0 });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).not.toBe('paid');
    expect(await paymentTransactions(payment)).toEqual([]);
    expect(await availableOf(api)).toBe(before);

    // The authorisation can be captured again (and this capture is pending in turn).
    const again = await api.post(`/v1/payments/${payment}/capture`, { amount: 1800 }, { idempotencyKey: `pc-${keys++}` });
    expect(again.body).toMatchObject({ status: 'pending', amount: 1800 });
  });

  it('a capture no longer pending is 422 invalid_state; a resolve changes nothing twice', async () => {
    const { payment, capture } = await pendingCapture(700);
    expect((await resolve(capture, 'succeeded')).status).toBe(200);
    for (const outcome of ['succeeded', 'failed']) {
      const twice = await resolve(capture, outcome);
      expect(twice.status, twice.text).toBe(422);
      expect(twice.body.error.code).toBe('invalid_state');
    }
    expect((await api.get(`/v1/captures/${capture}`)).body.status).toBe('succeeded');
    expect((await paymentTransactions(payment)).length).toBe(1);
  });

  it("another account's capture, or an unknown id, is 404; a live key is 403; a bad outcome is 400", async () => {
    const { capture } = await pendingCapture(900);
    const other = await h.newTenant('other');
    const theirs = await resolve(capture, 'succeeded', other.api);
    expect(theirs.status, theirs.text).toBe(404);
    expect(theirs.body.error.code).toBe('resource_missing');
    const unknown = await resolve('cap_01jd8x3v0pe7wbz0m4k6f2n9qa', 'succeeded');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('resource_missing');
    const live = await resolve(capture, 'succeeded', h.live);
    expect(live.status).toBe(403);
    expect(live.body.error.code).toBe('permission_denied');
    const bad = await resolve(capture, 'captured');
    expect(bad.status).toBe(400);
    // Nothing of this settled it.
    expect((await api.get(`/v1/captures/${capture}`)).body.status).toBe('pending');
  });
});
