// Time-partitioned history (src/storage/partitions.ts): the migration turned events and
// webhook_attempts into range-partitioned tables; the worker makes partitions ahead (by month and
// by day), moves into a new partition what the default one caught, and retention drops whole
// attempt partitions past WEBHOOK_HISTORY_RETENTION_DAYS instead of deleting rows.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { ensurePartitions, partitionName, periodStart } from '../../src/storage/partitions.js';
import { orderBody } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';

const h = useService();
const DAY = 86_400_000;

const exists = async (name: string): Promise<boolean> =>
  Boolean((await h.query(sql`SELECT to_regclass(${name}) IS NOT NULL AS made`))[0]!.made);
const count = async (table: string): Promise<number> =>
  Number((await h.query(sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)}`))[0]!.n);
const monthOf = (at: Date, offset = 0) => partitionName('events', 'month', periodStart('month', at, offset));
const dayOf = (at: Date, offset = 0) => partitionName('webhook_attempts', 'day', periodStart('day', at, offset));

/** An attempt record at `at`, for the event of an order just created (the columns as the delivery engine writes them). */
async function attemptAt(at: Date): Promise<void> {
  await h.query(sql`
    INSERT INTO webhook_attempts (account_id, id, livemode, delivery_id, event_id, event_type, endpoint_id, "trigger",
                                  attempt_number, url, outcome, response_status, duration_ms, created_at)
    SELECT account_id, gen_random_uuid(), livemode, gen_random_uuid(), id, type, gen_random_uuid(), 'event',
           1, 'https://example.com/hook', 'succeeded', 200, 12, ${at.toISOString()}::timestamptz
    FROM events ORDER BY created_at LIMIT 1`);
}

describe('partitioned history', () => {
  it('are partitioned tables whose history before the migration is one partition, with a default one', async () => {
    const parents = await h.query(sql`SELECT c.relname AS name FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid ORDER BY 1`);
    expect(parents.map((r) => r.name)).toEqual(['events', 'webhook_attempts']);
    for (const name of ['events_legacy', 'events_default', 'webhook_attempts_legacy', 'webhook_attempts_default']) expect(await exists(name)).toBe(true);
    // The migration made this month's (day's) partition and the two after it.
    const now = new Date();
    for (const n of [1, 2]) {
      expect(await exists(monthOf(now, n))).toBe(true);
      expect(await exists(dayOf(now, n))).toBe(true);
    }
    // A new event lands in the current month's partition.
    const api = (await h.newTenant()).api;
    expect((await api.post('/v1/payment-orders', orderBody())).status).toBe(201);
    expect(await count(monthOf(now))).toBeGreaterThanOrEqual(1);
  });

  it('the worker makes the partitions ahead, once, and moves into them what the default partition caught', async () => {
    const api = (await h.newTenant('Ahead')).api;
    const { body: order } = await api.post('/v1/payment-orders', orderBody());
    const later = new Date(Date.now() + 400 * DAY);
    // An event written at `later` before any partition covers it: the default partition takes it.
    await h.query(sql`
      INSERT INTO events (account_id, id, livemode, type, object_id, data, idempotency_key, created_at)
      SELECT account_id, gen_random_uuid(), livemode, type, object_id, data, 'caught', ${later.toISOString()}::timestamptz
      FROM events WHERE object_id = ${order.id}`);
    expect(await count('events_default')).toBe(1);

    const pass = await h.service.runWorker(later);
    expect(pass.partitions).toBe(6); // three months of events, three days of attempts
    for (const n of [0, 1, 2]) {
      expect(await exists(monthOf(later, n))).toBe(true);
      expect(await exists(dayOf(later, n))).toBe(true);
    }
    expect(await count('events_default')).toBe(0);
    const moved = await h.query(sql`SELECT created_at FROM ${sql.identifier(monthOf(later))} WHERE idempotency_key = 'caught'`);
    expect(moved).toHaveLength(1);
    const listed = (await api.get(`/v1/events?limit=100`)).body.data.filter((e: any) => e.request.idempotency_key === 'caught');
    expect(listed.map((e: any) => e.created_at)).toEqual([later.toISOString()]);

    // Idempotent, also when two workers race for it.
    expect((await h.service.runWorker(later)).partitions).toBe(0);
    const further = new Date(later.getTime() + 3 * DAY);
    const made = await Promise.all([ensurePartitions(h.db, further), ensurePartitions(h.db, further)]);
    expect(made[0]! + made[1]!).toBe(3); // three days on: three more days of attempts; the months were made
  });

  it('retention drops whole attempt partitions past the window and keeps the rest', async () => {
    await h.newTenant('Retention').then(({ api }) => api.post('/v1/payment-orders', orderBody()));
    const old = new Date(Date.now() + 800 * DAY);
    await h.service.runWorker(old);
    await attemptAt(old);
    await attemptAt(new Date(old.getTime() + 60_000));
    expect(await count(dayOf(old))).toBe(2);

    // 29 days on nothing is old enough; 31 days on the whole day goes, by a dropped partition.
    const early = new Date(old.getTime() + 29 * DAY);
    expect((await h.service.runWorker(early, { webhookHistoryRetentionDays: 30 })).sweptWebhookHistory!.attempts).toBe(0);
    expect(await exists(dayOf(old))).toBe(true);
    const late = new Date(old.getTime() + 31 * DAY);
    await attemptAt(late);
    const before = await count('webhook_attempts');
    const pass = await h.service.runWorker(late, { webhookHistoryRetentionDays: 30 });
    expect(pass.sweptWebhookHistory!.attempts).toBe(before - 1);
    expect(await exists(dayOf(old))).toBe(false);
    expect(await exists('webhook_attempts_legacy')).toBe(false); // everything before the migration is older still
    expect(await exists(dayOf(late))).toBe(true);
    expect(await count('webhook_attempts')).toBe(1);
    // Events have no retention: their partitions stay.
    expect(await exists(monthOf(old))).toBe(true);
    expect(await exists('events_legacy')).toBe(true);
  });
});
