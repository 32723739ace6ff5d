// Crash safety of the atomic phases (API.md §4): the service runs as a real OS process, is killed
// with SIGKILL between the phases (the CRASH_AFTER fault-injection switch), restarted without it,
// and the same request is retried with the same Idempotency-Key. It must resume and never charge
// twice: one payment, one charge at the simulated processor (its own server, which outlives the
// crash), the order paid, the balance credited once. PostgreSQL only (several processes).
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEVELOPMENT_SIMULATOR_SECRET } from '../src/config.js';
import { startSimulatorServer, type SimulatorServer } from '../src/connectors/simulator/server.js';
import { parseId } from '../src/kernel/ids.js';
import { call, isPostgres, orderBody, type Tenant } from './helpers.js';
import { CARDS, cardMethod } from './payments.helpers.js';
import { startChild, stopChild, sendWhileLocked } from './processes.helpers.js';
import { useDatabase } from './fixtures.js';
import { expectLedgerClean } from './payouts.helpers.js';

describe.skipIf(!isPostgres)('a service killed between the phases resumes on retry and never charges twice', () => {
  const h = useDatabase({ postgresOnly: true });
  let tenant: Tenant;
  let simulator: SimulatorServer;
  beforeAll(async () => {
    tenant = await h.createTenant('Crash tenant');
    simulator = h.track(await startSimulatorServer({ familySecret: DEVELOPMENT_SIMULATOR_SECRET, pendingDelayMs: 60_000 }));
  });

  // A short lock needs a connector timeout to match (config.ts refuses a lock the route could outlast).
  const env = () => ({ DATABASE_URL: h.databaseUrl!, SIMULATOR_URL: simulator.url, IDEMPOTENCY_LOCK_TIMEOUT_S: '3', CONNECTOR_TIMEOUT_MS: '700' });
  const charges = (reference: string) =>
    [...simulator.host.processors.values()].reduce((n, p) => n + (p.chargeRequests.get(reference) ?? 0), 0);
  const held = async (reference: string) => (await Promise.all([...simulator.host.processors.values()].map((p) => p.charges.has(reference)))).filter(Boolean).length;

  async function crashDuringPayment(crashAfter: string, card: string) {
    const crashing = h.track(await startChild({ ...env(), CRASH_AFTER: crashAfter }));
    const order = await call(crashing.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: crypto.randomUUID(), body: orderBody({ amount: 4321 }) });
    expect(order.status, order.text).toBe(201);
    const idempotencyKey = `crash-${crashAfter}-${order.body.id}`;
    const body = { payment_order: order.body.id, payment_method: cardMethod(card) };
    const attempt = await call(crashing.url, 'POST', '/v1/payments', { key: tenant.testKey, idempotencyKey, body }).catch((err: Error) => err);
    expect(attempt).toBeInstanceOf(Error); // the connection died with the process
    expect(await crashing.exited).toEqual({ code: null, signal: 'SIGKILL' });

    // What the first phase left behind: a pending payment, the order processing, the recovery point.
    const [payment] = await h.query(sql`SELECT id, status, connector FROM payments WHERE payment_order_id = ${parseId('ord', order.body.id)!}`);
    expect(payment).toMatchObject({ status: 'pending', connector: null });
    const [key] = await h.query(sql`SELECT recovery_point, response_status FROM idempotency_keys WHERE key = ${idempotencyKey}`);
    expect(key).toEqual({ recovery_point: `payment_created:${payment!.id}`, response_status: null });
    const [orderRow] = await h.query(sql`SELECT status FROM payment_orders WHERE id = ${parseId('ord', order.body.id)!}`);
    expect(orderRow!.status).toBe('processing');
    return { order: order.body, idempotencyKey, body, paymentUuid: String(payment!.id) };
  }

  async function retry(idempotencyKey: string, body: unknown) {
    const restarted = h.track(await startChild(env()));
    const res = await sendWhileLocked(() => call(restarted.url, 'POST', '/v1/payments', { key: tenant.testKey, idempotencyKey, body }));
    const replay = await call(restarted.url, 'POST', '/v1/payments', { key: tenant.testKey, idempotencyKey, body });
    await stopChild(restarted);
    return { res, replay };
  }

  async function expectPaidOnce(orderId: string, paymentId: string, amount: number) {
    const rows = await h.query(sql`SELECT id FROM payments WHERE payment_order_id = ${parseId('ord', orderId)!}`);
    expect(rows).toHaveLength(1);
    const [order] = await h.query(sql`SELECT status, amount_paid FROM payment_orders WHERE id = ${parseId('ord', orderId)!}`);
    expect(order).toEqual({ status: 'paid', amount_paid: amount });
    const entries = await h.query(sql`SELECT type FROM journal_entries WHERE source_id = ${parseId('pay', paymentId)!}`);
    expect(entries).toEqual([{ type: 'payment' }]);
    const events = await h.query(sql`SELECT type FROM events WHERE object_id = ${paymentId} ORDER BY id`);
    expect(events.map((e) => e.type)).toEqual(['payment.created', 'payment.succeeded']);
    await expectLedgerClean(h.db, tenant.accountId);
  }

  it('killed after the payment was committed, before the connector was called', async () => {
    const crashed = await crashDuringPayment('payment_created', CARDS.success);
    expect(simulator.host.processors.get('simulator_a')!.chargeRequests.size + simulator.host.processors.get('simulator_b')!.chargeRequests.size).toBe(0);

    const { res, replay } = await retry(crashed.idempotencyKey, crashed.body);
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(parseId('pay', res.body.id)).toBe(crashed.paymentUuid);
    expect(res.body).toMatchObject({ status: 'succeeded', connector: 'simulator_a', amount: 4321 });
    expect(charges(res.body.id)).toBe(1);
    expect(await held(res.body.id)).toBe(1);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(res.text);
    expect(charges(res.body.id)).toBe(1);
    await expectPaidOnce(crashed.order.id, res.body.id, 4321);
  }, 120_000);

  it('killed after the processor charged, before the outcome was committed (fallback route included)', async () => {
    // The processor-error card: simulator_a refuses it, simulator_b charges it — then the crash.
    const crashed = await crashDuringPayment('payment_connector_answered', CARDS.processorError);
    const { res } = await retry(crashed.idempotencyKey, crashed.body);
    expect(res.status, res.text).toBe(201);
    expect(parseId('pay', res.body.id)).toBe(crashed.paymentUuid);
    // Resumed by asking the route's connectors: simulator_b holds the charge, so nobody charges again —
    // not even simulator_a, which would now have been asked first.
    expect(res.body).toMatchObject({ status: 'succeeded', connector: 'simulator_b' });
    expect(simulator.host.processors.get('simulator_b')!.chargeRequests.get(res.body.id)).toBe(1);
    expect(simulator.host.processors.get('simulator_a')!.chargeRequests.get(res.body.id)).toBe(1);
    expect(await held(res.body.id)).toBe(1);
    expect(res.body.attempts).toEqual([expect.objectContaining({ connector: 'simulator_b', outcome: 'succeeded' })]);
    await expectPaidOnce(crashed.order.id, res.body.id, 4321);
  }, 120_000);

  it('a refund killed between its phases resumes and refunds once', async () => {
    const first = h.track(await startChild(env()));
    const order = await call(first.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: crypto.randomUUID(), body: orderBody({ amount: 900 }) });
    const payment = await call(first.url, 'POST', '/v1/payments', {
      key: tenant.testKey,
      idempotencyKey: crypto.randomUUID(),
      body: { payment_order: order.body.id, payment_method: cardMethod(CARDS.success) },
    });
    expect(payment.body.status).toBe('succeeded');
    await stopChild(first);

    const crashing = h.track(await startChild({ ...env(), CRASH_AFTER: 'refund_created' }));
    const idempotencyKey = `refund-crash-${payment.body.id}`;
    const body = { payment: payment.body.id, amount: 400 };
    expect(await call(crashing.url, 'POST', '/v1/refunds', { key: tenant.testKey, idempotencyKey, body }).catch((e: Error) => e)).toBeInstanceOf(Error);
    expect((await crashing.exited).signal).toBe('SIGKILL');

    const restarted = h.track(await startChild(env()));
    const res = await sendWhileLocked(() => call(restarted.url, 'POST', '/v1/refunds', { key: tenant.testKey, idempotencyKey, body }));
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'succeeded', amount: 400 });
    await stopChild(restarted);
    const refunds = await h.query(sql`SELECT status FROM refunds WHERE payment_id = ${parseId('pay', payment.body.id)!}`);
    expect(refunds).toEqual([{ status: 'succeeded' }]);
    expect((await simulator.host.processors.get('simulator_a')!.stats()).refunds).toBe(1);
    await expectLedgerClean(h.db, tenant.accountId);
  }, 120_000);
});
