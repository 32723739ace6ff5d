// A private PostgreSQL primary and a streaming replica of it (scripts/replica.sh) for the file that
// uses them: started in beforeAll on free ports in a temp dir, stopped and removed after. Where the
// PostgreSQL server binaries are not installed the tests skip, except in CI (which has them).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { isPostgres } from './helpers.js';
import { ROOT } from './processes.js';
import { freePort } from './sockets.js';

const run = promisify(execFile);
const SCRIPT = path.join(ROOT, 'scripts', 'replica.sh');

const binaries = (process.env.PG_BIN ? [process.env.PG_BIN] : fs.existsSync('/usr/lib/postgresql') ? fs.readdirSync('/usr/lib/postgresql').sort().reverse().map((v) => `/usr/lib/postgresql/${v}/bin`) : []).find((bin) =>
  fs.existsSync(path.join(bin, 'initdb')),
);

const script = (args: string[]) => run(SCRIPT, args, { env: { ...process.env, ...(binaries ? { PG_BIN: binaries } : {}) } });

/** Whether the replica tests run: on PostgreSQL, with its server binaries there or required (CI). */
export const replicaRuns = isPostgres && (binaries !== undefined || process.env.CI === 'true');
/** Why they do not, for the skipped test's title. */
export const replicaSkipReason = replicaRuns
  ? undefined
  : isPostgres
    ? 'no PostgreSQL server binaries (initdb, pg_basebackup) in PG_BIN or /usr/lib/postgresql/*/bin'
    : 'the embedded database has no replica';

export interface ReplicaPair {
  /** Database `name` on the primary and on the replica. */
  primaryUrl(name: string): string;
  replicaUrl(name: string): string;
  /** Until the replica has replayed all the primary has written so far. */
  caughtUp(timeoutMs?: number): Promise<void>;
  stopReplica(): Promise<void>;
}

export function useReplica(opts: { applyDelay: string }): ReplicaPair {
  let dir: string | undefined;
  let ports: [number, number] | undefined;
  const url = (port: number, name: string) => `postgres://postgres@127.0.0.1:${port}/${name}`;
  const need = () => {
    if (!ports) throw new Error('replica: used before its beforeAll ran');
    return ports;
  };
  beforeAll(async () => {
    if (!replicaRuns) return;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'po-replica-'));
    ports = [await freePort(), await freePort()];
    await script(['start', dir, String(ports[0]), String(ports[1]), opts.applyDelay]);
  }, 60_000);
  afterAll(async () => {
    if (!dir) return;
    try {
      await script(['stop', dir]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  return {
    primaryUrl: (name) => url(need()[0], name),
    replicaUrl: (name) => url(need()[1], name),
    async caughtUp(timeoutMs = 30_000) {
      const [primary, replica] = [new pg.Client(url(need()[0], 'postgres')), new pg.Client(url(need()[1], 'postgres'))];
      await Promise.all([primary.connect(), replica.connect()]);
      try {
        const target = (await primary.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn;
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const { rows } = await replica.query<{ done: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [target]);
          if (rows[0]!.done) return;
          if (Date.now() > deadline) throw new Error(`replica: not caught up with ${target} in ${timeoutMs} ms`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        await Promise.all([primary.end(), replica.end()]);
      }
    },
    async stopReplica() {
      await script(['stop-replica', dir!]);
    },
  };
}
