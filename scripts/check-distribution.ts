// Checks that the schema can be distributed by account with Citus (docs/operations.md#distributing-by-account-citus),
// from what a migrated database really holds (pg_class, pg_index, pg_constraint), not from
// src/storage/schema.ts. Every table is one of three placements:
//
//   distributed by account_id (any table not listed below): an account_id uuid NOT NULL column, and
//     every primary key, unique index and exclusion constraint includes it (a key such as
//     (account_id, id, created_at), a partition key added, passes); its foreign keys go to reference
//     tables, or to distributed tables with account_id matched to account_id;
//   reference (PLACEMENTS): small, copied to every node, with a reason; a foreign key from it goes
//     only to another reference table;
//   local (PLACEMENTS): stays on the coordinator, with a reason; nothing refers to it.
//
// And each global look-up (LOOKUPS: something found with no account in hand) has a reference table
// designed for it: keyed uniquely by what is looked up, and naming the account.
//
//   npm run check:distribution              a throwaway database, migrated, checked, dropped
//   npm run check:distribution -- --url U   an existing database, as it is
//   npm run check:distribution -- --plan    prints the Citus calls of the migration plan
import crypto from 'node:crypto';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { openPostgres, runMigrations } from '../src/storage/db.js';

export type Placement = { kind: 'reference' | 'local'; reason: string };

/** The tables not distributed by account_id, each with why (by schema-qualified name when not in public). */
export const PLACEMENTS: Record<string, Placement> = {
  accounts: {
    kind: 'reference',
    reason: 'the tenants themselves, one row each: every account_id refers to it, and authentication reads it with the key',
  },
  api_key_lookups: { kind: 'reference', reason: 'an API key by its hash, which is all a request carries (one row per key)' },
  checkout_token_routes: { kind: 'reference', reason: 'the accounts of checkout tokens made before they named their account (filled once, by migration 0029)' },
  connector_account_routes: { kind: 'reference', reason: "a connector account by the id in its webhook URL (one row per connector account)" },
  dashboard_sessions: { kind: 'reference', reason: 'a dashboard session by the hash of its cookie or one-time code (one row per sign-in)' },
  unmatched_dispute_reports: {
    kind: 'reference',
    reason: "processors' dispute reports naming no payment of ours, kept for the operator: no account to distribute by, and rare",
  },
  simulator_objects: {
    kind: 'reference',
    reason: "the built-in test processors' own books (test mode), keyed as a processor keys them: by our reference, not by account",
  },
  simulator_reports: { kind: 'reference', reason: "webhooks the built-in test processors owe the service (test mode): the processors' state, not a tenant's" },
  'drizzle.__drizzle_migrations': { kind: 'local', reason: 'migration bookkeeping, read and written by the migrator on the coordinator only' },
};

/** The global look-ups and the reference table each goes through: unique on `by`, naming account_id. */
export const LOOKUPS: { what: string; table: string; by: string }[] = [
  { what: 'API key by its hash (authentication)', table: 'api_key_lookups', by: 'key_hash' },
  { what: 'checkout token made before migration 0029', table: 'checkout_token_routes', by: 'token' },
  { what: "connector account by its webhook URL's id (inbound processor webhooks)", table: 'connector_account_routes', by: 'id' },
  { what: 'dashboard session by its cookie', table: 'dashboard_sessions', by: 'token_hash' },
  { what: 'dashboard session by its one-time code', table: 'dashboard_sessions', by: 'code_hash' },
];

const DISTRIBUTION_COLUMN = 'account_id';

type Query = (text: string) => Promise<Record<string, any>[]>;

interface Table {
  name: string;
  columns: Map<string, { type: string; notNull: boolean }>;
}

