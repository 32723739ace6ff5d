// Test harness: a fresh database per test file (a new PostgreSQL database, or an in-memory
// PGlite), a real service listening on a loopback port, and tenants with their own keys, so test
// files never share state and can run in parallel. Test files get all of it through fixtures.ts.
import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import type { SQL } from 'drizzle-orm';
import pg from 'pg';
import { expect } from 'vitest';
import { loadConfig, type Config, type CrashPoint, type PaymentsConfig } from '../../src/config.js';
import { openPglite, openPostgres, runMigrations, type Database } from '../../src/storage/db.js';
import { startService, type Service } from '../../src/service.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime.js';
import { activateLive, createAccount, issueKey } from '../../src/domain/accounts/service.js';
import { runPayoutJobs } from '../../src/domain/payouts/submission.js';
import { MemoryRateLimiter, type RateLimiter } from '../../src/http/rate-limiter.js';
import { runWorkerOnce, type WorkerDeps } from '../../src/worker/worker.js';

export const TEST_DB = (process.env.TEST_DB ?? 'postgres') as 'postgres' | 'pglite';
export const ADMIN_URL = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const isPostgres = TEST_DB === 'postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * A pooler in front of ADMIN_URL's server that reaches every database by its name (PgBouncer with
 * a `*` database entry; .ci/pgbouncer): each test database is created and dropped on the server
 * directly and used through it. Unset: used directly.
 */
export const POOLER_URL = process.env.TEST_POOLER_URL || undefined;
/** The service's setting, read here too so that the test databases and child processes agree. */
export const TEST_PREPARED_STATEMENTS = loadConfig(process.env).databasePreparedStatements;

