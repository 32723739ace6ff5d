// The production process layout of deploy/ (docs/operations.md, Production deployment), as far as it runs
// without containers: two api processes and one worker process as separate OS processes, on
// PostgreSQL through PgBouncer in transaction mode (directly where PgBouncer is not installed,
// outside CI), with Redis holding the rate-limit budgets and NODE_ENV=production. A payment made
// through one api is read through the other, and its webhooks are delivered by the worker, the
// only process with that role.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, client, createTenant, isPostgres, orderBody, REDIS_URL, TEST_PREPARED_STATEMENTS, type Tenant } from '../support/helpers.js';
import { useDatabase } from '../support/fixtures.js';
import { startChild, type Child } from '../support/processes.js';
import { pgbouncerRuns, usePgBouncer } from '../support/pgbouncer.js';
import { cardMethod, CARDS } from '../support/payments.js';
import { Receiver, verifies } from '../support/webhooks.js';

describe.skipIf(!isPostgres)('deployment layout: api ×2, worker ×1, PgBouncer, Redis', () => {
  const pooler = pgbouncerRuns ? usePgBouncer() : undefined;
  const h = useDatabase({ postgresOnly: true });

  /** The environment every process of the deployment shares (deploy/systemd/service.env.example). */
  function sharedEnv(): Record<string, string> {
    return {
      NODE_ENV: 'production',
      DATABASE_URL: pooler ? pooler.through(h.databaseUrl!) : h.databaseUrl!,
      DATABASE_PREPARED_STATEMENTS: pooler ? 'unnamed' : TEST_PREPARED_STATEMENTS,
      DATABASE_POOL_SIZE: '5',
      REDIS_URL,
      ENCRYPTION_KEYS: `main:${crypto.randomBytes(32).toString('base64')}`,
      VAULT_KEYS: `main:${crypto.randomBytes(32).toString('base64')}`,
      CARD_FINGERPRINT_KEY: crypto.randomBytes(32).toString('base64'),
      // The receiver below is on loopback, which production refuses by default even in test mode.
      WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS: 'allow',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      LOG_LEVEL: 'info',
    };
  }

  it('a payment through one api, read through the other, its webhooks delivered by the worker; /ready on every api', async () => {
    const tenant: Tenant = await createTenant(h.database);
    const env = sharedEnv();
    const processes: Child[] = await Promise.all([
      startChild({ ...env, ROLES: 'api' }, 90_000),
      startChild({ ...env, ROLES: 'api' }, 90_000),
      startChild({ ...env, ROLES: 'worker' }, 90_000),
    ]);
    processes.forEach((p) => h.track(p));
    const [first, second, worker] = processes as [Child, Child, Child];
    const receiver = h.track(await Receiver.start());

    const one = client(first.url, tenant.testKey);
    const other = client(second.url, tenant.testKey);
    const endpoint = await one.post('/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['payment_order.created', 'payment.succeeded'] });
    expect(endpoint.status, endpoint.text).toBe(201);
    const order = await one.post('/v1/payment-orders', orderBody());
    expect(order.status, order.text).toBe(201);
    const payment = await one.post('/v1/payments', { payment_order: order.body.id, payment_method: cardMethod(CARDS.success) });
    expect(payment.status, payment.text).toBe(201);
    expect(payment.body.status).toBe('succeeded');

    const read = await other.get(`/v1/payment-orders/${order.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: order.body.id, status: 'paid' });

    await receiver.waitFor(() => receiver.requests.length >= 2, 20_000);
    const types = receiver.requests.map((r) => JSON.parse(r.body).type).sort();
    expect(types).toEqual(['payment.succeeded', 'payment_order.created']);
    expect(receiver.requests.every((r) => verifies(endpoint.body.secret, r))).toBe(true);

    for (const api of [first, second]) expect((await call(api.url, 'GET', '/ready')).status).toBe(200);
    // Every process is still running, and none logged a database error or printed a key.
    for (const p of processes) {
      expect(p.process.exitCode).toBeNull();
      expect(p.output()).not.toMatch(/prepared statement|sk_test_/);
    }
    expect(worker.url).toBe('');
  }, 180_000);
});