/** What is wrong, one line each; empty when the schema is ready to distribute. */
export async function checkDistribution(query: Query): Promise<string[]> {
  const tables = await readTables(query);
  const byName = new Map(tables.map((t) => [t.name, t]));
  const placement = (name: string): Placement['kind'] | 'distributed' => PLACEMENTS[name]?.kind ?? 'distributed';
  const problems: string[] = [];

  for (const name of Object.keys(PLACEMENTS)) {
    if (!byName.has(name)) problems.push(`${name}: listed as ${PLACEMENTS[name]!.kind} in PLACEMENTS but no such table`);
  }
  for (const table of tables) {
    if (placement(table.name) !== 'distributed') continue;
    const column = table.columns.get(DISTRIBUTION_COLUMN);
    if (!column) problems.push(`${table.name}: no ${DISTRIBUTION_COLUMN} column to distribute by (add it, or list the table in PLACEMENTS with a reason)`);
    else if (column.type !== 'uuid' || !column.notNull) problems.push(`${table.name}: ${DISTRIBUTION_COLUMN} must be uuid NOT NULL (is ${column.type}${column.notNull ? ' NOT NULL' : ', nullable'})`);
  }

  const unique = await query(UNIQUE_KEYS);
  for (const key of unique) {
    if (placement(key.table) !== 'distributed') continue;
    const columns: (string | null)[] = key.columns;
    if (!columns.includes(DISTRIBUTION_COLUMN)) {
      problems.push(`${key.table}: ${key.kind} ${key.name} (${columns.map((c) => c ?? '<expression>').join(', ')}) does not include ${DISTRIBUTION_COLUMN}: a distributed table cannot enforce it`);
    }
  }

  for (const fk of await query(FOREIGN_KEYS)) {
    const from = placement(fk.table);
    const to = placement(fk.target);
    const where = `${fk.table}: foreign key ${fk.name} to ${fk.target}`;
    if (to === 'local') problems.push(`${where}: refers to a local table`);
    else if (from !== 'distributed' && to === 'distributed') problems.push(`${where}: a ${from} table cannot refer to a distributed one`);
    else if (from === 'distributed' && to === 'distributed') {
      const at = (fk.columns as string[]).indexOf(DISTRIBUTION_COLUMN);
      if (at < 0 || fk.target_columns[at] !== DISTRIBUTION_COLUMN) problems.push(`${where}: must match ${DISTRIBUTION_COLUMN} to ${DISTRIBUTION_COLUMN}`);
    } else if (from === 'local') problems.push(`${where}: a local table refers to nothing`);
  }

  for (const lookup of LOOKUPS) {
    const table = byName.get(lookup.table);
    const where = `look-up "${lookup.what}" through ${lookup.table}`;
    if (!table) problems.push(`${where}: no such table`);
    else if (placement(lookup.table) !== 'reference') problems.push(`${where}: not a reference table`);
    else {
      if (!unique.some((k) => k.table === lookup.table && k.columns.length === 1 && k.columns[0] === lookup.by)) problems.push(`${where}: no unique key on (${lookup.by}) alone`);
      if (!table.columns.get(DISTRIBUTION_COLUMN)?.notNull) problems.push(`${where}: no ${DISTRIBUTION_COLUMN} NOT NULL naming the owner`);
    }
  }
  return problems;
}

const TABLE_NAME = `CASE WHEN n.nspname = 'public' THEN c.relname ELSE n.nspname || '.' || c.relname END`;
// Tables of the user's schemas; a partition is its parent's, so only parents and plain tables count.
const USER_TABLES = `c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'`;

const TABLES = `
SELECT ${TABLE_NAME} AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE ${USER_TABLES}
ORDER BY 1, a.attnum`;

// Primary keys and unique indexes (a partial one too: still unique), and exclusion constraints;
// an expression's column is null.
const UNIQUE_KEYS = `
SELECT ${TABLE_NAME} AS table, i.relname AS name,
       CASE WHEN x.indisprimary THEN 'primary key' WHEN x.indisexclusion THEN 'exclusion constraint' ELSE 'unique index' END AS kind,
       array(SELECT a.attname FROM unnest(x.indkey[0:x.indnkeyatts - 1]) WITH ORDINALITY k(attnum, ord)
             LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS columns
FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE (x.indisunique OR x.indisexclusion) AND ${USER_TABLES}
ORDER BY 1, 2`;

