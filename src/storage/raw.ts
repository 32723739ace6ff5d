// One SQL statement sent straight to the driver, for the few hot paths where the query builder's
// cost shows (src/domain/payment-orders/one-statement.ts). On PostgreSQL the statement is named, so
// each pooled connection parses and plans it once and later calls only bind and execute (unless
// DATABASE_PREPARED_STATEMENTS=unnamed, where the pool drops the name: src/storage/db.ts); PGlite
// runs in process, where there is no round trip to save.
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import type { Executor } from './db.js';
import { connectionOf } from './prepared.js';

export interface RawStatement {
  /** Unique per distinct text: PostgreSQL refuses a known name with other text. */
  name: string;
  text: string;
}

/** Runs `statement` where `db` runs its own: on the pool for a database, on the transaction's connection inside one. */
export async function rawQuery<R extends Record<string, unknown>>(db: Executor, statement: RawStatement, values: unknown[]): Promise<R[]> {
  const client = connectionOf(db);
  if (client instanceof pg.Pool || client instanceof pg.Client) {
    const result = await client.query<R>({ name: statement.name, text: statement.text, values });
    return result.rows;
  }
  const result = await (client as Pick<PGlite, 'query'>).query<R>(statement.text, values);
  return result.rows;
}
