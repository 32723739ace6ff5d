// Reading tenant-owned objects by their public id, one or a page at a time, and changing one under
// its row lock. Every such table is keyed by (account_id, id) and split by livemode, and every API
// object answers a missing id the same way (notFound); these helpers are that rule written once, so
// that a service cannot forget the mode or the tenant in one of its queries.
//
//   const PAYOUTS: Resource<typeof payouts> = { table: payouts, prefix: 'po', name: 'payout' };
//   const row = await loadOne(db, ctx, PAYOUTS, id);                       // the row, or 404
//   return listPage(db, ctx, PAYOUTS, params, [params.status ? eq(payouts.status, …) : undefined], payoutView);
//   return changeOne(db, ctx, PAYOUTS, id, async (tx, row) => respond(tx, ctx, 200, …)); // locked row, or 404
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db, Executor, Tx } from './db.js';
import { columnsOf, encodedValues, placeholdersOf, ShapedStatements, type Preparable } from './prepared.js';
import type { RequestContext } from '../kernel/context.js';
import { ApiError } from '../kernel/errors.js';
import { newId, parseId, type IdPrefix } from '../kernel/ids.js';
import { notFound } from './lookup.js';
import { planPage, toPage, type ListParams, type Page } from '../kernel/pagination.js';

/** A table of rows owned by one account in one mode, each with its own id. */
export interface OwnedTable extends PgTable {
  accountId: PgColumn;
  livemode: PgColumn;
  id: PgColumn;
}

export interface TenantTable extends OwnedTable {
  createdAt: PgColumn;
}

/** One kind of API object: where its rows are, its id prefix and what errors call it. */
export interface Resource<T extends TenantTable> {
  table: T;
  prefix: IdPrefix;
  /** As the 404 names it: `No such ${name}: 'id'.` */
  name: string;
  /**
   * Rows the API still shows (e.g. not soft-deleted): added to every lookup, lock and list. The
   * 404's other-mode hint does not apply it, as it never did.
   */
  visible?: SQL;
}

export type RowOf<T extends PgTable> = T['$inferSelect'];

/** The caller's rows the API shows: its account, the mode of its key. */
export function ownRows<T extends TenantTable>(ctx: Pick<RequestContext, 'accountId' | 'livemode'>, resource: Resource<T>): SQL {
  const { table } = resource;
  return and(eq(table.accountId, ctx.accountId), eq(table.livemode, ctx.livemode), resource.visible)!;
}

/** The caller's row with this UUID, if the API shows it. */
export function ownRow<T extends TenantTable>(ctx: Pick<RequestContext, 'accountId' | 'livemode'>, resource: Resource<T>, uuid: string): SQL {
  const { table } = resource;
  return and(eq(table.accountId, ctx.accountId), eq(table.livemode, ctx.livemode), eq(table.id, uuid), resource.visible)!;
}

/** A row's key as the built statements bind it: its account, its mode when given, its id. */
type RowKey = { accountId: string; livemode?: boolean; id: string };
const keyColumns = (key: RowKey) => (key.livemode === undefined ? ['accountId', 'id'] : ['accountId', 'livemode', 'id']);
const byKey = (table: OwnedTable, columns: readonly string[]) => {
  const bound = placeholdersOf(columns, 'key_');
  return and(...columns.map((k) => eq(table[k as 'id'], bound[k])));
};

const OWN_ROW_KEY = ['accountId', 'livemode', 'id'] as const;
const ownRowReads = new ShapedStatements('reads');

/**
 * The caller's row with this UUID if the API shows it (`ownRow`), FOR UPDATE when `lock`: the
 * reads every lookup and lock of one row make, each built once per table (storage/prepared.ts).
 */
export async function selectOwnRow<T extends OwnedTable>(
  db: Executor,
  ctx: Pick<RequestContext, 'accountId' | 'livemode'>,
  resource: { table: T; visible?: SQL },
  uuid: string,
  lock = false,
): Promise<RowOf<T> | undefined> {
  const { table, visible } = resource;
  const key = { accountId: ctx.accountId, livemode: ctx.livemode, id: uuid };
  // Always the three columns: a mode left out by a loose caller must find nothing, never drop the condition.
  const where = OWN_ROW_KEY;
  const read = ownRowReads.statement(table, [visible, lock], (tx) => {
    const query = tx
      .select()
      .from(table as PgTable)
      .where(and(byKey(table, where), visible));
    return (lock ? query.for('update') : query) as Preparable<unknown[]>;
  });
  const [row] = (await read(db, encodedValues(table, key, where, 'key_'))) as unknown[];
  return row as RowOf<T> | undefined;
}

const ownRowWrites = new ShapedStatements('writes');

/**
 * Writes `set` on the row with this key (its account and id, and its mode when given), a new
 * version when `bump`, and answers the row as it now stands. Each table's statement for one set
 * of columns is built once; a value written as SQL (an increment) is built each time.
 */
