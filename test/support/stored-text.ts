// Every text-like column of every table, as text: where a leaked secret (a card or account number,
// a CVC) would sit. bytea columns are read as text too (escape format), so a secret stored in
// clear inside one would show.
import { sql, type SQL } from 'drizzle-orm';
import { expect } from 'vitest';

export async function everyStoredText(query: (q: SQL) => Promise<Record<string, unknown>[]>, opts: { bytea?: boolean } = {}): Promise<string> {
  const types = ['text', 'character varying', 'jsonb', 'json', 'ARRAY', ...(opts.bytea ? ['bytea'] : [])];
  const columns = await query(
    sql`SELECT table_name, column_name, data_type FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type IN (${sql.join(types.map((t) => sql`${t}`), sql`, `)})`,
  );
  expect(columns.length).toBeGreaterThan(10);
  const parts: string[] = [];
  for (const { table_name, column_name, data_type } of columns) {
    const value = data_type === 'bytea' ? `encode("${String(column_name)}", 'escape')` : `"${String(column_name)}"::text`;
    const rows = await query(sql.raw(`SELECT ${value} AS v FROM "${String(table_name)}" WHERE "${String(column_name)}" IS NOT NULL`));
    for (const row of rows) parts.push(String(row.v));
  }
  return parts.join('\n');
}
