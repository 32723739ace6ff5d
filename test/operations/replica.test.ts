// Lists read from a streaming replica with read-your-writes (docs/operations.md#a-read-replica),
// against a private primary and replica (scripts/replica.sh) whose replica applies WAL 2 s late:
// the key that just wrote reads the primary and sees its write while a key that did not reads the
// replica (and, being another key of the same account, does not see it yet); once the replica has
// replayed the write the writer reads the replica too; a replica further behind than
// DATABASE_READ_MAX_LAG_MS is skipped; a stopped replica is skipped, every list still a 200.
import crypto from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, eventually, orderBody, startTestService, type TestService } from '../support/helpers.js';
import { Visitor } from '../support/dashboard.js';
import { replicaRuns, replicaSkipReason, useReplica } from '../support/replica.js';
import { issueKey } from '../../src/domain/accounts/service.js';
import { openPostgres, runMigrations, type Database } from '../../src/storage/db.js';


/** db_reads_total by `pool/reason`. */
async function readsServed(service: TestService): Promise<Record<string, number>> {
  const metric = await service.payments.metrics.registry.getSingleMetricAsString('db_reads_total');
  const out: Record<string, number> = {};
  for (const [, pool, reason, value] of metric.matchAll(/^db_reads_total\{pool="(\w+)",reason="(\w+)"\} (\d+)$/gm)) out[`${pool}/${reason}`] = Number(value);
  return out;
}