export async function updateOwnRow<T extends OwnedTable & { version: PgColumn }>(
  db: Executor,
  table: T,
  key: RowKey,
  set: Record<string, unknown>,
  bump: boolean,
): Promise<RowOf<T> | undefined> {
  const { columns, sqlValued } = columnsOf(table, set);
  const where = keyColumns(key);
  const version = bump ? { version: sql`${table.version} + 1` } : {};
  if (sqlValued) {
    const rows = (await db
      .update(table as OwnedTable)
      .set({ ...set, ...version } as never)
      .where(and(...where.map((k) => eq(table[k as 'id'], key[k as keyof RowKey]))))
      .returning()) as unknown[];
    return rows[0] as RowOf<T> | undefined;
  }
  const write = ownRowWrites.statement(table, [bump, ...where, '|', ...columns], (tx) =>
    tx
      .update(table as OwnedTable)
      .set({ ...placeholdersOf(columns, 'set_'), ...version } as never)
      .where(byKey(table, where))
      .returning() as Preparable<unknown[]>,
  );
  const values = encodedValues(table, set, columns, 'set_', encodedValues(table, key, where, 'key_'));
  const [row] = (await write(db, values)) as unknown[];
  return row as RowOf<T> | undefined;
}

/** The row behind a public id, or undefined (malformed id, another account's, other mode, hidden). */
export async function findOne<T extends TenantTable>(db: Executor, ctx: RequestContext, resource: Resource<T>, id: string): Promise<RowOf<T> | undefined> {
  const uuid = parseId(resource.prefix, id);
  return uuid ? selectOwnRow(db, ctx, resource, uuid) : undefined;
}

/**
 * The row behind a public id, or the 404 (resource_missing, with the other-mode hint). `param`
 * names the request field the id came from when it is not the path's `id` (e.g. `mandate` in a
 * payment's body); the message stays the same.
 */
export async function loadOne<T extends TenantTable>(db: Db, ctx: RequestContext, resource: Resource<T>, id: string, param = 'id'): Promise<RowOf<T>> {
  const row = await findOne(db, ctx, resource, id);
  if (row) return row;
  throw await missing(db, ctx, resource, id, param);
}

/**
 * Conditions a list endpoint adds; undefined entries are skipped, so optional filters are written
 * inline. A function when building one can throw: it runs after the paging parameters are checked,
 * so that their error comes first.
 */
export type Filters = (SQL | undefined)[] | (() => (SQL | undefined)[]);

/** One page of the caller's rows, newest first, by the list parameters (limit, cursors, created range) and `filters`. */
export async function listPage<T extends TenantTable, V>(
  db: Executor,
  ctx: RequestContext,
  resource: Resource<T>,
  params: ListParams,
  filters: Filters,
  view: (row: RowOf<T>) => V,
): Promise<Page<V>> {
  const { table } = resource;
  const plan = planPage(resource.prefix, table.id, table.createdAt, params);
  const extra = typeof filters === 'function' ? filters() : filters;
  const rows = await db
    .select()
    .from(table as PgTable)
    .where(and(ownRows(ctx, resource), ...extra, plan.where))
    .orderBy(plan.orderBy)
    .limit(plan.fetch);
  return toPage(rows as RowOf<T>[], plan, view);
}

/**
 * Runs `change` in a transaction on the row behind a public id, locked FOR UPDATE, and answers
 * what it answers; the 404 as loadOne when there is no such row. The lookup and the lock are one
 * statement, so the row `change` sees is the one it may write.
 */
export async function changeOne<T extends TenantTable, R>(
  db: Db,
  ctx: RequestContext,
  resource: Resource<T>,
  id: string,
  change: (tx: Tx, row: RowOf<T>) => Promise<R>,
): Promise<R> {
  const uuid = parseId(resource.prefix, id);
  const done = uuid
    ? await db.transaction(async (tx) => {
        const row = await selectOwnRow(tx, ctx, resource, uuid, true);
        return row ? { result: await change(tx, row) } : undefined;
      })
    : undefined;
  if (done) return done.result;
  throw await missing(db, ctx, resource, id);
}

async function missing<T extends TenantTable>(db: Db, ctx: RequestContext, resource: Resource<T>, id: string, param = 'id'): Promise<ApiError> {
  const error = await notFound(db, ctx, resource.table, parseId(resource.prefix, id), resource.name, id);
  return param === 'id' ? error : new ApiError('resource_missing', { param, message: error.message });
}

/**
 * The retrieve and list of a resource whose API object is its view, with the list's own filters.
 * Filters run before the paging parameters are checked, so a malformed id filter is named first.
 */
export function tenantReads<T extends TenantTable, V, Q extends ListParams>(resource: Resource<T>, view: (row: RowOf<T>) => V, filters: (query: Q) => (SQL | undefined)[]) {
  return {
    retrieve: async (db: Db, ctx: RequestContext, id: string): Promise<V> => view(await loadOne(db, ctx, resource, id)),
    list: (db: Db, ctx: RequestContext, query: Q): Promise<Page<V>> => listPage(db, ctx, resource, query, filters(query), view),
  };
}

/** The columns that make a new row the caller's: its account and mode, a fresh id, created now. */
export function newOwnedRow(ctx: Pick<RequestContext, 'accountId' | 'livemode'>, prefix: IdPrefix, now: Date) {
  return { accountId: ctx.accountId, id: newId(prefix).uuid, livemode: ctx.livemode, createdAt: now, updatedAt: now };
}
