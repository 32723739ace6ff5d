// The worker's part of captures (src/domain/captures/jobs.ts, docs/authorise-and-capture.md): a
// capture whose processor answer was lost is found at the processor and settled without a second
// capture there; one the processor never received is sent again under the same id; and an
// authorisation partly captured that lapses is closed at what was captured (the payment succeeded,
// its order paid with that), the ledger booking each capture once.
import { afterAll, describe, expect, it } from 'vitest';
import type { CaptureResult, Connector } from '../../src/connectors/types.js';
import { useService } from '../support/fixtures.js';
import { testClock } from '../support/helpers.js';
import { availableOf, eventTypesOf, inProcessSimulators, newOrder, pay } from '../support/payments.js';
import { expectLedgerClean } from '../support/payouts.js';

const h = useService();
const sims = inProcessSimulators();
afterAll(() => sims.close());
let captureAnswer: ((real: () => Promise<CaptureResult>) => Promise<CaptureResult>) | undefined;
const wrapped: Connector = {
  ...sims.a,
  capture: (request, signal) => (captureAnswer ? captureAnswer(() => sims.a.capture!(request, signal)) : sims.a.capture!(request, signal)),
};
const clock = testClock();
const w = useService({ on: h, clock, settings: { statusCheckIntervalMs: 50 }, runtime: { connectors: [wrapped] } });

let keys = 0;
const capture = (payment: string, body: Record<string, unknown> = {}) => w.api.post(`/v1/payments/${payment}/capture`, body, { idempotencyKey: `wcap-${keys++}` });
const requestsAtSimulator = (captureId: string) => sims.host.processors.get('simulator_a')!.captures.requests.get(captureId) ?? 0;
const simCharge = (paymentId: string) => sims.host.processors.get('simulator_a')!.charges.get(paymentId);

async function authorised(amount: number) {
  const order = await newOrder(w.api, { amount, currency: 'EUR', capture_method: 'manual' });
  const res = await pay(w.api, order.id);
  expect(res.body, res.text).toMatchObject({ status: 'requires_capture', connector: 'simulator_a', amount_capturable: amount });
  return { order, payment: res.body };
}

/** Lets the pending capture's check time come, then runs one worker pass. */
async function workerPass() {
  clock.advance(100);
  return w.service.runWorker();
}

describe('pending captures, checked by the worker', () => {
  it('a capture whose answer was lost is found at the processor and settled: captured once, booked once', async () => {
    clock.set(Date.now());
    const { order, payment } = await authorised(1800);
    const before = await availableOf(w.api);
    captureAnswer = async (real) => {
      await real();
      return { kind: 'error', code: 'timeout', message: 'the answer was lost' };
    };
    const res = await capture(payment.id);
    captureAnswer = undefined;
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'pending', amount: 1800 });
    expect(await availableOf(w.api)).toBe(before);

    const pass = await workerPass();
    expect(pass.voids?.captures).toBeGreaterThanOrEqual(1);
    expect((await w.api.get(`/v1/captures/${res.body.id}`)).body).toMatchObject({ status: 'succeeded', connector_reference: expect.any(String) });
    expect(requestsAtSimulator(res.body.id)).toBe(1);
    expect(await simCharge(payment.id)).toMatchObject({ state: 'CAPTURED', captured_minor: 1800 });
    expect((await w.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'succeeded', amount_captured: 1800 });
    expect((await w.api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 1800 });
    expect(await availableOf(w.api)).toBe(before + 1800);
    expect(await eventTypesOf(w.api, res.body.id)).toEqual(['capture.created', 'capture.succeeded']);
    await expectLedgerClean(h.db, w.tenant.accountId);
    clock.reset();
  });

  it('a capture the processor never received is sent again under the same id', async () => {
    clock.set(Date.now());
    const { payment } = await authorised(900);
    captureAnswer = async () => ({ kind: 'error', code: 'timeout', message: 'lost on the way' });
    const res = await capture(payment.id, { amount: 500, final_capture: false });
    captureAnswer = undefined;
    expect(res.body).toMatchObject({ status: 'pending', amount: 500 });
    expect(requestsAtSimulator(res.body.id)).toBe(0);

    await workerPass();
    expect((await w.api.get(`/v1/captures/${res.body.id}`)).body.status).toBe('succeeded');
    expect(requestsAtSimulator(res.body.id)).toBe(1);
    expect((await w.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'requires_capture', amount_captured: 500, amount_capturable: 400 });
    // A second pass has nothing left to check, and sends nothing.
    await workerPass();
    expect(requestsAtSimulator(res.body.id)).toBe(1);
    clock.reset();
  });
});

describe('an authorisation partly captured, past capture_before', () => {
  it('is closed at what was captured: succeeded, its order paid with that, nothing voided or booked again', async () => {
    clock.set(Date.now());
    const { order, payment } = await authorised(3000);
    expect((await capture(payment.id, { amount: 1200, final_capture: false })).body.status).toBe('succeeded');
    const booked = await availableOf(w.api);

    clock.set(Date.parse(payment.capture_before) - 1000);
    await w.service.runWorker();
    expect((await w.api.get(`/v1/payments/${payment.id}`)).body.status).toBe('requires_capture');

    clock.set(Date.parse(payment.capture_before) + 1000);
    expect((await w.service.runWorker()).voids?.closed).toBeGreaterThanOrEqual(1);
    expect((await w.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'succeeded', amount_captured: 1200, amount_capturable: 0, cancellation_reason: null });
    expect((await w.api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 1200 });
    expect(await eventTypesOf(w.api, payment.id)).toEqual(['payment.created', 'payment.authorized', 'payment.succeeded']);
    expect(await availableOf(w.api)).toBe(booked);
    // The processor's record: what was captured stays, nothing voided.
    expect(await simCharge(payment.id)).toMatchObject({ state: 'AUTHORISED', captured_minor: 1200 });
    const late = await capture(payment.id, { amount: 100 });
    expect(late.status).toBe(422);
    expect((await w.service.runWorker()).voids).toMatchObject({ closed: 0 });
    await expectLedgerClean(h.db, w.tenant.accountId);
    clock.reset();
  });
});
