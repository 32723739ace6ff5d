// Payments whose outcome comes later: the pending card (settled by the test helper, or by the
// simulated processor after its delay, reported through our inbound webhook) and the timeout card
// (the processor charges but does not answer in time; the truth is learnt through ?refresh=true,
// the worker's status check, or the processor's webhook).
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { CARDS, eventTypesOf, orderAndPay, availableOf } from '../support/payments.js';
import { eventually } from '../support/helpers.js';
import { usePendingServices } from '../support/fixtures.js';

// Pending charges on `manual` wait a minute: only the helper, a refresh or the worker settles them.
// On `automatic` they settle after 1.5 s, reported by webhook: well after the 300 ms connector
// timeout, so that a timed-out request has answered `pending` before the report can settle the
// payment, even on a loaded machine.
const { h, manual, api, autoApi } = usePendingServices(1500, { settings: { statusCheckIntervalMs: 100 } });

describe('pending card', () => {
  it('answers pending at the connector; the test helper settles it as succeeded, once', async () => {
    const before = await availableOf(api);
    const { order, payment } = await orderAndPay(api, CARDS.pending);
    expect(payment).toMatchObject({ status: 'pending', connector: 'simulator_a', version: 2 });
    expect(payment.connector_reference).toMatch(/^simulator_a_ch_/);
    expect(payment.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'pending' })]);
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('processing');
    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.pending']);

    // Still pending at the processor: a refresh changes nothing.
    const refreshed = await api.get(`/v1/payments/${payment.id}?refresh=true`);
    expect(refreshed.body).toMatchObject({ status: 'pending', version: 2 });

    const resolved = await api.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'succeeded' });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.body).toMatchObject({ id: payment.id, status: 'succeeded', version: 3 });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: order.amount });
    expect((await availableOf(api)) - before).toBe(order.amount);

    // The processor's webhook arrives as well, and is received once without acting twice.
    const [received] = await eventually(
      () => h.query(sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${payment.id}`),
      (rows) => Number(rows[0]!.n) >= 1,
    );
    expect(Number(received!.n)).toBe(1);
    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded']);
    expect((await api.get(`/v1/payments/${payment.id}`)).body.version).toBe(3);
    expect((await availableOf(api)) - before).toBe(order.amount);
  });

  it('the test helper can make it fail: declined, and the order opens again', async () => {
    const { order, payment } = await orderAndPay(api, CARDS.pending);
    const resolved = await api.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'failed' });
    expect(resolved.body).toMatchObject({ status: 'failed', failure_code: 'card_declined' });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.failed']);
  });

  it('settles by itself after the configured delay, through the inbound webhook', async () => {
    const { order, payment } = await orderAndPay(autoApi, CARDS.pending);
    expect(payment.status).toBe('pending');
    const settled = await eventually(
      () => autoApi.get(`/v1/payments/${payment.id}`),
      (res) => res.body.status !== 'pending',
    );
    expect(settled.body).toMatchObject({ status: 'succeeded', version: 3 });
    expect((await autoApi.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
    const [row] = await h.query(sql`SELECT connector, event_id FROM connector_webhook_events WHERE object_id = ${payment.id}`);
    expect(row).toMatchObject({ connector: 'simulator_a' });
    // Our own events follow, carrying no request (the processor caused them).
    const events = (await autoApi.get('/v1/events?type=payment.succeeded')).body.data.filter((e: any) => e.data.object.id === payment.id);
    expect(events).toHaveLength(1);
    expect(events[0].request).toEqual({ id: null, idempotency_key: null });
  });
});

describe('timeout card', () => {
  it('stays pending after the timeout, with no fallback; ?refresh=true learns that it succeeded', async () => {
    const before = await availableOf(api);
    const { order, payment } = await orderAndPay(api, CARDS.timeout);
    expect(payment).toMatchObject({ status: 'pending', connector: 'simulator_a', connector_reference: null });
    // The processor may have acted: the router must not try simulator_b.
    expect(payment.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'timeout', error_code: 'timeout' })]);
    expect(manual.service.simulator('simulator_b').chargeRequests.has(payment.id)).toBe(false);

    const plain = await api.get(`/v1/payments/${payment.id}`);
    expect(plain.body.status).toBe('pending');
    const refreshed = await api.get(`/v1/payments/${payment.id}?refresh=true`);
    expect(refreshed.body).toMatchObject({ status: 'succeeded', connector: 'simulator_a' });
    expect(refreshed.body.connector_reference).toMatch(/^simulator_a_ch_/);
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
    expect((await availableOf(api)) - before).toBe(order.amount);
    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded']);
  });

  it("the worker's status check learns the outcome", async () => {
    const { order, payment } = await orderAndPay(api, CARDS.timeout);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const pass = await manual.service.runWorker();
    expect(pass.statusChecks!.payments).toBeGreaterThanOrEqual(1);
    expect((await api.get(`/v1/payments/${payment.id}`)).body.status).toBe('succeeded');
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
    // Nothing left to check for it.
    const [row] = await h.query(sql`SELECT next_status_check_at FROM payments WHERE id = ${parseId('pay', payment.id)!}`);
    expect(row!.next_status_check_at).toBeNull();
  });

  it("the processor's webhook reports the outcome", async () => {
    const { order, payment } = await orderAndPay(autoApi, CARDS.timeout);
    expect(payment.status).toBe('pending');
    const settled = await eventually(
      () => autoApi.get(`/v1/payments/${payment.id}`),
      (res) => res.body.status !== 'pending',
    );
    expect(settled.body.status).toBe('succeeded');
    expect((await autoApi.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
  });
});
