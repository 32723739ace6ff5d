// The storage layer of authorise-and-capture (docs/authorise-and-capture.md), before its endpoints:
// a succeeded automatic payment counts its amount as captured (general and one-statement paths);
// an order whose capture_method is manual (set in the database, as its endpoint will) has its
// payment authorised only — requires_capture, the whole amount capturable until capture_before,
// event payment.authorized, its order still processing, nothing booked; and the state tables.
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CAPTURE_WINDOW_MS } from '../../src/connectors/types.js';
import { captureStates } from '../../src/domain/captures/state.js';
import { paymentStates } from '../../src/domain/payments/state.js';
import { parseId } from '../../src/kernel/ids.js';
import { paymentOrders, payments } from '../../src/storage/schema.js';
import { useService } from '../support/fixtures.js';
import { CARDS, eventTypesOf, newOrder, orderAndPay, pay } from '../support/payments.js';

const h = useService();
const { api } = h;

const rowOf = async (id: string) => (await h.db.select().from(payments).where(eq(payments.id, parseId('pay', id)!)))[0]!;

describe('payments: authorisation, stored', () => {
  it('an automatic payment that succeeds has its amount captured', async () => {
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 1800 });
    expect(payment.status).toBe('succeeded');
    expect(await rowOf(payment.id)).toMatchObject({ captureMethod: 'automatic', amountCaptured: 1800, amountCapturable: 0, captureBefore: null, cancellationReason: null });
  });

  it('a payment of a manual order is authorised only: requires_capture, capturable until capture_before, nothing booked', async () => {
    const order = await newOrder(api, { amount: 4200, currency: 'EUR' });
    const orderUuid = parseId('ord', order.id)!;
    await h.db.update(paymentOrders).set({ captureMethod: 'manual' }).where(and(eq(paymentOrders.id, orderUuid)));
    const before = (await api.get('/v1/balance')).body;
    const started = Date.now();
    const res = await pay(api, order.id, CARDS.success);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'requires_capture', connector: 'simulator_a' });
    expect(res.body.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'succeeded' })]);

    const row = await rowOf(res.body.id);
    expect(row).toMatchObject({ captureMethod: 'manual', amountCapturable: 4200, amountCaptured: 0, nextStatusCheckAt: null });
    const lapse = row.captureBefore!.getTime() - started;
    expect(lapse).toBeGreaterThan(DEFAULT_CAPTURE_WINDOW_MS - 60_000);
    expect(lapse).toBeLessThan(DEFAULT_CAPTURE_WINDOW_MS + 60_000);

    expect(await eventTypesOf(api, res.body.id)).toEqual(['payment.created', 'payment.authorized']);
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'processing', amount_paid: 0 });
    expect((await api.get('/v1/balance')).body).toEqual(before);
    // Refunds draw on captured money only.
    const refund = await api.post('/v1/refunds', { payment: res.body.id }, { idempotencyKey: `refund-${res.body.id}` });
    expect(refund.status, refund.text).toBe(422);
    expect(refund.body.error.code).toBe('invalid_state');
    // Nor does the test helper settle it: only its captures or its void will.
    const resolved = await api.post(`/v1/test-helpers/payments/${res.body.id}/resolve`, { outcome: 'succeeded' });
    expect(resolved.status, resolved.text).toBe(422);
    expect(resolved.body.error.code).toBe('invalid_state');
    expect((await rowOf(res.body.id)).status).toBe('requires_capture');
  });

  it('the card whose captures are declined authorises like any success card', async () => {
    const order = await newOrder(api, { amount: 900 });
    await h.db.update(paymentOrders).set({ captureMethod: 'manual' }).where(eq(paymentOrders.id, parseId('ord', order.id)!));
    const res = await pay(api, order.id, '4000000000000366');
    expect(res.body.status, res.text).toBe('requires_capture');
  });
});

describe('payment and capture state tables', () => {
  it('authorised → succeeded or canceled; any state not final → failed; canceled is final', () => {
    expect(paymentStates.sourcesOf('requires_capture')).toEqual(['pending', 'requires_action']);
    expect(paymentStates.sourcesOf('canceled')).toEqual(['requires_action', 'requires_capture']);
    expect(paymentStates.sourcesOf('failed')).toEqual(['pending', 'requires_action', 'requires_capture', 'succeeded']);
    expect(paymentStates.can('canceled', 'succeeded')).toBe(false);
    expect(paymentStates.is('canceled', 'final')).toBe(true);
    // What existing operations ask stays as it was: refresh and resolve, refunds, the customer's return.
    expect(['pending', 'requires_action', 'requires_capture', 'succeeded', 'canceled', 'failed'].filter((s) => paymentStates.is(s, 'awaiting'))).toEqual(['pending', 'requires_action']);
    expect(['requires_capture', 'canceled'].filter((s) => paymentStates.is(s, 'captured') || paymentStates.is(s, 'withCustomer'))).toEqual([]);
    expect(() => paymentStates.assert('canceled', 'requires_capture', 'authorize')).toThrow();
    expect(captureStates.sourcesOf('succeeded')).toEqual(['pending']);
    expect(captureStates.is('failed', 'final')).toBe(true);
  });
});
