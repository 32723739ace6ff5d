// A PgBouncer in transaction mode for the tests that need one in the path: .ci/run's (TEST_POOLER_URL)
// when the suite runs through it, otherwise one of the file's own, started with scripts/pgbouncer.sh
// on a free port. Where PgBouncer is not installed the tests skip, except in CI (which installs it).
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { isPostgres, POOLER_URL } from './helpers.js';
import { ROOT } from './processes.js';
import { freePort } from './sockets.js';

const run = promisify(execFile);
const SCRIPT = path.join(ROOT, 'scripts', 'pgbouncer.sh');

const installed = spawnSync('pgbouncer', ['--version'], { stdio: 'ignore' }).status === 0;

/** Whether the PgBouncer tests run: on PostgreSQL, with PgBouncer there or required (CI). */
export const pgbouncerRuns = isPostgres && (POOLER_URL !== undefined || installed || process.env.CI === 'true');

export interface Pooler {
  /** `databaseUrl` (a database on the server behind the pooler) reached through the pooler. */
  through(databaseUrl: string): string;
}

/** The pooler of the enclosing file (started in beforeAll unless .ci/run's is given, stopped after). */
export function usePgBouncer(): Pooler {
  let base: URL | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    if (!pgbouncerRuns) return;
    if (POOLER_URL) {
      base = new URL(POOLER_URL);
      return;
    }
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'po-pgbouncer-'));
    const port = await freePort();
    await run(SCRIPT, ['start', dir, String(port)]);
    base = new URL(`postgres://postgres@127.0.0.1:${port}/postgres`);
  }, 30_000);
  afterAll(async () => {
    if (!dir) return;
    await run(SCRIPT, ['stop', dir]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    through(databaseUrl) {
      if (!base) throw new Error('pooler: read before its beforeAll ran');
      const url = new URL(databaseUrl);
      url.host = base.host;
      return url.toString();
    },
  };
}
