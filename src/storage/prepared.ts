// Statements the query builder builds once. Building a statement (its text from the columns and
// conditions, each value's encoder, the row mapping) costs node more than PostgreSQL spends
// running the short ones, and the general path of a movement sends about twenty of them per
// request (docs/benchmarks.md). A statement written here with placeholders is built the first
// time it runs on each kind of driver (node-postgres or PGlite) and afterwards only gets its values
// and the connection it runs on: the pool's, or the open transaction's. Its text is unchanged, so
// its server-side name (db.ts) and its plan stay what they were.
import { getTableColumns, is, SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from './db.js';

interface Built<R> {
  execute(values?: Record<string, unknown>): Promise<R>;
}

/** What a builder offers once written with `sql.placeholder`s: drizzle's prepared query. */
export interface Preparable<R> {
  prepare(name?: string): Built<R>;
}

// drizzle keeps the connection a statement runs on in its session (`client`), the pool's for a
// database and the checked-out connection for a transaction; a prepared query copies it.
type WithSession = { session: { client: unknown; constructor: object } };

/** The connection `db` runs its statements on: the pool (or PGlite) for a database, the transaction's own for a transaction. */
export function connectionOf(db: Executor): unknown {
  return (db as unknown as WithSession).session.client;
}

/**
 * A statement built by `build` once per driver and run with `values` on whatever executor is
 * given: `run(tx, { accountId, id })`.
 */
export function prepared<V extends Record<string, unknown>, R>(build: (db: Executor) => Preparable<R>): (db: Executor, values: V) => Promise<R> {
  const byDriver = new Map<object, Built<R>>();
  return (db, values) => {
    const session = (db as unknown as WithSession).session;
    let statement = byDriver.get(session.constructor);
    if (!statement) {
      statement = build(db).prepare();
      byDriver.set(session.constructor, statement);
    }
    const onThisConnection = Object.create(statement) as Built<R> & { client: unknown };
    onThisConnection.client = connectionOf(db);
    return onThisConnection.execute(values);
  };
}

/**
 * The statements written once per table and shape: a set of columns for an insert or an update,
 * or a read's condition and lock. A shape is a list of keys, each compared as a Map compares
 * (strings by value, a condition by identity). Each column's value is a bare parameter, encoded
 * here as drizzle encodes a value (a date as text, jsonb as JSON) and NULL left NULL, which
 * drizzle's own placeholders would encode too (JSON `null` for a jsonb column, a crash for a date).
 */
export class ShapedStatements {
  private readonly byTable = new WeakMap<PgTable, Shapes>();

  /** `writes`: inserts or updates, which refuse a table whose columns drizzle computes per row. */
  constructor(private readonly kind: 'reads' | 'writes') {}

  /** The statement `build` makes for `table` and `shape`, built once. */
  statement(table: PgTable, shape: readonly unknown[], build: (db: Executor) => Preparable<unknown>) {
    let level = this.byTable.get(table);
    if (!level) this.byTable.set(table, (level = new Map()));
    for (const key of shape) {
      let next = level.get(key) as Shapes | undefined;
      if (!next) level.set(key, (next = new Map()));
      level = next;
    }
    let run = level.get(BUILT) as Run | undefined;
    if (!run) {
      if (this.kind === 'writes') refuseComputedColumns(table);
      level.set(BUILT, (run = prepared(build)));
    }
    return run;
  }
}

type Run = (db: Executor, values: Record<string, unknown>) => Promise<unknown>;
/** One level of a table's shapes: a key to the next level, or BUILT to the statement of the shape that ends here. */
type Shapes = Map<unknown, Shapes | Run>;
const BUILT = Symbol('built');

/**
 * The columns of `table` that `row` gives a value (drizzle ignores other keys, and so does this),
 * and whether one of them is written as SQL (then the statement is built every time).
 */
export function columnsOf(table: PgTable, row: Record<string, unknown>): { columns: string[]; sqlValued: boolean } {
  const all = getTableColumns(table);
  const columns = Object.keys(row).filter((column) => row[column] !== undefined && column in all);
  return { columns: columns.sort(), sqlValued: columns.some((column) => is(row[column], SQL)) };
}

/** A bare parameter per column, named `<prefix><column>`. */
export function placeholdersOf(columns: readonly string[], prefix = ''): Record<string, SQL> {
  return Object.fromEntries(columns.map((column) => [column, sql`${sql.placeholder(prefix + column)}`]));
}

/** The values of `row`'s `columns` for `placeholdersOf(columns, prefix)`, encoded as their columns do. */
export function encodedValues(table: PgTable, row: Record<string, unknown>, columns: readonly string[], prefix = '', into: Record<string, unknown> = {}): Record<string, unknown> {
  const all = getTableColumns(table);
  for (const column of columns) {
    const value = row[column];
    into[prefix + column] = value === null ? null : all[column]!.mapToDriverValue(value);
  }
  return into;
}

const inserts = new ShapedStatements('writes');

/**
 * Inserts one row of `table` (answering it when `returning`), the statement for each set of
 * columns built once; a value written as SQL (`now()`) is built each time.
 */
export async function insertRow<T extends PgTable>(db: Executor, table: T, row: Record<string, unknown>, returning: boolean): Promise<T['$inferSelect'] | undefined> {
  const { columns, sqlValued } = columnsOf(table, row);
  if (sqlValued) {
    const insert = db.insert(table).values(row as never);
    return returning ? ((await insert.returning()) as T['$inferSelect'][])[0] : void (await insert);
  }
  const insert = inserts.statement(table, [returning, ...columns], (tx) => {
    const statement = tx.insert(table).values(placeholdersOf(columns) as never);
    return (returning ? statement.returning() : statement) as Preparable<unknown>;
  });
  const inserted = await insert(db, encodedValues(table, row, columns));
  return returning ? (inserted as T['$inferSelect'][])[0] : undefined;
}

/** A column whose value drizzle computes ($defaultFn, $onUpdateFn) would be computed once for a built statement: none may have one. */
function refuseComputedColumns(table: PgTable): void {
  for (const [name, column] of Object.entries(getTableColumns(table))) {
    if (column.defaultFn || column.onUpdateFn) throw new Error(`${name}: a built statement cannot compute a column's value per row`);
  }
}
