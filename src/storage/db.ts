// Database clients: PostgreSQL through node-postgres, or the embedded PGlite when no DATABASE_URL is
// set. Both sit behind the same drizzle API, so the rest of the code has a single code path.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { sql, type ExtractTablesWithRelations } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import * as schema from './schema.js';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
export type Executor = Db | Tx;

/** The rows of a raw statement's result (`db.execute(sql…)`), which drizzle types loosely. */
export const rowsOf = <R = Record<string, unknown>>(result: unknown): R[] => (result as { rows: R[] }).rows;

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** PostgreSQL connection string (absent for PGlite). */
  url?: string;
  close(): Promise<void>;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;
// Amounts are bigint columns but always below 2^53, so both drivers hand them back as numbers
// (pg's default is a string, PGlite's a number): one representation everywhere.
pg.types.setTypeParser(INT8_OID, (value) => Number(value));
pg.types.setTypeParser(NUMERIC_OID, (value) => Number(value));

// Generated SQL beside the code rather than in it (drizzle.config.ts): two levels up from both
// src/storage/db.ts and the build's dist/storage/db.js.
export const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations');

/**
 * How parameterised statements reach PostgreSQL (DATABASE_PREPARED_STATEMENTS). `named`: each is
 * a named prepared statement, parsed and planned once per connection instead of at every
 * execution, which halves PostgreSQL's CPU per statement on the service's short queries
 * (bench/README.md). A named statement lives on one server connection, so it works only where a
 * client connection is one server connection: directly on PostgreSQL, or a pooler in session
 * mode. `unnamed`: every statement is parsed where it runs, which works behind a transaction
 * pooler (PgBouncer's pool_mode = transaction), where each transaction may get another server
 * connection and a name prepared on one is unknown (or already taken) on the next.
 */
export type PreparedStatements = 'named' | 'unnamed';
export const PREPARED_STATEMENTS: readonly PreparedStatements[] = ['named', 'unnamed'];

// Names are shared by all connections (one name, one text) and capped, so statements whose text
// varies without bound (a list of n values) cannot grow each backend's memory without limit: past
// the cap they go unnamed.
const STATEMENT_NAME_CAP = 2000;
const statementNames = new Map<string, string>();

function statementName(text: string): string | undefined {
  const known = statementNames.get(text);
  if (known !== undefined || statementNames.size >= STATEMENT_NAME_CAP) return known;
  const name = `s${statementNames.size}`;
  statementNames.set(text, name);
  return name;
}

class PoolClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    // A connection that breaks while checked out of the pool (a PostgreSQL restart, a network cut)
    // emits 'error' between queries, where nobody listens: unheard, it would kill the process. The
    // failure reaches whoever uses the client through its next query, and the pool drops it.
    this.on('error', () => {});
  }
}

/** Names every parameterised statement (`named` mode). */
class PreparingClient extends PoolClient {
  override query(...args: unknown[]): never {
    const [config, values] = args as [unknown, unknown];
    if (typeof config === 'object' && config !== null && 'text' in config && !(config as pg.QueryConfig).name) {
      const params = (config as pg.QueryConfig).values ?? values;
      const name = Array.isArray(params) && params.length > 0 ? statementName((config as pg.QueryConfig).text) : undefined;
      if (name) args[0] = { ...(config as pg.QueryConfig), name };
    } else if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
      const name = statementName(config);
      if (name) args[0] = { text: config, name };
    }
    return (super.query as (...a: unknown[]) => never)(...args);
  }
}

/** Names none (`unnamed` mode): a name given by a caller (the raw fast paths) is dropped here, in one place. */
class UnnamedClient extends PoolClient {
  override query(...args: unknown[]): never {
    const config = args[0];
    if (typeof config === 'object' && config !== null && 'text' in config && (config as pg.QueryConfig).name) {
      const { name: _dropped, ...rest } = config as pg.QueryConfig;
      args[0] = rest;
    }
    return (super.query as (...a: unknown[]) => never)(...args);
  }
}

