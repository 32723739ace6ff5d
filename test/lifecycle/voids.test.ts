// Voids of manual payments' authorisations (docs/authorise-and-capture.md) over the simulated
// processors: POST /v1/payments/{id}/cancel releases the money the processor holds, cancels the
// payment and opens its order again; an order's cancel voids its authorised payment first; the
// worker voids authorisations past capture_before (`expired`), after which a capture is refused
// `authorization_expired`; a void of what cannot be voided is a typed 422 that moves nothing; a
// capture racing a void leaves exactly one of them done, at the processor and in our books alike.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { useService } from '../support/fixtures.js';
import { testClock } from '../support/helpers.js';
import { availableOf, CARDS, eventTypesOf, newOrder, pay } from '../support/payments.js';

const h = useService();
const { api } = h;
const clock = testClock();
const clocked = useService({ on: h, clock });
// Racing calls on a loaded machine outlast the tests' 300 ms connector deadline; a timeout is no race.
const patient = useService({ on: h, settings: { connectorTimeoutMs: 10_000 } });
const backoffClock = testClock();
const INTERVAL_MS = 60_000;
const backingOff = useService({ on: h, clock: backoffClock, settings: { statusCheckIntervalMs: INTERVAL_MS } });

let keys = 0;
const cancel = (payment: string, body: Record<string, unknown> = {}, key = `void-${payment}-${keys++}`, on = api) =>
  on.post(`/v1/payments/${payment}/cancel`, body, { idempotencyKey: key });
const capture = (payment: string, body: Record<string, unknown> = {}, on = api) => on.post(`/v1/payments/${payment}/capture`, body, { idempotencyKey: `cap-${payment}-${keys++}` });

async function authorised(amount: number, on = api) {
  const order = await newOrder(on, { amount, currency: 'EUR', capture_method: 'manual' });
  const res = await pay(on, order.id);
  expect(res.body, res.text).toMatchObject({ status: 'requires_capture', amount_capturable: amount });
  return { order, payment: res.body };
}

/** The charge as the simulated processor holds it. */
const charge = async (payment: { id: string; connector: string }) => h.service.simulator(payment.connector).charges.get(payment.id);

describe('POST /v1/payments/{id}/cancel', () => {
  it('voids the authorisation: the payment canceled, its order open again, nothing booked; a replay answers the same', async () => {
    const { order, payment } = await authorised(4000);
    const before = await availableOf(api);
    const key = `void-once-${payment.id}`;
    const res = await cancel(payment.id, {}, key);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: payment.id, status: 'canceled', cancellation_reason: 'requested_by_customer', amount_capturable: 0, amount_captured: 0 });
    expect((await charge(payment))?.state).toBe('VOIDED');
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'open', amount_paid: 0 });
    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.authorized', 'payment.canceled']);
    expect(await eventTypesOf(api, order.id)).toContain('payment_order.open');
    expect(await availableOf(api)).toBe(before);

    const replay = await cancel(payment.id, {}, key);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(res.body);
    const reused = await cancel(payment.id, { cancellation_reason: 'duplicate' }, key);
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
    // Voided: nothing can be captured, nor voided again.
    expect((await capture(payment.id)).body.error.code).toBe('invalid_state');
    expect((await cancel(payment.id)).body.error.code).toBe('invalid_state');
    // The order takes another payment.
    expect((await pay(api, order.id)).body.status).toBe('requires_capture');
  });

  it('keeps the reason given; refuses one that is not a merchant reason and a request without a key', async () => {
    const { payment } = await authorised(900);
    expect((await cancel(payment.id, { cancellation_reason: 'expired' })).status).toBe(400);
    expect((await api.post(`/v1/payments/${payment.id}/cancel`, {}, { idempotencyKey: '' })).status).toBe(400);
    const res = await cancel(payment.id, { cancellation_reason: 'fraudulent' });
    expect(res.body).toMatchObject({ status: 'canceled', cancellation_reason: 'fraudulent' });
  });

  it('refuses what cannot be voided with a typed 422, moving nothing', async () => {
    const automatic = (await pay(api, (await newOrder(api, { amount: 700 })).id)).body;
    const failed = (await pay(api, (await newOrder(api, { amount: 700, capture_method: 'manual' })).id, CARDS.declined)).body;
    expect(failed.status).toBe('failed');
    const { payment: partly } = await authorised(1000);
    expect((await capture(partly.id, { amount: 400, final_capture: false })).body.status).toBe('succeeded');
    const { payment: captured } = await authorised(500);
    expect((await capture(captured.id)).body.status).toBe('succeeded');

    for (const p of [automatic, failed, partly, captured]) {
      const before = (await api.get(`/v1/payments/${p.id}`)).body;
      const res = await cancel(p.id);
      expect(res.status, p.id).toBe(422);
      expect(res.body.error.code).toBe('invalid_state');
      expect((await api.get(`/v1/payments/${p.id}`)).body).toEqual(before);
    }
    expect((await charge(partly))).toMatchObject({ state: 'AUTHORISED', captured_minor: 400 });
    const missing = await cancel('pay_01jd8x3v0pe7wbz0m4k6f2n9qa');
    expect(missing.status).toBe(404);
  });

  it('a capture racing a void: exactly one wins, and the processor and the ledger agree', async () => {
    const papi = patient.api;
    for (let round = 0; round < 5; round++) {
      const { payment } = await authorised(1000, papi);
      const before = await availableOf(papi);
      const [captured, voided] = await Promise.all([capture(payment.id, {}, papi), cancel(payment.id, {}, undefined, papi)]);
      const captureWon = captured.status === 201 && captured.body.status === 'succeeded';
      const voidWon = voided.status === 200 && voided.body.status === 'canceled';
      expect(captureWon !== voidWon, `${captured.text} / ${voided.text}`).toBe(true);
      const loser = captureWon ? voided : captured;
      expect(loser.status).toBe(422);
      const after = (await papi.get(`/v1/payments/${payment.id}`)).body;
      const held = await patient.service.simulator(payment.connector).charges.get(payment.id);
      if (captureWon) {
        expect(after).toMatchObject({ status: 'succeeded', amount_captured: 1000 });
        expect(held).toMatchObject({ state: 'CAPTURED', captured_minor: 1000 });
        expect(await availableOf(papi)).toBe(before + 1000);
      } else {
        expect(after).toMatchObject({ status: 'canceled', amount_captured: 0 });
        expect(held?.state).toBe('VOIDED');
        expect(await availableOf(papi)).toBe(before);
      }
    }
  });
});