export interface TestDatabase {
  database: Database;
  /** PostgreSQL URL of this test's own database (undefined on PGlite). */
  url?: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!isPostgres) {
    const database = await openPglite(undefined);
    await runMigrations(database);
    return { database, drop: () => database.close() };
  }
  const name = `po_test_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    await c.query(statement);
    await c.end();
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(POOLER_URL ?? ADMIN_URL);
  url.pathname = `/${name}`;
  const database = await openPostgres(url.toString(), { poolSize: 20, preparedStatements: TEST_PREPARED_STATEMENTS });
  await runMigrations(database);
  return {
    database,
    url: url.toString(),
    async drop() {
      await database.close();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

export type Row = Record<string, any>;

/** The rows of a raw statement, on either database. */
export async function rowsOf(database: Database, q: SQL): Promise<Row[]> {
  return ((await database.db.execute(q)) as unknown as { rows: Row[] }).rows;
}

/** Captures the service's structured log lines, for tests that read what was logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void) {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  get text() {
    return this.lines.join('\n');
  }
}

export type PaymentsSettings = Partial<Omit<PaymentsConfig, 'simulator' | 'circuitBreaker'>> & {
  simulator?: Partial<PaymentsConfig['simulator']>;
  circuitBreaker?: Partial<PaymentsConfig['circuitBreaker']>;
};

/** Payment settings for tests: a 300 ms connector timeout; pending charges wait a minute unless told otherwise. */
export function testPaymentsConfig(settings: PaymentsSettings = {}): PaymentsConfig {
  const base = loadConfig({}).payments;
  return {
    ...base,
    connectorTimeoutMs: 300,
    ...settings,
    simulator: { ...base.simulator, pendingDelayMs: 60_000, ...settings.simulator },
    circuitBreaker: { ...base.circuitBreaker, ...settings.circuitBreaker },
  };
}

/** The clock of a test service's runtime: the real time, moved forward or pinned by the test. */
export interface TestClock {
  now(): Date;
  advance(ms: number): void;
  /** Pins the clock at `ms` (epoch); it stays there until moved. */
  set(ms: number): void;
  /** Back to the real time. */
  reset(): void;
}

export function testClock(): TestClock {
  let offsetMs = 0;
  let pinnedMs: number | undefined;
  return {
    now: () => new Date(pinnedMs ?? Date.now() + offsetMs),
    advance: (ms) => (pinnedMs === undefined ? void (offsetMs += ms) : void (pinnedMs += ms)),
    set: (ms) => void (pinnedMs = ms),
    reset: () => void ((offsetMs = 0), (pinnedMs = undefined)),
  };
}

export interface ServiceOptions {
  overrides?: Partial<Config>;
  /** Payment settings over testPaymentsConfig(); 'production' keeps loadConfig({})'s. */
  settings?: PaymentsSettings | 'production';
  /** Payouts sent right after create (true) or by the worker only (false); the configured default otherwise. */
  submitOnCreate?: boolean;
  runtime?: RuntimeOptions;
  clock?: TestClock;
  logs?: LogCapture;
  rateLimiter?: RateLimiter;
}

type Simulated = NonNullable<ReturnType<NonNullable<Runtime['connectors']['simulator']>['processors']['get']>>;
const silent = { info: () => {}, warn: () => {}, error: () => {} };

export interface TestService extends Service {
  url: string;
  config: Config;
  /** The runtime the api (and worker) roles use; its clock is `clock` unless the test gave its own. */
  payments: Runtime;
  /** The same runtime, as the worker passes it to the payout jobs. */
  payouts: Runtime;
  clock: TestClock;
  /** One pass of every worker job, as the worker role runs it, at `at` (default: the clock). */
  runWorker(at?: Date | number, extra?: Partial<WorkerDeps>): ReturnType<typeof runWorkerOnce>;
  /** One worker pass over payouts only. */
  runPayouts(): Promise<{ submitted: number; checked: number }>;
  /** An in-process simulated processor, to look at its books. */
  simulator(name?: string): Simulated;
  /** Runs `fn` while the runtime's crash switch throws at `point`: a request dying there, in process. */
  crashingAt<T>(point: CrashPoint, fn: () => Promise<T>): Promise<T>;
}

export async function startTestService(testDb: TestDatabase, opts: ServiceOptions = {}): Promise<TestService> {
  const base = loadConfig({});
  const config: Config = {
    ...base,
    databaseUrl: testDb.url,
    port: 0,
    // No metrics listener unless a test asks for one: test files run in parallel.
    metrics: { host: '127.0.0.1', port: 0 },
    roles: ['api'],
    // Generous defaults so that ordinary tests never meet the limiter; rate-limit tests set their own.
    rateLimit: { live: { perSecond: 10_000, burst: 10_000 }, test: { perSecond: 10_000, burst: 10_000 } },
    ...(opts.submitOnCreate === undefined ? {} : { payouts: { ...base.payouts, submitOnCreate: opts.submitOnCreate, batchSize: 200 } }),
    ...opts.overrides,
  };
  if (opts.settings !== 'production') config.payments = testPaymentsConfig(opts.settings);
  const clock = opts.clock ?? testClock();
  const payments = createRuntime(config, { db: testDb.database.db, now: clock.now, ...opts.runtime });
  const service = await startService(config, {
    database: testDb.database,
    logger: opts.logs ? { level: 'info', stream: opts.logs } : false,
    rateLimiter: opts.rateLimiter ?? new MemoryRateLimiter(),
    payments,
  });
  let closed: Promise<void> | undefined;
  return {
    ...service,
    url: service.url!,
    config,
    payments,
    payouts: payments,
    clock,
    runWorker: (at, extra) =>
      runWorkerOnce({ db: testDb.database.db, log: silent, now: at === undefined ? payments.now : () => new Date(at), payments, payouts: payments, ...extra }),
    runPayouts: () => runPayoutJobs(testDb.database.db, payments),
    simulator: (name = 'simulator_a') => payments.connectors.simulator!.processors.get(name)!,
    async crashingAt(point, fn) {
      const original = payments.crashPoint;
      payments.crashPoint = (p) => {
        if (p === point) throw new Error(`simulated crash at ${p}`);
      };
      try {
        return await fn();
      } finally {
        payments.crashPoint = original;
      }
    },
    close: () =>
      (closed ??= (async () => {
        await service.close();
        payments.close();
      })()),
  };
}

export interface Tenant {
  accountId: string;
  testKey: string;
  liveKey: string;
}

/** A fresh account with a test key and, live mode activated, a live key. */
export async function createTenant(database: Database, name = 'Test tenant'): Promise<Tenant> {
  const account = await createAccount(database.db, name);
  await activateLive(database.db, account.id, { force: true });
  const test = await issueKey(database.db, account.id, { livemode: false });
  const live = await issueKey(database.db, account.id, { livemode: true });
  return { accountId: account.id, testKey: test.secret, liveKey: live.secret };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string;
  idempotencyKey?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export async function call<T = any>(baseUrl: string, method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

type Lazy<T> = T | (() => T);
const read = <T>(value: Lazy<T>): T => (typeof value === 'function' ? (value as () => T)() : value);

/**
 * A client bound to one service and one key. Either may be given as a function, read at each
 * request: a fixture's clients exist before its beforeAll has started the service.
 */
export function client(baseUrl: Lazy<string>, key?: Lazy<string | undefined>) {
  const send = <T>(method: string, path: string, opts: RequestOptions) => call<T>(read(baseUrl), method, path, { key: read(key), ...opts });
  return {
    get: <T = any>(path: string, opts: RequestOptions = {}) => send<T>('GET', path, opts),
    post: <T = any>(path: string, body?: unknown, opts: RequestOptions = {}) => send<T>('POST', path, { body, idempotencyKey: crypto.randomUUID(), ...opts }),
    request: <T = any>(method: string, path: string, opts: RequestOptions = {}) => send<T>(method, path, opts),
  };
}

export type Api = ReturnType<typeof client>;

/** A typed error answer: the status, the code, the request id repeated, and type and param when given. */
export function expectError(res: ApiResponse, status: number, code: string, more: { type?: string; param?: string } = {}) {
  expect(res.status, res.text).toBe(status);
  expect(res.body?.error, res.text).toMatchObject({ code, request_id: res.headers.get('request-id'), ...more });
  return res.body.error as { type: string; code: string; message: string; param?: string; request_id: string };
}

/** Creates through `path` and expects a 201; the created object. */
export async function created(api: Api, path: string, body: unknown) {
  const res = await api.post(path, body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export function orderBody(overrides: Record<string, unknown> = {}) {
  return {
    amount: 1999,
    currency: 'EUR',
    reference: `ref-${crypto.randomUUID()}`,
    customer: { email: 'jane@example.com', name: 'Jane Doe' },
    ...overrides,
  };
}

/** Polls `read` until `done` holds or the time is up; the last value read. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
