// The final-state digest of a run: every table, rows in primary-key order, hashed. UUIDs (v7: the
// clock's instant plus random bits) and the TypeIDs made from them are replaced by their order of
// first appearance, and long opaque strings (key hashes, sealed secrets: random salt and IV) by a
// placeholder. Also set aside: fingerprints and key suffixes (keyed per account, whose id is
// random), measured durations (real time), and the balance slot a posting picked (random, by
// design, to spread a hot balance): balances are digested as their per-account sums; deliveries,
// named by the database's own random UUIDs, are ordered by what they are for. What is left
// is a function of the seed alone.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { fromString, toUUID } from 'typeid-js';
import type { Db } from '../src/storage/db.js';

type Row = Record<string, unknown>;
const rows = async (db: Db, q: ReturnType<typeof sql>): Promise<Row[]> => ((await db.execute(q)) as unknown as { rows: Row[] }).rows;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TYPEID = /\b([a-z]+)_([0-7][0-9a-hjkmnp-tv-z]{25})\b/g;
const OPAQUE = /[A-Za-z0-9+/=_.:-]{40,}/g;
export const SET_ASIDE: ReadonlySet<string> = new Set(['fingerprint', 'card_fingerprint', 'bank_fingerprint', 'redacted', 'duration_ms', 'slot', 'challenge_id', 'action_token', 'next_action']);
const QUERIES: Record<string, string> = {
  ledger_balances: 'SELECT account_id, livemode, ledger_account, currency, sum(balance)::bigint AS balance FROM ledger_balances GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4',
  // The fan-out names its deliveries with PostgreSQL's gen_random_uuid() (src/domain/webhooks/delivery/queue.ts),
  // which no seed reaches: ordered by what a delivery is for instead of by that id.
  webhook_deliveries: 'SELECT * FROM webhook_deliveries ORDER BY account_id, event_id, endpoint_id, "trigger", created_at, status, attempts',
  // Keyed by a hash of a random secret (src/storage/schema.ts): ordered by what a row stands for instead.
  api_key_lookups: 'SELECT * FROM api_key_lookups ORDER BY account_id, key_id',
  checkout_token_routes: 'SELECT * FROM checkout_token_routes ORDER BY account_id, token', // only tokens from before 0029: none here
};

/** `dump`: receives each normalised line (to compare two runs of a seed line by line). */
export async function stateDigest(db: Db, dump?: (line: string) => void): Promise<string> {
  const tables = (await rows(db, sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`)).map((r) => String(r.table_name));
  const tokens = new Map<string, number>();
  const hash = crypto.createHash('sha256');
  for (const table of tables) {
    if (table.startsWith('__drizzle')) continue;
    const keys = (await rows(db, sql`
      SELECT k.column_name FROM information_schema.table_constraints c
      JOIN information_schema.key_column_usage k ON k.constraint_name = c.constraint_name AND k.table_name = c.table_name
      WHERE c.table_name = ${table} AND c.constraint_type = 'PRIMARY KEY' ORDER BY k.ordinal_position`)).map((r) => `"${String(r.column_name)}"`);
    const order = keys.length ? keys.join(', ') : '1';
    hash.update(`\n${table}\n`);
    dump?.(`== ${table}`);
    for (const row of await rows(db, sql.raw(QUERIES[table] ?? `SELECT * FROM "${table}" ORDER BY ${order}`))) {
      const text = normalised(row, tokens);
      hash.update(text);
      dump?.(text);
      hash.update('\n');
    }
  }
  return hash.digest('hex');
}

/**
 * One digest line: `value` as JSON with the set-aside fields blanked, UUIDs and the TypeIDs made
 * from them as tokens of their first appearance in `tokens` (shared by the lines of one digest, so
 * an id reads the same wherever it appears), long opaque strings as a placeholder. Also what
 * test/engine/one-statement.differential.test.ts compares two databases by.
 */
export function normalised(value: unknown, tokens: Map<string, number>, setAside: ReadonlySet<string> = SET_ASIDE): string {
  const token = (uuid: string) => {
    if (!tokens.has(uuid)) tokens.set(uuid, tokens.size);
    return `#${tokens.get(uuid)}`;
  };
  return JSON.stringify(value, (k, v) => (setAside.has(k) ? '-' : typeof v === 'bigint' ? String(v) : v))
    .replace(TYPEID, (whole, prefix: string) => {
      try {
        return `${prefix}:${token(toUUID(fromString(whole, prefix) as never))}`;
      } catch {
        return whole;
      }
    })
    .replace(UUID, (uuid) => token(uuid))
    .replace(OPAQUE, '<opaque>');
}