describe('cancelling an order', () => {
  it('voids its authorised payment first, then cancels the order', async () => {
    const { order, payment } = await authorised(2500);
    const res = await api.post(`/v1/payment-orders/${order.id}/cancel`, {}, { idempotencyKey: `ord-cancel-${order.id}` });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: order.id, status: 'cancelled' });
    expect((await api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'canceled', cancellation_reason: 'requested_by_customer' });
    expect((await charge(payment))?.state).toBe('VOIDED');
    expect(await eventTypesOf(api, order.id)).toEqual(['payment_order.created', 'payment_order.processing', 'payment_order.open', 'payment_order.cancelled']);
  });
});

describe('expiry by the worker, under a test clock', () => {
  it('voids an authorisation past capture_before (expired); a capture then answers authorization_expired', async () => {
    clock.set(Date.now());
    const capi = clocked.api;
    const { order, payment } = await authorised(3000, capi);
    const kept = await authorised(1000, capi);
    const lapse = Date.parse(payment.capture_before);

    clock.set(lapse - 1000);
    await clocked.service.runWorker();
    expect((await capi.get(`/v1/payments/${payment.id}`)).body.status).toBe('requires_capture');

    // The other one was captured in part: it can no longer be voided; the worker closes it at what was captured.
    expect((await capi.post(`/v1/payments/${kept.payment.id}/capture`, { amount: 100, final_capture: false }, { idempotencyKey: `kept-${kept.payment.id}` })).body.status).toBe('succeeded');
    clock.set(lapse + 1000);
    const pass = await clocked.service.runWorker();
    expect(pass.voids?.expired).toBeGreaterThanOrEqual(1);
    expect((await capi.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'canceled', cancellation_reason: 'expired', amount_capturable: 0 });
    expect((await capi.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    expect((await clocked.service.simulator(payment.connector).charges.get(payment.id))?.state).toBe('VOIDED');
    const late = await capi.post(`/v1/payments/${payment.id}/capture`, {}, { idempotencyKey: `late-${payment.id}` });
    expect(late.status).toBe(422);
    expect(late.body.error.code).toBe('authorization_expired');

    // A second pass finds nothing more to do.
    expect((await clocked.service.runWorker()).voids).toMatchObject({ expired: 0 });
    expect((await capi.get(`/v1/payments/${kept.payment.id}`)).body).toMatchObject({ status: 'succeeded', amount_captured: 100, cancellation_reason: null });
    clock.reset();
  });
});

describe('an expiry void the processor refuses, under a test clock', () => {
  it('is tried again after the status-check interval, then twice it, then four times, not on every pass', async () => {
    backoffClock.set(Date.now());
    const { order, payment } = await authorised(2500, backingOff.api);
    const sim = backingOff.service.simulator(payment.connector);
    // The processor no longer holds the authorisation as such: every void of it fails.
    const hold = (state: 'REFUSED' | 'AUTHORISED') => sim.charges.change(payment.id, (c) => ((c.state = state), true), true);
    await hold('REFUSED');
    const failedVoids = async () =>
      (await h.query(sql`SELECT status FROM voids WHERE payment_id = ${parseId('pay', payment.id)!} AND reason = 'expired'`)).filter((r) => r.status === 'failed').length;
    const passAt = async (ms: number) => {
      backoffClock.set(ms);
      await backingOff.service.runWorker();
      return failedVoids();
    };
    let t = Date.parse(payment.capture_before) + 1000;
    expect(await passAt(t)).toBe(1);
    // Every later pass inside the wait leaves it alone; the wait doubles at each refusal.
    for (const wait of [INTERVAL_MS, 2 * INTERVAL_MS, 4 * INTERVAL_MS]) {
      const before = await failedVoids();
      expect(await passAt(t + 1000)).toBe(before);
      expect(await passAt(t + wait - 1000)).toBe(before);
      t += wait + 1000;
      expect(await passAt(t)).toBe(before + 1);
    }
    expect((await backingOff.api.get(`/v1/payments/${payment.id}`)).body.status).toBe('requires_capture');

    // Once the processor takes it, the next try after the wait voids it.
    await hold('AUTHORISED');
    expect(await passAt(t + 4 * INTERVAL_MS)).toBe(4);
    expect(await passAt(t + 8 * INTERVAL_MS + 1000)).toBe(4);
    expect((await backingOff.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'canceled', cancellation_reason: 'expired' });
    expect((await backingOff.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    backoffClock.reset();
  });
});