const FOREIGN_KEYS = `
SELECT ${TABLE_NAME} AS table, f.conname AS name,
       (SELECT CASE WHEN tn.nspname = 'public' THEN t.relname ELSE tn.nspname || '.' || t.relname END
          FROM pg_class t JOIN pg_namespace tn ON tn.oid = t.relnamespace WHERE t.oid = f.confrelid) AS target,
       array(SELECT a.attname FROM unnest(f.conkey) WITH ORDINALITY k(attnum, ord) JOIN pg_attribute a ON a.attrelid = f.conrelid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS columns,
       array(SELECT a.attname FROM unnest(f.confkey) WITH ORDINALITY k(attnum, ord) JOIN pg_attribute a ON a.attrelid = f.confrelid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS target_columns
FROM pg_constraint f JOIN pg_class c ON c.oid = f.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE f.contype = 'f' AND ${USER_TABLES} AND f.conparentid = 0
ORDER BY 1, 2`;

async function readTables(query: Query): Promise<Table[]> {
  const tables = new Map<string, Table>();
  for (const row of await query(TABLES)) {
    const table = tables.get(row.table) ?? { name: row.table, columns: new Map() };
    tables.set(row.table, table);
    if (row.column) table.columns.set(row.column, { type: row.type, notNull: row.not_null });
  }
  return [...tables.values()];
}

/**
 * The Citus calls that distribute the schema, in dependency order: reference tables first (a table
 * another refers to before it), then the tables distributed by account_id, all colocated with the first.
 */
export async function migrationPlan(query: Query): Promise<string[]> {
  const names = (await readTables(query)).map((t) => t.name).sort();
  const fks = await query(FOREIGN_KEYS);
  const reference = names.filter((n) => PLACEMENTS[n]?.kind === 'reference');
  const ordered: string[] = [];
  const visit = (name: string) => {
    if (ordered.includes(name)) return;
    for (const fk of fks) if (fk.table === name && fk.target !== name && reference.includes(fk.target)) visit(fk.target);
    ordered.push(name);
  };
  reference.forEach(visit);
  const distributed = names.filter((n) => !PLACEMENTS[n]);
  return [
    ...ordered.map((n) => `SELECT create_reference_table('${n}');`),
    ...distributed.map((n, i) =>
      i === 0
        ? `SELECT create_distributed_table('${n}', '${DISTRIBUTION_COLUMN}', colocate_with => 'none');`
        : `SELECT create_distributed_table('${n}', '${DISTRIBUTION_COLUMN}', colocate_with => '${distributed[0]}');`,
    ),
  ];
}

/** Runs `use` on a new database migrated to the repository's migrations, then drops it. */
async function withMigratedDatabase<T>(adminUrl: string, use: (query: Query) => Promise<T>): Promise<T> {
  const name = `po_distribution_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  try {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const database = await openPostgres(url.toString(), { poolSize: 2 });
    try {
      await runMigrations(database);
    } finally {
      await database.close();
    }
    return await withDatabase(url.toString(), use);
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

export async function withDatabase<T>(url: string, use: (query: Query) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(async (text) => (await client.query(text)).rows);
  } finally {
    await client.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--url');
  const url = at >= 0 ? args[at + 1] : undefined;
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const run = <T>(use: (query: Query) => Promise<T>) => (url ? withDatabase(url, use) : withMigratedDatabase(adminUrl, use));
  if (args.includes('--plan')) {
    console.log((await run(migrationPlan)).join('\n'));
  } else {
    const problems = await run(checkDistribution);
    for (const problem of problems) console.error(`distribution: ${problem}`);
    console.log(`check:distribution: ${problems.length === 0 ? 'ready to distribute by account_id' : `${problems.length} violation(s)`}`);
    process.exit(problems.length === 0 ? 0 : 1);
  }
}