export interface PostgresOptions {
  poolSize?: number;
  /** How long a new connection may take to open before its waiter gives up. */
  connectTimeoutMs?: number;
  /** How long a statement may run: the server cancels it, and the client gives up on a silent server. */
  queryTimeoutMs?: number;
  preparedStatements?: PreparedStatements;
}

export async function openPostgres(url: string, opts: PostgresOptions = {}): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 20,
    Client: (opts.preparedStatements ?? 'named') === 'named' ? PreparingClient : UnnamedClient,
    // Without a bound, a request waits for a connection to a silent (partitioned) server for as
    // long as the kernel keeps trying to connect: minutes.
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
    // Finds connections to a server that went silent while they sat idle in the pool.
    keepAlive: true,
    ...(opts.queryTimeoutMs === undefined ? {} : { statement_timeout: opts.queryTimeoutMs, query_timeout: opts.queryTimeoutMs }),
  });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  return { db, kind: 'postgres', url, close: () => pool.end() };
}

export class DataDirLockedError extends Error {}

/** PGlite is single-process: a lock file stops a second process from opening the same directory. */
function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const lockPath = path.join(dir, 'service.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      return () => fs.rmSync(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(fs.readFileSync(lockPath, 'utf8'));
      if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
        throw new DataDirLockedError(
          `the embedded database in ${dir} is in use by process ${pid}; stop it, or set DATA_DIR to another directory (or DATABASE_URL to use PostgreSQL)`,
        );
      }
      // The holder died without cleaning up: the lock is stale and ours to take.
      fs.rmSync(lockPath, { force: true });
    }
  }
  throw new DataDirLockedError(`could not lock ${lockPath}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** dataDir undefined means an in-memory database (tests). */
export async function openPglite(dataDir: string | undefined): Promise<Database> {
  const unlock = dataDir ? lockDataDir(dataDir) : () => {};
  try {
    const client = new PGlite(dataDir ? path.join(dataDir, 'pglite') : undefined, { parsers: { [INT8_OID]: Number, [NUMERIC_OID]: Number } });
    await client.waitReady;
    const db = drizzlePglite(client, { schema }) as unknown as Db;
    return {
      db,
      kind: 'pglite',
      close: async () => {
        await client.close();
        unlock();
      },
    };
  } catch (err) {
    unlock();
    throw err;
  }
}

export async function openDatabase(opts: PostgresOptions & { databaseUrl?: string; dataDir?: string }): Promise<Database> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts) : openPglite(opts.dataDir);
}

/** The drizzle migrator's own bookkeeping table, kept so that databases migrated before stay valid. */
const MIGRATIONS_TABLE = 'drizzle.__drizzle_migrations';

export async function runMigrations(database: Database): Promise<void> {
  if (database.kind === 'pglite') {
    await migratePglite(database.db as never, { migrationsFolder });
    return;
  }
  // Several processes may start at once against one database. One transaction takes a
  // transaction-level advisory lock, reads what is applied and applies the rest, so the migrators
  // run one after the other and none sees a half-applied schema. A session-level lock would not
  // survive a transaction pooler (PgBouncer's pool_mode = transaction gives each statement outside
  // a transaction any server connection: the lock and the migration could land on different ones,
  // and the lock would stay behind on a connection other clients reuse); drizzle's own migrator
  // reads the applied migrations outside its transaction, so it is replaced by this loop, which
  // keeps its table and bookkeeping.
  await database.db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(72707001)`);
    await tx.execute(sql.raw('CREATE SCHEMA IF NOT EXISTS drizzle'));
    await tx.execute(sql.raw(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`));
    const applied = (await tx.execute(sql.raw(`SELECT created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`))) as unknown as { rows: { created_at: number }[] };
    const last = applied.rows[0] ? Number(applied.rows[0].created_at) : undefined;
    for (const migration of readMigrationFiles({ migrationsFolder })) {
      if (last !== undefined && last >= migration.folderMillis) continue;
      for (const statement of migration.sql) await tx.execute(sql.raw(statement));
      await tx.execute(sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${migration.hash}, ${migration.folderMillis})`);
    }
  });
}
