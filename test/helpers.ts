// Test harness: a fresh database per test file (a new PostgreSQL database, or an in-memory
// PGlite), a real service listening on a loopback port, and tenants with their own keys, so test
// files never share state and can run in parallel.
import crypto from 'node:crypto';
import net from 'node:net';
import { Writable } from 'node:stream';
import pg from 'pg';
import { loadConfig, type Config } from '../src/config.js';
import { openPglite, openPostgres, runMigrations, type Database } from '../src/storage/db.js';
import { startService, type Service } from '../src/service.js';
import { activateLive, createAccount, issueKey } from '../src/domain/accounts/service.js';
import { MemoryRateLimiter, type RateLimiter } from '../src/lib/rate-limiter.js';

export const TEST_DB = (process.env.TEST_DB ?? 'postgres') as 'postgres' | 'pglite';
export const ADMIN_URL = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const isPostgres = TEST_DB === 'postgres';

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
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const database = await openPostgres(url.toString(), 20);
  await runMigrations(database);
  return {
    database,
    url: url.toString(),
    async drop() {
      await database.close();
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
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

export interface TestService extends Service {
  url: string;
  config: Config;
}

export async function startTestService(
  testDb: TestDatabase,
  overrides: Partial<Config> = {},
  opts: { logs?: LogCapture; rateLimiter?: RateLimiter } = {},
): Promise<TestService> {
  const config: Config = {
    ...loadConfig({}),
    databaseUrl: testDb.url,
    port: 0,
    // No metrics listener unless a test asks for one: test files run in parallel.
    metrics: { host: '127.0.0.1', port: 0 },
    roles: ['api'],
    // Generous defaults so that ordinary tests never meet the limiter; rate-limit tests set their own.
    rateLimit: { live: { perSecond: 10_000, burst: 10_000 }, test: { perSecond: 10_000, burst: 10_000 } },
    ...overrides,
  };
  const logger = opts.logs ? { level: 'info', stream: opts.logs } : false;
  const service = await startService(config, {
    database: testDb.database,
    logger,
    rateLimiter: opts.rateLimiter ?? new MemoryRateLimiter(),
  });
  return { ...service, url: service.url!, config };
}

export interface Tenant {
  accountId: string;
  /** The account's uuid, as stored. */
  testKey: string;
  liveKey: string;
}

/** A fresh account with a test key and, live mode activated, a live key. */
export async function createTenant(database: Database, name = 'Test tenant'): Promise<Tenant> {
  const account = await createAccount(database.db, name);
  await activateLive(database.db, account.id);
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

/** A client bound to one service and one key. */
export function client(baseUrl: string, key?: string) {
  return {
    get: <T = any>(path: string, opts: RequestOptions = {}) => call<T>(baseUrl, 'GET', path, { key, ...opts }),
    post: <T = any>(path: string, body?: unknown, opts: RequestOptions = {}) =>
      call<T>(baseUrl, 'POST', path, { key, body, idempotencyKey: crypto.randomUUID(), ...opts }),
    request: <T = any>(method: string, path: string, opts: RequestOptions = {}) => call<T>(baseUrl, method, path, { key, ...opts }),
  };
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

/** A loopback port free a moment ago, its listener closed: nothing answers there until a test binds it. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Sends `head` (request line and headers, CRLF-separated, without the blank line) and `body` as
 * raw bytes over a fresh TCP connection and parses the one answer: for what fetch refuses to send
 * (malformed %-escapes, NUL or DEL in a header, overlong headers).
 */
export async function rawRequest(baseUrl: string, head: string, body = ''): Promise<ApiResponse> {
  const { hostname, port } = new URL(baseUrl);
  // Not half-closed after writing: Node's server drops a request whose client sent FIN first. The
  // answer is complete at its Content-Length, or when the server closes.
  const raw = await new Promise<Buffer>((resolve, reject) => {
    let received = Buffer.alloc(0);
    const socket = net.connect(Number(port), hostname, () => socket.write(Buffer.from(`${head}\r\n\r\n${body}`, 'latin1')));
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${JSON.stringify(head.slice(0, 200))}`)));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(received.subarray(0, end).toString('latin1'))?.[1];
      if (end >= 0 && length !== undefined && received.length >= end + 4 + Number(length)) socket.destroy();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
  const text = raw.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = text.slice(0, split < 0 ? text.length : split).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers = new Headers();
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const payload = split < 0 ? '' : text.slice(split + 4);
  let parsed: unknown;
  try {
    parsed = payload ? JSON.parse(payload) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status, headers, body: parsed, text: `${statusLine}\n${payload}` };
}
