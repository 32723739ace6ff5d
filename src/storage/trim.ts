// Retention's batched delete, for the tables that cannot drop whole partitions (their uniqueness
// must stay global, or they are not partitioned): at most `batch` rows per statement, found through
// the index `where` runs on, so that a pass holds few row locks and a short transaction however
// large the backlog; the worker's next pass takes the next batch.
import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Executor } from './db.js';

/** Deletes at most `batch` rows of `table` matching `where`, each found by its `key` columns; how many went. */
export async function deleteBatch(db: Executor, table: SQL, key: readonly string[], where: SQL, batch: number): Promise<number> {
  const columns = sql.raw(key.join(', '));
  const deleted = rowsOf(
    await db.execute(sql`
      DELETE FROM ${table} WHERE (${columns}) IN (
        SELECT ${columns} FROM ${table} WHERE ${where} LIMIT ${batch})
      RETURNING 1 AS ok`),
  );
  return deleted.length;
}
