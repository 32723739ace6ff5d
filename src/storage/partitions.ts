// Time-partitioned history (docs/operations.md#partitioned-history). `events` (by month) and
// `webhook_attempts` (by day) are range-partitioned by created_at, so old history goes by dropping
// a whole partition (a catalogue change) instead of deleting rows (WAL, bloat, vacuum). The worker
// makes the partitions ahead of time; a DEFAULT partition catches any row no partition was made
// for yet (a worker stopped for days, a clock ahead), so an insert never fails for want of one, and
// its rows move into their partition when it is made.
//
// Every unique key of a partitioned table must hold the partition key, so these tables' primary
// keys are (account_id, id, created_at): the database no longer proves an event id unique across
// partitions. Acceptable here: ids are UUIDv7 (src/kernel/ids.ts: 74 random bits beside the
// millisecond), so two equal ones do not happen in practice; nothing charges or de-duplicates by
// them; and the tables whose uniqueness guards money or de-duplication (idempotency_keys,
// connector_webhook_events, webhook_deliveries' fan-out key) stay unpartitioned with one global
// key, trimmed (where they are) by batched deletes.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db, type Executor } from './db.js';
import { deleteBatch } from './trim.js';
import { isDatabaseError } from './errors.js';

export type Period = 'month' | 'day';

/**
 * The partitioned tables and their period. Events are kept (no retention by default), so a month
 * keeps their partitions few (a lookup by id probes each); attempts are kept
 * WEBHOOK_HISTORY_RETENTION_DAYS (30), so a day drops them to the day, as row deletes did.
 */
export const PARTITIONED = [
  { table: 'events', period: 'month' },
  { table: 'webhook_attempts', period: 'day' },
] as const satisfies readonly { table: string; period: Period }[];

export type PartitionedTable = (typeof PARTITIONED)[number]['table'];

/** How many periods after the current one the worker keeps made. */
export const PERIODS_AHEAD = 2;
/** Held (transaction-level) while partitions are made or dropped, so workers do it one at a time. */
const PARTITION_LOCK = 72707002;
/** A partition change waits this long for its table lock, then gives up until the next pass. */
const LOCK_TIMEOUT = '2s';
const LOCK_NOT_AVAILABLE = '55P03';

const asDate = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));

/** The start of `at`'s period, `offset` periods on (UTC). */
export function periodStart(period: Period, at: Date, offset = 0): Date {
  return period === 'month'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + offset));
}

/** `events_p2026_12`, `webhook_attempts_p2026_12_07`: the name the migration gives too. */
export function partitionName(table: PartitionedTable, period: Period, start: Date): string {
  const [y, m, d] = start.toISOString().slice(0, 10).split('-');
  return `${table}_p${y}_${m}${period === 'day' ? `_${d}` : ''}`;
}

interface Partition {
  name: string;
  /** null: MINVALUE (the partition the table was before partitioning). */
  from: Date | null;
  to: Date | null;
  isDefault: boolean;
}

async function partitionsOf(db: Executor, table: PartitionedTable): Promise<Partition[]> {
  const rows = rowsOf(
    await db.execute(sql`
      SELECT c.relname AS name, b.expr = 'DEFAULT' AS is_default,
             (regexp_match(b.expr, 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz AS lo,
             (regexp_match(b.expr, 'TO \\(''([^'']+)''\\)'))[1]::timestamptz AS hi
      FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
      CROSS JOIN LATERAL (SELECT pg_get_expr(c.relpartbound, c.oid) AS expr) b
      WHERE i.inhparent = ${table}::regclass`),
  );
  return rows.map((r) => ({ name: String(r.name), from: asDate(r.lo), to: asDate(r.hi), isDefault: Boolean(r.is_default) }));
}

/** [from, to) less what existing partitions cover at its ends; null when nothing is left. */
function uncovered(from: Date, to: Date, existing: Partition[]): { from: Date; to: Date } | null {
  let lo = from.getTime();
  let hi = to.getTime();
  for (const p of existing) {
    if (p.isDefault) continue;
    const a = p.from?.getTime() ?? -Infinity;
    const b = p.to?.getTime() ?? Infinity;
    if (a >= hi || b <= lo) continue;
    if (a <= lo) lo = Math.max(lo, b);
    else hi = Math.min(hi, a);
  }
  return lo < hi ? { from: new Date(lo), to: new Date(hi) } : null;
}

/** Runs `work` under the partition lock with a bounded lock wait; false when a table lock was not had in time. */
async function underPartitionLock(db: Db, work: (tx: Executor) => Promise<void>): Promise<boolean> {
  try {
    await db.transaction(async (tx) => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(${PARTITION_LOCK})`);
      await tx.execute(sql.raw(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`));
      await work(tx);
    });
    return true;
  } catch (err) {
    if (isDatabaseError(err, LOCK_NOT_AVAILABLE)) return false;
    throw err;
  }
}