describe.skipIf(!replicaRuns)(`a read replica with read-your-writes${replicaSkipReason ? ` (skipped: ${replicaSkipReason})` : ''}`, () => {
  const pair = useReplica({ applyDelay: '2s' });
  const name = `po_replica_${crypto.randomBytes(4).toString('hex')}`;
  let database: Database;
  let service: TestService;
  let keys: { writer: string; reader: string };

  beforeAll(async () => {
    const admin = new pg.Client(pair.primaryUrl('postgres'));
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    database = await openPostgres(pair.primaryUrl(name), { poolSize: 5 });
    await runMigrations(database);
    const tenant = await createTenant(database);
    keys = { writer: tenant.testKey, reader: (await issueKey(database.db, tenant.accountId, { livemode: false })).secret };
    await pair.caughtUp();
    service = await startTestService(
      { database, url: pair.primaryUrl(name), drop: async () => {} },
      { overrides: { databaseReadUrl: pair.replicaUrl(name), databaseReadMaxLagMs: 60_000 } },
    );
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await database?.close();
  });

  const list = (key: string, path = '/v1/payment-orders') => call(service.url, 'GET', path, { key });
  /** Lists with `key` until one is answered by `pool`; that answer and the count that went up. */
  async function listFrom(key: string, pool: 'primary' | 'replica', path?: string) {
    const seen = await eventually(
      async () => {
        const before = await readsServed(service);
        const answer = await list(key, path);
        const after = await readsServed(service);
        const grew = Object.keys(after).find((k) => (after[k] ?? 0) > (before[k] ?? 0));
        return { answer, served: grew };
      },
      ({ served }) => served?.startsWith(`${pool}/`) ?? false,
      10_000,
    );
    expect(seen.answer.status).toBe(200);
    expect(seen.served).toMatch(new RegExp(`^${pool}/`));
    return seen;
  }

  it('the writer reads the primary and sees its write; another key reads the replica, which has not replayed it yet', async () => {
    // Before any write the replica answers both (once it has been probed).
    await listFrom(keys.reader, 'replica');
    const order = await call(service.url, 'POST', '/v1/payment-orders', { key: keys.writer, idempotencyKey: 'ryw-1', body: orderBody() });
    expect(order.status).toBe(201);

    const own = await list(keys.writer);
    expect(own.status).toBe(200);
    expect(own.body.data.map((o: { id: string }) => o.id)).toEqual([order.body.id]);
    const other = await listFrom(keys.reader, 'replica');
    // The replica applies WAL 2 s late: the same account's other key does not see the order yet.
    expect(other.served).toBe('replica/caught_up');
    expect(other.answer.body.data).toEqual([]);
    const served = await readsServed(service);
    expect(served['primary/own_write']).toBeGreaterThanOrEqual(1);

    // Once the replica has replayed the write, the writer's lists go to it, and the write is there.
    await pair.caughtUp();
    const later = await listFrom(keys.writer, 'replica');
    expect(later.answer.body.data.map((o: { id: string }) => o.id)).toEqual([order.body.id]);
    // Events and balance transactions follow the same rule.
    await listFrom(keys.writer, 'replica', '/v1/events');
    await listFrom(keys.writer, 'replica', '/v1/balance-transactions');
  }, 60_000);

  it('a replica further behind than DATABASE_READ_MAX_LAG_MS is skipped', async () => {
    const strict = await startTestService(
      { database, url: pair.primaryUrl(name), drop: async () => {} },
      { overrides: { databaseReadUrl: pair.replicaUrl(name), databaseReadMaxLagMs: 500 } },
    );
    try {
      await pair.caughtUp();
      const first = await eventually(() => readsOf(strict, keys.reader), (s) => s.replica > 0);
      expect(first.replica).toBeGreaterThan(0);
      // A write the replica holds back for 2 s: its lag (now, less the last transaction it replayed) passes 500 ms.
      expect((await call(strict.url, 'POST', '/v1/payment-orders', { key: keys.writer, idempotencyKey: 'lag-1', body: orderBody() })).status).toBe(201);
      const lagging = await eventually(() => readsOf(strict, keys.reader), (s) => s.lagging > 0, 5_000);
      expect(lagging.lagging).toBeGreaterThan(0);
      expect(lagging.answer.body.data.length).toBe(2);
    } finally {
      await strict.close();
    }
  }, 60_000);

  async function readsOf(target: TestService, key: string) {
    const answer = await call(target.url, 'GET', '/v1/payment-orders', { key });
    expect(answer.status).toBe(200);
    const served = await readsServed(target);
    return { answer, replica: served['replica/caught_up'] ?? 0, lagging: served['primary/lagging'] ?? 0 };
  }

  it("dashboard pages: a session's lists read the replica, except right after its own write", async () => {
    await pair.caughtUp();
    const visitor = await Visitor.signedIn(service.url, keys.reader);
    const page = async () => {
      const before = await readsServed(service);
      const answer = await visitor.get('/dashboard/payment-orders');
      expect(answer.status).toBe(200);
      const after = await readsServed(service);
      return { text: answer.text, served: Object.keys(after).find((k) => (after[k] ?? 0) > (before[k] ?? 0)) };
    };
    const first = await eventually(page, (p) => p.served === 'replica/caught_up');
    expect(first.served).toBe('replica/caught_up');
    const orders = (await list(keys.reader)).body.data as { id: string; status: string }[];
    const order = orders.find((o) => o.status !== 'cancelled')!;
    // The page's status filter lists every status: only the order's own row tells its status.
    const rowOf = (text: string) => text.split('<tr>').find((row) => row.includes(order.id)) ?? '';
    expect(rowOf(first.text)).not.toBe('');
    expect(rowOf(first.text)).not.toContain('cancelled');
    expect((await visitor.get(`/dashboard/payment-orders/${order.id}`)).status).toBe(200);
    expect((await visitor.post(`/dashboard/payment-orders/${order.id}/cancel`)).status).toBe(303);
    const after = await page();
    expect(after.served).toBe('primary/own_write');
    expect(rowOf(after.text)).toContain('cancelled');
  }, 60_000);

  it('a stopped replica is skipped: every list answers 200 from the primary', async () => {
    await pair.caughtUp();
    await listFrom(keys.reader, 'replica');
    await pair.stopReplica();
    for (const key of [keys.writer, keys.reader, keys.writer, keys.reader]) {
      const answer = await list(key);
      expect(answer.status).toBe(200);
      expect(answer.body.data.length).toBe(2);
    }
    for (const path of ['/v1/events', '/v1/payments', '/v1/balance-transactions']) expect((await list(keys.reader, path)).status).toBe(200);
    const served = await readsServed(service);
    expect((served['primary/replica_failed'] ?? 0) + (served['primary/replica_down'] ?? 0)).toBeGreaterThanOrEqual(4);
  }, 60_000);
});
