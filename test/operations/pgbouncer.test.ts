// The service behind PgBouncer in transaction mode (each transaction may get another server
// connection): with DATABASE_PREPARED_STATEMENTS=unnamed a burst of concurrent orders all succeed
// and the worker delivers their events, with no prepared-statement error logged; start-up
// migrations run side by side through the pooler; and `unnamed` sends no named statement even on
// the raw fast paths, which `named` does.
import crypto from 'node:crypto';
import pg from 'pg';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { ADMIN_URL, call, createTenant, isPostgres, orderBody, rowsOf, startTestService } from '../support/helpers.js';
import { useDatabase } from '../support/fixtures.js';
import { startChild } from '../support/processes.js';
import { pgbouncerRuns, usePgBouncer } from '../support/pgbouncer.js';
import { Receiver } from '../support/webhooks.js';
import { openPostgres, runMigrations, type PreparedStatements } from '../../src/storage/db.js';

const PREPARED_STATEMENT_ERROR = /prepared statement/i;

describe.skipIf(!pgbouncerRuns)('through PgBouncer in transaction mode', () => {
  const pooler = usePgBouncer();
  const h = useDatabase({ postgresOnly: true });

  it('the pooler hands a named statement of one client to another: what `unnamed` is for', async () => {
    const url = pooler.through(h.databaseUrl!);
    const [a, b] = [new pg.Client(url), new pg.Client(url)];
    await Promise.all([a.connect(), b.connect()]);
    try {
      const probe = { name: `probe_${crypto.randomBytes(4).toString('hex')}`, text: 'SELECT $1::int AS n', values: [1] };
      await a.query(probe);
      // b has never prepared it; the idle server connection a used is the one b gets next.
      const second = await b.query(probe).then(() => undefined, (err: Error) => err.message);
      expect(second).toMatch(/already exists/);
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  });

  it('40 concurrent orders: 40 × 201, their webhooks delivered by the worker, no prepared-statement error', async () => {
    const tenant = await createTenant(h.database);
    const receiver = h.track(await Receiver.start());
    const child = h.track(
      await startChild({ DATABASE_URL: pooler.through(h.databaseUrl!), DATABASE_PREPARED_STATEMENTS: 'unnamed', ROLES: 'api,worker', LOG_LEVEL: 'info', WEBHOOK_POLL_INTERVAL_MS: '50' }, 90_000),
    );
    const endpoint = await call(child.url, 'POST', '/v1/webhook-endpoints', { key: tenant.testKey, body: { url: receiver.url, enabled_events: ['payment_order.created'] } });
    expect(endpoint.status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => call(child.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: `burst-${i}`, body: orderBody() })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(201));
    const [{ n }] = (await rowsOf(h.database, sql`SELECT count(*)::int AS n FROM payment_orders`)) as [{ n: number }];
    expect(n).toBe(40);
    await receiver.waitFor(() => new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size === 40, 20_000);
    expect(child.output()).not.toMatch(PREPARED_STATEMENT_ERROR);
  }, 150_000);

  it('start-up migrations of several processes at once on a new database go one after the other through the pooler', async () => {
    const name = `po_test_migrate_${crypto.randomBytes(4).toString('hex')}`;
    const admin = new pg.Client(ADMIN_URL);
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    const databases = await Promise.all([1, 2, 3].map(() => openPostgres(pooler.through(url.toString()), { poolSize: 2, preparedStatements: 'unnamed' })));
    try {
      await Promise.all(databases.map(runMigrations));
      const applied = await rowsOf(databases[0]!, sql`SELECT count(*)::int AS n, count(DISTINCT hash)::int AS distinct_hashes FROM drizzle.__drizzle_migrations`);
      expect(applied[0]!.n).toBeGreaterThan(0);
      expect(applied[0]!.distinct_hashes).toBe(applied[0]!.n);
      // and once more: nothing left to apply
      await runMigrations(databases[1]!);
      expect((await rowsOf(databases[0]!, sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`))[0]!.n).toBe(applied[0]!.n);
    } finally {
      await Promise.all(databases.map((d) => d.close()));
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});

describe.skipIf(!isPostgres)('DATABASE_PREPARED_STATEMENTS, directly on PostgreSQL', () => {
  const h = useDatabase({ postgresOnly: true });

  /** Prepared statements on the one connection of a pool of one after the fast path and a builder query ran on it. */
  async function preparedAfterUse(mode: PreparedStatements): Promise<string[]> {
    // Directly, even when the suite runs through a pooler: a pooler's server connection is shared,
    // and would show statements other clients prepared on it.
    const direct = new URL(ADMIN_URL);
    direct.pathname = new URL(h.databaseUrl!).pathname;
    const database = await openPostgres(direct.toString(), { poolSize: 1, preparedStatements: mode });
    try {
      const tenant = await createTenant(database);
      const service = await startTestService({ database, url: direct.toString(), drop: async () => {} });
      try {
        const order = await call(service.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: 'one', body: orderBody() });
        expect(order.status).toBe(201);
      } finally {
        await service.close();
      }
      const rows = await rowsOf(database, sql`SELECT name FROM pg_prepared_statements`);
      return rows.map((r) => r.name as string);
    } finally {
      await database.close();
    }
  }

  it('named: the fast path and the query builder run named statements', async () => {
    const names = await preparedAfterUse('named');
    expect(names).toContain('create_payment_orders_v5');
    expect(names.some((n) => /^s\d+$/.test(n))).toBe(true);
  });

  it('unnamed: not one named statement, the fast path included', async () => {
    expect(await preparedAfterUse('unnamed')).toEqual([]);
  });
});
