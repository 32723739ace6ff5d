// The service as a real, separate process — `node --import tsx src/main.ts` — exactly as it is
// deployed, with its own event loop and connection pool, on a free loopback port.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { onCleanup, onExitKill } from './cleanup.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ServiceProcess {
  url: string;
  pid: number;
  /** Graceful stop (SIGTERM, then SIGKILL after 10 s). Also runs from the cleanup. */
  stop(): Promise<void>;
  /** The last lines the process wrote (for error messages). */
  output(): string;
}

export interface ServiceOptions {
  databaseUrl: string;
  /** Extra environment, on top of the inherited one and the bench defaults. */
  env?: Record<string, string>;
  /** Extra node flags, e.g. ['--cpu-prof', '--cpu-prof-dir=bench/results/profiles']. */
  nodeArgs?: string[];
  /** Entry file relative to the repository root (default src/main.ts). */
  entry?: string;
  /** Another checkout to run the service from (bench/pgbouncer-burst.ts measures main's), default this one. */
  root?: string;
  startTimeoutMs?: number;
  /** The node binary (default BENCH_SERVICE_NODE, else the one running the bench), e.g. the deployment's Node 24. */
  node?: string;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export async function startServiceProcess(opts: ServiceOptions): Promise<ServiceProcess> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: opts.databaseUrl,
    HOST: '127.0.0.1',
    PORT: String(port),
    ROLES: 'api',
    LOG_LEVEL: 'warn',
    // The limiter must not shape the load: a budget far above anything two cores can serve.
    RATE_LIMIT_TEST_PER_S: '1000000',
    RATE_LIMIT_TEST_BURST: '1000000',
    RATE_LIMIT_LIVE_PER_S: '1000000',
    RATE_LIMIT_LIVE_BURST: '1000000',
    // In-process limiter unless the caller asks for Redis explicitly (BENCH_REDIS_URL).
    REDIS_URL: process.env.BENCH_REDIS_URL ?? '',
    ...opts.env,
  };
  const args = [...(opts.nodeArgs ?? []), '--import', 'tsx', opts.entry ?? 'src/main.ts'];
  const child = spawn(opts.node ?? (process.env.BENCH_SERVICE_NODE || process.execPath), args, { cwd: opts.root ?? ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const unregisterKill = onExitKill(() => child.kill('SIGKILL'));
  const stop = onCleanup(`stop service pid ${child.pid}`, async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      if (!(await waitExit(child, 10_000))) {
        child.kill('SIGKILL');
        await waitExit(child, 5_000);
      }
    }
    unregisterKill();
  });

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.startTimeoutMs ?? 60_000);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(`the service exited during start-up (code ${child.exitCode}, signal ${child.signalCode}):\n${tail}`);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the service did not become ready on ${url} in time:\n${tail}`);
    }
    try {
      const res = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, pid: child.pid!, stop, output: () => tail };
}
