// The SQL one request sends: the service started in this process on a database of its own, with
// pg.Client.prototype.query patched to record every statement (text and bind parameters) while a
// request runs. bench/trace-sql.ts prints it; bench/payments-saved.ts builds its pgbench script
// from it, so that the ceiling is the service's own statements, read at the start of every run.
import crypto from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { openPostgres, runMigrations, type Database } from '../../src/storage/db.js';
import { startService } from '../../src/service.js';
import { createAccount, issueKey } from '../../src/domain/accounts/service.js';
import { MemoryRateLimiter } from '../../src/http/rate-limiter.js';

export interface TracedStatement {
  /** The statement's text, whitespace as sent. */
  text: string;
  values: unknown[];
  /** The prepared statement's name, when it was sent as one. */
  name?: string;
}

let recording: TracedStatement[] | undefined;
let patched = false;
const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;

function patchOnce(): void {
  if (patched) return;
  patched = true;
  (pg.Client.prototype as { query: unknown }).query = function (this: unknown, ...args: unknown[]) {
    if (recording) {
      const q = args[0] as string | { text: string; values?: unknown[]; name?: string };
      const text = typeof q === 'string' ? q : q.text;
      const values = (typeof q === 'string' ? args[1] : (q.values ?? args[1])) as unknown[] | undefined;
      recording.push({ text, values: values ?? [], ...(typeof q === 'object' && q.name ? { name: q.name } : {}) });
    }
    return original.apply(this, args);
  };
}

/** Every statement sent while `fn` runs (one request at a time: nothing else may use the database meanwhile). */
export async function traceStatements<T>(fn: () => Promise<T>): Promise<{ result: T; statements: TracedStatement[] }> {
  patchOnce();
  if (recording) throw new Error('traceStatements does not nest');
  const statements: TracedStatement[] = [];
  recording = statements;
  try {
    return { result: await fn(), statements };
  } finally {
    recording = undefined;
  }
}

export interface TracedService {
  /** Base URL of the in-process service. */
  url: string;
  /** Bearer secret of a test-mode key of the one account. */
  secret: string;
  database: Database;
  databaseUrl: string;
  /** Runs one statement on the service's database (own connection, not traced). */
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  /** Stops the service and drops its database. */
  close(): Promise<void>;
}

/**
 * The service in this process (roles api, the in-process simulator answering at once) on a fresh
 * database `bench_trace_<random>` created through `adminUrl`, with one account and a test key.
 */
export async function startTracedService(adminUrl: string): Promise<TracedService> {
  patchOnce();
  const name = `bench_trace_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const drop = async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  };
  try {
    const database = await openPostgres(url.toString(), { poolSize: 4 });
    await runMigrations(database);
    const account = await createAccount(database.db, 'trace');
    const key = await issueKey(database.db, account.id, { livemode: false });
    const env = { SIMULATOR_LATENCY_MS: '0', SIMULATOR_URL: '' };
    const service = await startService({ ...loadConfig(env), databaseUrl: url.toString(), port: 0, roles: ['api'] }, {
      database,
      logger: false,
      rateLimiter: new MemoryRateLimiter(),
    });
    return {
      url: service.url!,
      secret: key.secret,
      database,
      databaseUrl: url.toString(),
      query: async <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => {
        const client = new pg.Client({ connectionString: url.toString() });
        await client.connect();
        try {
          return (await original.call(client, text, values) as pg.QueryResult<R>).rows;
        } finally {
          await client.end();
        }
      },
      close: async () => {
        await service.close();
        await database.close();
        await drop();
      },
    };
  } catch (err) {
    await drop();
    throw err;
  }
}

/** A POST (or `method`) with the key, a fresh Idempotency-Key and a JSON body; the answer's status and body. */
export async function postJson(base: string, secret: string, path: string, body: unknown, method = 'POST'): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** One line per statement, whitespace collapsed, with its parameters. */
export function describeTrace(statements: TracedStatement[]): string {
  return statements.map((s) => `${s.text.replace(/\s+/g, ' ').trim()}${s.values.length ? `\n    -- params: ${JSON.stringify(s.values)}` : ''}`).join('\n\n');
}
