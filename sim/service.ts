// The service under simulation, in process: the real fastify app (requests by app.inject, no
// socket) and the worker's pass, over one embedded database. A crash drops every in-memory object
// of the service that holds state (the runtime with its connectors' circuit breaker, routing cache
// and clock, the rate limiter, the API-key cache) and builds them again on the same data, as a
// restarted process would; the database and the outside world (processors, receivers) survive it.
// The fastify instance itself (routes and compiled schemas, pure functions of the configuration)
// is built once per run and reaches the rebuilt objects through a forwarding proxy: rebuilding it
// costs seconds per crash and would test fastify's start-up, not the service's recovery.
import { sql } from 'drizzle-orm';
import { loadConfig, type Config, type CrashPoint } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { createAuthenticator } from '../src/http/auth.js';
import { MemoryRateLimiter, type RateLimiter } from '../src/http/rate-limiter.js';
import { createRuntime, type Runtime } from '../src/runtime.js';
import { openPglite, runMigrations, type Database } from '../src/storage/db.js';
import { runWorkerOnce } from '../src/worker/worker.js';
import type { SimClock } from './clock.js';
import type { Rng } from './rng.js';
import { createProcessorWorld, type ProcessorWorld, type WorldOptions } from './processors.js';
import { createReceivers, type Receivers } from './receivers.js';

export interface Answer {
  status: number;
  text: string;
  body: any;
  replayed: boolean;
}

export interface SimService {
  database: Database;
  config: Config;
  world: ProcessorWorld;
  receivers: Receivers;
  runtime(): Runtime;
  /** One API request; `crashAt`: the process dies at that point of it (the request never answers). */
  request(method: string, path: string, opts: { key?: string; body?: unknown; idempotencyKey?: string; crashAt?: CrashPoint }): Promise<Answer | 'crashed'>;
  worker(): Promise<void>;
  pumpProcessors(): Promise<void>;
  crash(): Promise<void>;
  /** Crashes so far, and the crash point of the last one inside a request (undefined: it died before answering). */
  crashes: number;
  lastCrashPoint?: CrashPoint;
  close(): Promise<void>;
}

const silent = { info: () => {}, warn: () => {}, error: () => {} };

class SimulatedCrash extends Error {}

