// Graceful shutdown of a real service process on a real SIGTERM: /ready answers 503 at once, the
// listener stops taking connections after SHUTDOWN_DELAY_MS, the request in flight finishes with
// its answer, the worker stops claiming and hands back the webhook lease it holds (instead of
// leaving it to run out), each step is logged, and the process exits 0 within the grace period; one Ctrl-C relayed twice (terminal and npm) is one signal.
// PostgreSQL only: the test reads the child's database while the child runs.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, createTestDatabase, isPostgres, orderBody, type Tenant, type TestDatabase } from '../support/helpers.js';
import { startChild, stopChild, type Child } from '../support/processes.js';
import { Receiver } from '../support/webhooks.js';

const GRACE_MS = 6000;
const DELAY_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!isPostgres)('graceful shutdown on SIGTERM', () => {
  let testDb: TestDatabase;
  let tenant: Tenant;
  let receiver: Receiver;
  let child: Child | undefined;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    tenant = await createTenant(testDb.database, 'Shutdown tenant');
    receiver = await Receiver.start();
    // The receiver holds every delivery: the worker's lease stays held until the shutdown.
    receiver.answer = () => ({ status: 200, delayMs: 60_000 });
  });
  afterAll(async () => {
    await stopChild(child);
    await receiver?.close();
    await testDb?.drop();
  });

  const deliveries = async () =>
    (
      (await testDb.database.db.execute(sql`
        SELECT status, attempts, lease_id, next_attempt_at <= now() AS due FROM webhook_deliveries`)) as unknown as {
        rows: { status: string; attempts: number; lease_id: string | null; due: boolean }[];
      }
    ).rows;

  it('drains: /ready 503, listener closed, the request in flight answered, the webhook lease handed back, exit 0', async () => {
    child = await startChild({
      DATABASE_URL: testDb.url!,
      ROLES: 'api,worker',
      LOG_LEVEL: 'info',
      SHUTDOWN_DELAY_MS: String(DELAY_MS),
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
      // Every processor call takes two seconds: a payment is in flight when the signal comes.
      SIMULATOR_LATENCY_MS: '2000',
      // Left alone, the held delivery's lease would last two minutes.
      WEBHOOK_TIMEOUT_MS: '60000',
      WEBHOOK_LEASE_MS: '120000',
    });
    const url = child.url;
    const endpoint = await call(url, 'POST', '/v1/webhook-endpoints', { key: tenant.testKey, body: { url: receiver.url, enabled_events: ['payment_order.created'] } });
    expect(endpoint.status).toBe(201);
    const order = await call(url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: 'shutdown-order', body: orderBody() });
    expect(order.status).toBe(201);
    await receiver.waitFor(() => receiver.requests.length === 1);
    expect(await deliveries()).toEqual([{ status: 'pending', attempts: 0, lease_id: expect.any(String), due: false }]);

    const inFlight = call(url, 'POST', '/v1/payments', {
      key: tenant.testKey,
      idempotencyKey: 'shutdown-payment',
      body: { payment_order: order.body.id, payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' } } },
    });
    await sleep(300);
    const signalledAt = Date.now();
    child.process.kill('SIGTERM');
    await sleep(100);

    // Draining: not ready, yet still serving while load balancers take notice.
    const ready = await call(url, 'GET', '/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.error).toMatchObject({ type: 'processing', code: 'service_unavailable' });
    expect(ready.headers.get('retry-after')).toBeTruthy();
    expect((await call(url, 'GET', '/health')).status).toBe(200);

    // After the delay the listener takes no new connection.
    await sleep(DELAY_MS + 300 - (Date.now() - signalledAt));
    await expect(fetch(`${url}/health`)).rejects.toThrow();

    // The request in flight is answered in full.
    const paid = await inFlight;
    expect(paid.status).toBe(201);
    expect(paid.body.status).toBe('succeeded');

    const exit = await child.exited;
    const stoppedAfterMs = Date.now() - signalledAt;
    expect(exit, child.output()).toEqual({ code: 0, signal: null });
    expect(stoppedAfterMs).toBeLessThan(GRACE_MS + 3000);

    // The held delivery is due again at once, for any worker, and its lost attempt does not count.
    expect(await deliveries()).toEqual([{ status: 'pending', attempts: 0, lease_id: null, due: true }]);

    const steps = [
      'shutdown: started; /ready answers 503',
      'shutdown: listener closed to new connections',
      'shutdown: worker stopped claiming',
      'shutdown: webhook delivery stopped claiming',
      'shutdown: HTTP requests finished',
      'shutdown: webhook attempts still in flight given up; their leases handed back',
      'shutdown: done',
    ];
    const output = child.output();
    for (const step of steps) expect(output, output).toContain(step);
    expect(output).toContain('"signal":"SIGTERM"');
    // The worker told of the pass in which it dispatched the order's event to the endpoint.
    expect(output).toMatch(/"webhooks":\{"dispatchedEvents":[1-9]\d*,"attempts":0\},"msg":"worker pass"/);
  }, 60_000);

  it('takes one Ctrl-C that arrives twice (from the terminal, then relayed by npm start) as one: it still drains, exit 0', async () => {
    await stopChild(child);
    child = await startChild({ DATABASE_URL: testDb.url!, LOG_LEVEL: 'info', SHUTDOWN_DELAY_MS: String(DELAY_MS), SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    child.process.kill('SIGINT');
    await sleep(50);
    child.process.kill('SIGINT');
    expect(await child.exited, child.output()).toEqual({ code: 0, signal: null });
    expect(child.output()).toContain('shutdown: done');
    expect(child.output()).not.toContain('second signal');
  }, 60_000);
});