/** Makes `[from, to)` a partition of `table`, moving into it the rows the default partition caught in that range. */
async function createPartition(tx: Executor, table: PartitionedTable, name: string, from: Date, to: Date): Promise<void> {
  const range = sql`created_at >= ${from.toISOString()}::timestamptz AND created_at < ${to.toISOString()}::timestamptz`;
  const [caught] = rowsOf(await tx.execute(sql`SELECT EXISTS (SELECT 1 FROM ${sql.identifier(`${table}_default`)} WHERE ${range}) AS any`));
  const bounds = sql.raw(`FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`);
  if (!caught?.any) {
    await tx.execute(sql`CREATE TABLE ${sql.identifier(name)} PARTITION OF ${sql.identifier(table)} FOR VALUES ${bounds}`);
    return;
  }
  // The new partition cannot be made while the default one holds rows of its range: the default
  // one steps aside for the move (no temporary table, nothing left on the connection).
  const fallback = sql.identifier(`${table}_default`);
  await tx.execute(sql`ALTER TABLE ${sql.identifier(table)} DETACH PARTITION ${fallback}`);
  await tx.execute(sql`CREATE TABLE ${sql.identifier(name)} PARTITION OF ${sql.identifier(table)} FOR VALUES ${bounds}`);
  await tx.execute(sql`WITH moved AS (DELETE FROM ${fallback} WHERE ${range} RETURNING *) INSERT INTO ${sql.identifier(table)} SELECT * FROM moved`);
  await tx.execute(sql`ALTER TABLE ${sql.identifier(table)} ATTACH PARTITION ${fallback} DEFAULT`);
}

/**
 * Makes the partitions of `now`'s period and the PERIODS_AHEAD after it, of every partitioned
 * table; returns how many it made. Idempotent: a pass that finds them all made takes no lock.
 */
export async function ensurePartitions(db: Db, now: Date): Promise<number> {
  const wanted = PARTITIONED.flatMap(({ table, period }) =>
    Array.from({ length: PERIODS_AHEAD + 1 }, (_, n) => {
      const from = periodStart(period, now, n);
      return { table, from, to: periodStart(period, now, n + 1), name: partitionName(table, period, from) };
    }),
  );
  const names = sql.join(wanted.map((w) => sql`to_regclass(${w.name}) IS NOT NULL`), sql`, `);
  const [found] = rowsOf(await db.execute(sql`SELECT ARRAY[${names}] AS made`));
  const missing = wanted.filter((_, i) => !(found!.made as boolean[])[i]);
  if (missing.length === 0) return 0;
  let made = 0;
  await underPartitionLock(db, async (tx) => {
    for (const table of new Set(missing.map((w) => w.table))) {
      const existing = await partitionsOf(tx, table);
      for (const w of missing.filter((m) => m.table === table)) {
        if (existing.some((p) => p.name === w.name)) continue;
        // The partition the table was before partitioning ends mid-period (the migration's moment).
        const range = uncovered(w.from, w.to, existing);
        if (!range) continue;
        await createPartition(tx, table, w.name, range.from, range.to);
        existing.push({ name: w.name, from: range.from, to: range.to, isDefault: false });
        made++;
      }
    }
  });
  return made;
}

/**
 * Detaches and drops the partitions of `table` wholly older than `cutoff`; the rows the default
 * partition caught before it are deleted a batch at a time. Returns the rows gone.
 */
export async function dropPartitionsBefore(db: Db, table: PartitionedTable, cutoff: Date, batch = 1000): Promise<number> {
  const old = (await partitionsOf(db, table)).filter((p) => !p.isDefault && p.to !== null && p.to.getTime() <= cutoff.getTime());
  let gone = 0;
  for (const p of old) {
    await underPartitionLock(db, async (tx) => {
      if (!(await partitionsOf(tx, table)).some((q) => q.name === p.name)) return; // another worker's
      const [row] = rowsOf(await tx.execute(sql`SELECT count(*)::int AS n FROM ${sql.identifier(p.name)}`));
      // Not CONCURRENTLY: that cannot run in a transaction, nor beside a default partition. The
      // plain form holds the parent's lock for a catalogue change only; lock_timeout bounds the wait.
      await tx.execute(sql`ALTER TABLE ${sql.identifier(table)} DETACH PARTITION ${sql.identifier(p.name)}`);
      await tx.execute(sql`DROP TABLE ${sql.identifier(p.name)}`);
      gone += Number(row?.n ?? 0);
    });
  }
  const fallback = sql.identifier(`${table}_default`);
  gone += await deleteBatch(db, sql`${fallback}`, ['account_id', 'id'], sql`created_at < ${cutoff.toISOString()}::timestamptz`, batch);
  return gone;
}