/** An object that is, at every property access, whatever `current()` answers now. */
function forward<T extends object>(current: () => T): T {
  return new Proxy({} as T, {
    get: (_t, key) => {
      const target = current() as Record<string | symbol, unknown>;
      const value = target[key];
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
    set: (_t, key, value) => ((current() as Record<string | symbol, unknown>)[key] = value, true),
  });
}

/** `env`: settings beside the simulation's own (the backtest's, for one). */
export function simConfig(env: Record<string, string> = {}): Config {
  const base = loadConfig({ IDEMPOTENCY_LOCK_TIMEOUT_S: '10', CONNECTOR_TIMEOUT_MS: '1000', ...env });
  return {
    ...base,
    roles: ['api', 'worker'],
    port: 0,
    logLevel: 'silent',
    rateLimit: { live: { perSecond: 1e6, burst: 1e6 }, test: { perSecond: 1e6, burst: 1e6 } },
    apiKeyCacheTtlMs: 0,
    // Payouts go to the bank from the worker's pass only: a fire-and-forget submission would race the simulation.
    payouts: { ...base.payouts, submitOnCreate: false },
    // `url` set: the runtime builds no simulator host of its own (with its real-time timers); the
    // simulation's world (processors.ts) is the only one, and its connectors replace the built-in ones.
    payments: { ...base.payments, simulator: { ...base.payments.simulator, pendingDelayMs: 30_000, url: 'http://processors.sim.invalid' } },
  };
}

/** The embedded database of a simulation process, migrated once; each run starts from it emptied. */
export async function openSimDatabase(): Promise<Database> {
  const database = await openPglite(undefined);
  await runMigrations(database);
  return database;
}

async function emptied(database: Database): Promise<Database> {
  const tables = ((await database.db.execute(sql`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)) as unknown as { rows: { tablename: string }[] }).rows;
  if (tables.length) await database.db.execute(sql.raw(`TRUNCATE ${tables.map((t) => `"${t.tablename}"`).join(', ')} RESTART IDENTITY CASCADE`));
  return database;
}

export async function startSimService(clock: SimClock, rng: Rng, shared?: Database, options: { env?: Record<string, string>; world?: WorldOptions } = {}): Promise<SimService> {
  const config = simConfig(options.env);
  const database = shared ? await emptied(shared) : await openSimDatabase();
  const world = createProcessorWorld(database.db, clock, rng.fork('processors'), config.payments.simulator.webhookSecret, config.payments.simulator.pendingDelayMs, options.world);
  const receivers = createReceivers();
  const runtimeRng = rng.fork('runtime');
  let runtime!: Runtime;
  let rateLimiter!: RateLimiter;
  let crashAt: CrashPoint | undefined;

  function boot() {
    runtime = createRuntime(config, { db: database.db, now: clock.now, nowMs: clock.nowMs, random: runtimeRng.float, connectors: world.connectors });
    // A connector call's deadline is a real-time timer, which a loaded machine (a CI run beside it)
    // would fire at moments no seed chose. The simulated processors answer in process and never
    // hang; a lost answer is one of the seed's faults. The deadlines computed from
    // CONNECTOR_TIMEOUT_MS (abandonment, status checks) still run on the simulated clock.
    const realTimeDeadlineMs = 10 * 60_000;
    runtime.call = { ...runtime.call, timeoutMs: realTimeDeadlineMs };
    const callsFor = runtime.callsFor;
    runtime.callsFor = (owner) => ({ ...callsFor(owner), timeoutMs: realTimeDeadlineMs });
    runtime.crashPoint = (point) => {
      if (point !== crashAt) return;
      service.lastCrashPoint = point;
      throw new SimulatedCrash(`simulated crash at ${point}`);
    };
    rateLimiter = new MemoryRateLimiter();
  }
  boot();
  const app = await buildApp({
    config,
    database,
    rateLimiter: forward(() => rateLimiter),
    // TTL 0: no key cache survives anything.
    authenticator: createAuthenticator(database.db, 0),
    logger: false,
    payments: forward(() => runtime),
  });
  await app.ready();

  const service: SimService = {
    database,
    config,
    world,
    receivers,
    runtime: () => runtime,
    async request(method, path, opts) {
      const headers: Record<string, string> = {};
      if (opts.key) headers.authorization = `Bearer ${opts.key}`;
      if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      crashAt = opts.crashAt;
      service.lastCrashPoint = undefined;
      try {
        const res = await app.inject({ method: method as 'GET', url: path, headers, payload: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
        if (crashAt) {
          // The process died inside the request: whatever it was about to answer never left.
          await service.crash();
          return 'crashed';
        }
        let body: unknown;
        try {
          body = res.body ? JSON.parse(res.body) : undefined;
        } catch {
          body = undefined;
        }
        return { status: res.statusCode, text: res.body, body, replayed: res.headers['idempotent-replayed'] === 'true' };
      } finally {
        crashAt = undefined;
      }
    },
    async worker() {
      await runWorkerOnce({
        db: database.db,
        log: silent,
        now: clock.now,
        payments: runtime,
        payouts: runtime,
        webhooks: { config: config.webhooks, encryptor: runtime.encryptor, sender: receivers, random: runtimeRng.float },
      });
    },
    pumpProcessors: () =>
      world.pump(async (path, headers, body) => (await app.inject({ method: 'POST', url: path, headers, payload: body })).statusCode),
    crashes: 0,
    async crash() {
      service.crashes += 1;
      crashAt = undefined;
      runtime.close();
      await rateLimiter.close();
      boot();
    },
    async close() {
      await app.close();
      runtime.close();
      world.close();
      if (!shared) await database.close();
    },
  };
  return service;
}
