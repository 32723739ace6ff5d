// The worker expires open payment orders at their expires_at: version + 1 and a
// payment_order.expired event in the same transaction, never twice, never a closed order.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { startWorker } from '../../src/worker/worker.js';
import { orderBody } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';

const h = useService();

async function expiredEvents(orderId: string): Promise<number> {
  const [row] = await h.query(sql`SELECT count(*)::int AS n FROM events WHERE type = 'payment_order.expired' AND object_id = ${orderId}`);
  return Number(row!.n);
}
const runAt = (at: Date) => h.service.runWorker(at);
const newApi = async () => (await h.newTenant()).api;

describe('worker: payment order expiry', () => {
  it('expires due open orders with version + 1 and an event; leaves the rest alone', async () => {
    const api = await newApi();
    const expiresAt = new Date(Date.now() + 120_000);
    const due = [];
    for (let i = 0; i < 2; i++) {
      const res = await api.post('/v1/payment-orders', orderBody({ expires_at: expiresAt.toISOString() }));
      expect(res.status).toBe(201);
      due.push(res.body);
    }
    const { body: cancelled } = await api.post('/v1/payment-orders', orderBody({ expires_at: expiresAt.toISOString() }));
    expect((await api.post(`/v1/payment-orders/${cancelled.id}/cancel`, undefined, { idempotencyKey: undefined })).status).toBe(200);
    const { body: later } = await api.post('/v1/payment-orders', orderBody()); // default: 24 hours

    // Before its time nothing happens.
    expect(await h.service.runWorker()).toMatchObject({ expiredOrders: 0 });
    expect((await api.get(`/v1/payment-orders/${due[0].id}`)).body).toMatchObject({ status: 'open', version: 1 });

    const future = new Date(expiresAt.getTime() + 60_000);
    const done = await runAt(future);
    expect(done.expiredOrders).toBe(2);

    for (const order of due) {
      const current = (await api.get(`/v1/payment-orders/${order.id}`)).body;
      expect(current).toMatchObject({ status: 'expired', version: 2, expires_at: order.expires_at, amount: order.amount });
      expect(current.updated_at).toBe(future.toISOString());
      expect(await expiredEvents(order.id)).toBe(1);
      const events = await api.get('/v1/events?type=payment_order.expired&limit=100');
      const event = events.body.data.find((e: any) => e.data.object.id === order.id);
      expect(event).toMatchObject({
        type: 'payment_order.expired',
        livemode: false,
        created_at: future.toISOString(),
        data: { object: { id: order.id, status: 'expired', version: 2 } },
        request: { id: null, idempotency_key: null },
      });
    }
    expect((await api.get(`/v1/payment-orders/${cancelled.id}`)).body).toMatchObject({ status: 'cancelled', version: 2 });
    expect(await expiredEvents(cancelled.id)).toBe(0);
    expect((await api.get(`/v1/payment-orders/${later.id}`)).body).toMatchObject({ status: 'open', version: 1 });
    expect(await expiredEvents(later.id)).toBe(0);

    // A second pass has nothing left to do; an expired order cannot be cancelled any more.
    expect((await runAt(future)).expiredOrders).toBe(0);
    for (const order of due) expect(await expiredEvents(order.id)).toBe(1);
    const refused = await api.post(`/v1/payment-orders/${due[0].id}/cancel`, undefined, { idempotencyKey: undefined });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('invalid_state');
  });

  it('expires exactly at expires_at, not a millisecond before', async () => {
    const api = await newApi();
    const expiresAt = new Date(Date.now() + 120_000);
    const { body: order } = await api.post('/v1/payment-orders', orderBody({ expires_at: expiresAt.toISOString() }));
    expect((await runAt(new Date(expiresAt.getTime() - 1))).expiredOrders).toBe(0);
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    expect((await runAt(expiresAt)).expiredOrders).toBe(1);
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('expired');
  });

  it('never expires an order twice when several workers run at once', async () => {
    const api = await newApi();
    const expiresAt = new Date(Date.now() + 120_000);
    // More than one batch (100), so the workers take turns over several transactions.
    const ids: string[] = [];
    for (let chunk = 0; chunk < 5; chunk++) {
      const created = await Promise.all(
        Array.from({ length: 50 }, () => api.post('/v1/payment-orders', orderBody({ expires_at: expiresAt.toISOString() }))),
      );
      for (const res of created) {
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
    }
    const future = new Date(expiresAt.getTime() + 1_000);
    const results = await Promise.all([runAt(future), runAt(future), runAt(future), runAt(future)]);
    expect(results.reduce((sum, r) => sum + r.expiredOrders, 0)).toBe(ids.length);

    const perOrder = await h.query(sql`
      SELECT object_id, count(*)::int AS n FROM events
      WHERE type = 'payment_order.expired' AND object_id IN ${ids.length ? sql`(${sql.join(ids.map((id) => sql`${id}`), sql`, `)})` : sql`(NULL)`}
      GROUP BY object_id`);
    expect(perOrder).toHaveLength(ids.length);
    for (const row of perOrder) expect(row.n).toBe(1);
    const [states] = await h.query(sql`
      SELECT count(*) FILTER (WHERE status = 'expired' AND version = 2)::int AS expired, count(*)::int AS total
      FROM payment_orders WHERE expires_at = ${expiresAt.toISOString()}`);
    expect(states).toEqual({ expired: ids.length, total: ids.length });
  });

  it('runs on its own in the worker role and expires an order once its time has come', async () => {
    const api = await newApi();
    const worker = await h.startService({ overrides: { roles: ['worker'], workerIntervalMs: 50, logLevel: 'warn' } });
    try {
      const expiresAt = new Date(Date.now() + 3_000);
      const { body: order } = await api.post('/v1/payment-orders', orderBody({ expires_at: expiresAt.toISOString() }));
      expect(order, JSON.stringify(order)).toMatchObject({ status: 'open' });
      await expect
        .poll(async () => (await api.get(`/v1/payment-orders/${order.id}`)).body.status, { timeout: 20_000, interval: 100 })
        .toBe('expired');
      const current = (await api.get(`/v1/payment-orders/${order.id}`)).body;
      expect(Date.parse(current.updated_at)).toBeGreaterThanOrEqual(expiresAt.getTime());
      expect(current.version).toBe(2);
      expect(await expiredEvents(order.id)).toBe(1);
    } finally {
      await worker.close();
    }
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('worker: what it says', () => {
  it('logs a pass that did work, not an idle one; backs off while the database is away and says when it is back', async () => {
    const api = await newApi();
    const lines: { level: string; msg: string; fields: Record<string, unknown>; at: number }[] = [];
    const capture = (level: string) => (fields: unknown, msg?: string) =>
      lines.push(typeof fields === 'string' ? { level, msg: fields, fields: {}, at: Date.now() } : { level, msg: msg ?? '', fields: fields as Record<string, unknown>, at: Date.now() });
    // The same database, unreachable at will: every use fails as a refused connection does.
    let down = false;
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const real = h.db;
    const db = new Proxy(real, {
      get(target, prop) {
        if (down) return () => Promise.reject(refused);
        const value = Reflect.get(target, prop);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const worker = startWorker({ db, log: { info: capture('info'), warn: capture('warn'), error: capture('error') } }, 50);
    try {
      await sleep(300);
      expect(lines.filter((l) => l.msg.startsWith('worker pass'))).toEqual([]);
      const { body: order } = await api.post('/v1/payment-orders', orderBody({ expires_at: new Date(Date.now() + 500).toISOString() }));
      await expect.poll(() => lines.find((l) => l.msg === 'worker pass'), { timeout: 10_000 }).toBeTruthy();
      expect(lines.find((l) => l.msg === 'worker pass')!.fields).toMatchObject({ expiredOrders: 1 });
      expect(await expiredEvents(order.id)).toBe(1);

      down = true;
      await expect.poll(() => lines.filter((l) => l.level === 'warn').length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
      const failures = lines.filter((l) => l.level === 'warn');
      expect(failures[0]).toMatchObject({ msg: 'worker pass failed: database unavailable; backing off', fields: { failed_passes: 1 } });
      // Each failure waits longer than the last (50 ms between passes when all is well).
      expect(failures[2]!.at - failures[1]!.at).toBeGreaterThan(failures[1]!.at - failures[0]!.at);
      down = false;
      await expect.poll(() => lines.find((l) => l.msg === 'worker pass succeeded again'), { timeout: 10_000 }).toBeTruthy();
    } finally {
      down = false;
      await worker.stop();
    }
  });
});
