// A fresh PostgreSQL database per benchmark (bench_<random>), dropped again by the cleanup.
import crypto from 'node:crypto';
import pg from 'pg';
import { onCleanup, withTimeout } from './cleanup.js';

export interface BenchDatabase {
  name: string;
  url: string;
  /** Runs one statement on this database (own short-lived connection). */
  query<R extends pg.QueryResultRow = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await withTimeout(client.connect(), 15_000, `connecting to ${new URL(url).host}`);
  try {
    return await withTimeout(fn(client), 120_000, 'database statement');
  } finally {
    await client.end().catch(() => {});
  }
}

export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `bench_${crypto.randomBytes(5).toString('hex')}`;
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const drop = onCleanup(`drop database ${name}`, () =>
    withClient(adminUrl, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }),
  );
  return {
    name,
    url: url.toString(),
    query: (text, values) => withClient(url.toString(), async (c) => (await c.query(text, values)).rows),
    drop,
  };
}

/** Server facts worth keeping next to the numbers (they bound the ceiling). */
export async function serverInfo(url: string): Promise<Record<string, string>> {
  return withClient(url, async (c) => {
    const names = ['server_version', 'max_connections', 'shared_buffers', 'synchronous_commit', 'fsync', 'wal_sync_method', 'commit_delay'];
    const out: Record<string, string> = {};
    for (const n of names) out[n] = String((await c.query(`SHOW ${n}`)).rows[0]?.[n] ?? '');
    return out;
  });
}

/** Flushes dirty pages so each measured phase starts from the same checkpoint state. */
export async function checkpoint(url: string): Promise<void> {
  await withClient(url, (c) => c.query('CHECKPOINT')).catch(() => {
    // needs superuser (or pg_checkpoint); without it the phases are merely a little noisier
  });
}
