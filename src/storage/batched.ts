// A hot statement that takes its rows as arrays, one element per call, so that concurrent calls
// share it and its commit (src/storage/coalesce.ts explains the queue). Each statement names its
// columns once: the same list renders its `unnest(…)` and orders the arrays it is sent.
import type { Executor } from './db.js';
import { rawQuery, type RawStatement } from './raw.js';
import { coalesce } from './coalesce.js';
import { isServerWide } from '../kernel/outage.js';

/** The batch's columns, as the statement's parameters $1…$n: a name and its PostgreSQL type. */
export type BatchColumns = readonly (readonly [name: string, type: string])[];

/** `unnest($1::uuid[], …) AS alias(name, …)`: the batch's rows, one per call. */
export function unnestColumns(columns: BatchColumns, alias: string): string {
  const arrays = columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
  return `unnest(${arrays})\n    AS ${alias}(${columns.map(([name]) => name).join(', ')})`;
}

export interface BatchedStatementOptions<Row, Result, Output> {
  statement: RawStatement;
  columns: BatchColumns;
  /** Each call's output, in the batch's order, from the rows the statement returned. */
  answer(rows: Result[], batch: Row[]): Output[];
  /** Calls with one key never share a batch (coalesce's `key`). */
  key(row: Row): string;
  /** Only calls of one group share a batch: the callers group by account and mode, one tenant per statement. */
  group(row: Row): string;
}

/** Batches of one statement in the database at once: 8 did no better than 4 in the orders' benchmark (docs/benchmarks.md). */
const BATCHES_IN_FLIGHT = 4;
/** Calls in one batch at most. */
const BATCH_MAX = 64;

/**
 * The payment paths' batches: one account and mode per statement (its tenant, as a distributed
 * database routes it), and one call per idempotency key, as twins never share one. Each row has
 * `account_id`, `livemode` and `key`.
 */
export const perTenantKey = {
  key: (row: Record<string, unknown>) => `${row.account_id as string}\n${String(row.livemode)}\n${row.key as string}`,
  group: (row: Record<string, unknown>) => `${row.account_id as string}\n${String(row.livemode)}`,
};

/** A payment path's row's columns for perTenantKey, and its request's id, from the request. */
export const requestColumns = (ctx: { accountId: string; livemode: boolean; requestId: string }, key: string) => ({
  account_id: ctx.accountId,
  livemode: ctx.livemode,
  key,
  request_id: ctx.requestId || null,
});

/** `answer` for a statement returning the `key` of each call it wrote: whether each call's was. */
export function keysReturned(rows: { key: string | null }[], batch: Record<string, unknown>[]): boolean[] {
  const written = new Set(rows.map((r) => r.key));
  return batch.map((row) => written.has(row.key as string));
}

/**
 * A function sending `row` with whatever else waits on the same pool: one queue per database (a
 * transaction's executor is never given here, as its calls could not share a commit).
 */
export function batchedStatement<Row extends Record<string, unknown>, Result extends Record<string, unknown>, Output>(
  opts: BatchedStatementOptions<Row, Result, Output>,
): (db: Executor, row: Row) => Promise<Output> {
  const queues = new WeakMap<Executor, (row: Row) => Promise<Output>>();
  return (db, row) => {
    let send = queues.get(db);
    if (!send) {
      send = coalesce<Row, Output>({
        run: async (batch) =>
          opts.answer(await rawQuery<Result>(db, opts.statement, opts.columns.map(([name]) => batch.map((r) => r[name]))), batch),
        key: opts.key,
        group: opts.group,
        maxInFlight: BATCHES_IN_FLIGHT,
        maxBatch: BATCH_MAX,
        everyones: isServerWide,
      });
      queues.set(db, send);
    }
    return send(row);
  };
}
