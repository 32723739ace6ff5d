// A service as its own OS process (src/main.ts, on a free port when it has the api role): for the
// tests that run several processes on one PostgreSQL database, or kill one with a real SIGKILL
// (between the phases of a movement with CRASH_AFTER, or in the middle of a batch) and carry on
// from another process.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect } from 'vitest';
import { useDatabase, type DatabaseFixture } from './fixtures.js';
import { call, client, isPostgres, type Api, type ApiResponse, type Tenant } from './helpers.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Child {
  process: ChildProcess;
  /** Its base URL ('' for a process without the api role). */
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
  /** Stops it (SIGTERM, then SIGKILL after 10 s) unless it has exited. */
  close(): Promise<void>;
}

/**
 * Starts the service with `env` over the test defaults (api role, no rate limit), ready to serve.
 * `command` starts it another way (`npm start`), in a process group of its own so that a test can
 * remove whatever it leaves behind (killGroup).
 */
export async function startChild(env: Record<string, string>, startTimeoutMs = 45_000, command?: string[]): Promise<Child> {
  const [file, ...args] = command ?? [process.execPath, '--import', 'tsx', 'src/main.ts'];
  const child = spawn(file!, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', METRICS_PORT: '0', ROLES: 'api', LOG_LEVEL: 'warn', RATE_LIMIT_TEST_PER_S: '100000', RATE_LIMIT_TEST_BURST: '100000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: command !== undefined,
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
  child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const handle: Child = { process: child, url: '', exited, output: () => output, close: () => stopChild(handle) };
  // A process serving the API says where; a worker-only one, that it runs.
  const serves = (env.ROLES ?? 'api').split(',').includes('api');
  const started = serves ? /Listening on (http:\/\/\S+)/ : /Worker running()/;
  // A process that did not come up in time is stopped, not left running past the test.
  const failed = async (err: Error): Promise<never> => {
    child.kill('SIGKILL');
    await exited;
    throw err;
  };
  handle.url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), startTimeoutMs);
    child.stdout!.on('data', () => {
      const match = started.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`service exited during start-up:\n${output}`));
    });
  }).catch(failed);
  if (!serves) return handle;
  for (let i = 0; (await call(handle.url, 'GET', '/ready').catch(() => undefined))?.status !== 200; i++) {
    if (i > 100) await failed(new Error(`service never became ready:\n${output}`));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return handle;
}

export async function stopChild(child: Child | undefined) {
  if (!child || child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 10_000);
  await child.exited;
  clearTimeout(timer);
}

/** SIGKILL to every process still in the group of a child started with its own `command`. */
export function killGroup(child: Child) {
  try {
    process.kill(-child.process.pid!, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Kills it with SIGKILL, as a power cut would, and waits until it is gone. */
export async function killChild(child: Child) {
  child.process.kill('SIGKILL');
  expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
}

/**
 * A PostgreSQL database of its own with a tenant, then `count` service processes on it (started
 * after the tenant, so that none bootstraps a first-start account), stopped after the block.
 */
export function useServiceProcesses(count: number, opts: { tenantName: string; env?: Record<string, string>; prepare?: (h: DatabaseFixture, tenant: Tenant) => Promise<unknown> }) {
  const h = useDatabase({ postgresOnly: true });
  let tenant: Tenant | undefined;
  let children: Child[] = [];
  beforeAll(async () => {
    if (!isPostgres) return;
    tenant = await h.createTenant(opts.tenantName);
    await opts.prepare?.(h, tenant);
    children = await Promise.all(Array.from({ length: count }, async () => h.track(await startChild({ DATABASE_URL: h.databaseUrl!, ...opts.env }))));
  }, 120_000);
  return {
    h,
    tenant: () => tenant!,
    children: () => children,
  };
}

/** Sends until the key is free: a crashed request's lock on it lapses after IDEMPOTENCY_LOCK_TIMEOUT_S (409 until then). */
export async function sendWhileLocked(send: () => Promise<ApiResponse>): Promise<ApiResponse> {
  for (let i = 0; ; i++) {
    const res = await send();
    if (res.status !== 409 || i >= 50) return res;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * The set-up of a crash test (test/engine/crash*.test.ts): a PostgreSQL database with a tenant, a
 * surviving service process started with `env` (plus a short idempotency lock and the connector
 * deadline to match), `prepare`d once it serves (a connector account, a route), and the two halves
 * of a crash: a request sent to a process that dies at CRASH_AFTER, then retried on the survivor.
 */
export function useCrashedService<P>(opts: { tenantName: string; env: () => Record<string, string>; prepare: (api: Api, url: string) => Promise<P> }) {
  const h = useDatabase({ postgresOnly: true });
  let tenant: Tenant | undefined;
  let survivor: Child | undefined;
  let api: Api | undefined;
  let prepared: P | undefined;
  // A short lock needs a connector timeout to match (config.ts refuses a lock the route could outlast).
  const env = () => ({ DATABASE_URL: h.databaseUrl!, IDEMPOTENCY_LOCK_TIMEOUT_S: '3', CONNECTOR_TIMEOUT_MS: '700', ...opts.env() });
  beforeAll(async () => {
    tenant = await h.createTenant(opts.tenantName);
    survivor = h.track(await startChild(env()));
    api = client(survivor.url, tenant.testKey);
    prepared = await opts.prepare(api, survivor.url);
  }, 120_000);
  const post = (url: string, path: string, body: unknown, idempotencyKey: string) => call(url, 'POST', path, { key: tenant!.testKey, idempotencyKey, body });
  return {
    h,
    env,
    tenant: () => tenant!,
    survivor: () => survivor!,
    api: () => api!,
    prepared: () => prepared!,
    /** Sends `path` to a process that dies at `crashAfter`, and checks it died with the request. */
    async crashing(crashAfter: string, path: string, body: unknown, idempotencyKey: string) {
      const child = h.track(await startChild({ ...env(), CRASH_AFTER: crashAfter }));
      const attempt = await post(child.url, path, body, idempotencyKey).catch((err: Error) => err);
      expect(attempt).toBeInstanceOf(Error); // the connection died with the process
      expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
    },
    /** The same request on the survivor, once the crashed one's lock on the key has lapsed. */
    retry: (path: string, body: unknown, idempotencyKey: string) => sendWhileLocked(() => post(survivor!.url, path, body, idempotencyKey)),
  };
}
