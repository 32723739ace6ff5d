// A PgBouncer in transaction mode of the benchmark's own (scripts/pgbouncer.sh: its own config in a
// temp dir, on a free port), so that figures can be taken through it as well as directly.
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { onCleanup } from './cleanup.js';
import { freePort, ROOT } from './service.js';

const run = promisify(execFile);

export interface PgBouncer {
  /** A database URL of the server behind it, reached through it. */
  through(databaseUrl: string): string;
  stop(): Promise<void>;
}

export const pgbouncerInstalled = () => spawnSync('pgbouncer', ['--version'], { stdio: 'ignore' }).status === 0;

/** Started, or undefined when PgBouncer is not installed. */
export async function startPgBouncer(): Promise<PgBouncer | undefined> {
  if (!pgbouncerInstalled()) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pgbouncer-'));
  const port = await freePort();
  const script = path.join(ROOT, 'scripts', 'pgbouncer.sh');
  await run(script, ['start', dir, String(port)]);
  const stop = onCleanup(`stop PgBouncer on port ${port}`, async () => {
    await run(script, ['stop', dir]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    through(databaseUrl) {
      const url = new URL(databaseUrl);
      url.host = `127.0.0.1:${port}`;
      return url.toString();
    },
    stop,
  };
}
