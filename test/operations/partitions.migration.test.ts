// The migration to partitioned history (migrations/0030_partitioned_history.sql) on tables that
// already hold rows, as docs/operations.md#partitioned-history describes it: for events the long
// steps were made ahead (the bound's CHECK validated, the unique index built), for
// webhook_attempts the migration does them itself. The whole schema is migrated again in a schema
// of its own, inside one transaction rolled back at the end.
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { describe, expect, it } from 'vitest';
import { migrationsFolder, type Executor } from '../../src/storage/db.js';
import { useDatabase } from '../support/fixtures.js';

const h = useDatabase();
type Row = Record<string, unknown>;
const rows = async (tx: Executor, q: ReturnType<typeof sql>): Promise<Row[]> => ((await tx.execute(q)) as unknown as { rows: Row[] }).rows;
const ACCOUNT = '00000000-0000-4000-8000-000000000001';
const BOUND = '2100-01-01T00:00:00.000Z';

class RolledBack extends Error {}

describe('migration to partitioned history', () => {
  it('keeps every row, reuses what was made ahead, and leaves tables that take new rows', async () => {
    const migrations = readMigrationFiles({ migrationsFolder });
    const last = migrations.findIndex((m) => m.sql.some((s) => s.includes('events_partition_bound')));
    expect(last).toBeGreaterThan(0);
    let checked = false;
    await h.db
      .transaction(async (tx) => {
        await tx.execute(sql.raw('CREATE SCHEMA before_partitioning'));
        await tx.execute(sql.raw('SET LOCAL search_path = before_partitioning'));
        for (const m of migrations.slice(0, last)) for (const s of m.sql) await tx.execute(sql.raw(s));
        await tx.execute(sql`
          INSERT INTO events (account_id, id, livemode, type, object_id, data, created_at)
          SELECT ${ACCOUNT}, gen_random_uuid(), false, 'payment_order.created', 'po_' || n, '{"object":{}}', now() - n * interval '1 day'
          FROM generate_series(1, 50) AS n`);
        await tx.execute(sql`
          INSERT INTO webhook_attempts (account_id, id, livemode, delivery_id, event_id, event_type, endpoint_id, "trigger",
                                        attempt_number, url, outcome, duration_ms, created_at)
          SELECT account_id, gen_random_uuid(), false, gen_random_uuid(), id, type, gen_random_uuid(), 'event', 1,
                 'https://example.com/hook', 'succeeded', 5, created_at
          FROM events`);
        // The steps made ahead for events (CONCURRENTLY in production; not in a transaction here).
        await tx.execute(sql.raw(`ALTER TABLE events ADD CONSTRAINT events_partition_bound CHECK (created_at < '${BOUND}') NOT VALID`));
        await tx.execute(sql.raw('ALTER TABLE events VALIDATE CONSTRAINT events_partition_bound'));
        await tx.execute(sql.raw('CREATE UNIQUE INDEX events_legacy_key ON events (account_id, id, created_at)'));
        const indexBefore = await rows(tx, sql`SELECT 'events_legacy_key'::regclass::oid AS oid`);

        for (const s of migrations[last]!.sql) await tx.execute(sql.raw(s));

        for (const table of ['events', 'webhook_attempts']) {
          expect(await rows(tx, sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)}`)).toEqual([{ n: 50 }]);
          expect(await rows(tx, sql`SELECT count(*)::int AS n FROM ${sql.identifier(`${table}_legacy`)}`)).toEqual([{ n: 50 }]);
        }
        // The index built ahead is the legacy partition's primary key (not built again), and the
        // bound chosen ahead is kept: the partitions begin there.
        expect(await rows(tx, sql`SELECT 'events_legacy_pk'::regclass::oid AS oid`)).toEqual(indexBefore);
        const bounds = await rows(tx, sql`
          SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'events'::regclass ORDER BY 1`);
        expect(bounds.map((b) => b.name)).toEqual(['events_default', 'events_legacy', 'events_p2100_01', 'events_p2100_02', 'events_p2100_03']);
        expect(String(bounds[1]!.bound)).toMatch(/FROM \(MINVALUE\) TO \('2100-01-01 00:00:00/);
        // Without steps made ahead, the bound is the migration's moment: a new attempt lands after it.
        await tx.execute(sql`
          INSERT INTO webhook_attempts (account_id, id, livemode, delivery_id, event_id, event_type, endpoint_id, "trigger",
                                        attempt_number, url, outcome, duration_ms, created_at)
          VALUES (${ACCOUNT}, gen_random_uuid(), false, gen_random_uuid(), gen_random_uuid(), 'payment_order.created',
                  gen_random_uuid(), 'event', 1, 'https://example.com/hook', 'succeeded', 5, clock_timestamp() + interval '1 second')`);
        const landed = await rows(tx, sql`SELECT tableoid::regclass::text AS part FROM webhook_attempts WHERE created_at > now()`);
        expect(landed).toHaveLength(1);
        expect(String(landed[0]!.part)).toMatch(/^webhook_attempts_p\d{4}_\d{2}_\d{2}$/);
        // The primary key holds: the same row twice is refused, by the parent's key.
        await expect(tx.execute(sql`INSERT INTO events SELECT * FROM events_legacy LIMIT 1`)).rejects.toThrow();
        checked = true;
        throw new RolledBack();
      })
      .catch((err) => {
        if (!(err instanceof RolledBack)) throw err;
      });
    expect(checked).toBe(true);
  });
});
