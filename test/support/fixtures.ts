// The one set-up of the test files: `useDatabase()` gives a file (or a describe block) its own
// database, `useService()` a running service on it with a tenant and that tenant's clients. Each
// registers its beforeAll/afterAll where it is called and returns a handle filled in by then:
// read its fields inside tests and hooks, never at module level (its clients may be taken out at
// once: they find their service and key when they send).
import type { SQL } from 'drizzle-orm';
import { afterAll, beforeAll } from 'vitest';
import type { Database } from '../../src/storage/db.js';
import { Receiver } from './webhooks.js';
import {
  client,
  createTenant,
  createTestDatabase,
  isPostgres,
  rowsOf,
  startTestService,
  type Api,
  type Row,
  type ServiceOptions,
  type Tenant,
  type TestDatabase,
  type TestService,
} from './helpers.js';

export interface TestTenant extends Tenant {
  /** Test-mode and live-mode clients of this tenant on the fixture's service. */
  api: Api;
  live: Api;
}

export interface DatabaseFixture {
  readonly testDb: TestDatabase;
  readonly database: Database;
  readonly db: Database['db'];
  /** The PostgreSQL URL of this database (undefined on PGlite). */
  readonly databaseUrl: string | undefined;
  query(q: SQL): Promise<Row[]>;
  /** A new account with a test and a live key. */
  createTenant(name?: string): Promise<Tenant>;
  /** Another service on this database, closed after the block. */
  startService(opts?: ServiceOptions): Promise<TestService>;
  /** A webhook receiver on a loopback port, closed after the block. */
  receiver(): Promise<Receiver>;
  /** Closes `thing` after the block (children, servers, limiters). */
  track<T extends { close(): unknown }>(thing: T): T;
}

export interface ServiceFixture extends DatabaseFixture {
  readonly service: TestService;
  readonly url: string;
  /** The block's tenant, created with the service. */
  readonly tenant: TestTenant;
  /** The tenant's test-mode and live-mode clients (usable before the set-up has run). */
  readonly api: Api;
  readonly live: Api;
  /** Another tenant, with its clients on the service. */
  newTenant(name?: string): Promise<TestTenant>;
}

function notYet(what: string): never {
  throw new Error(`fixture: ${what} is read before its beforeAll ran (read it inside a test or hook)`);
}

export interface DatabaseOptions {
  /** Several processes on one database: PGlite cannot; the set-up is skipped there (skip the tests too). */
  postgresOnly?: boolean;
}

/** A database of its own for the enclosing file or describe block, dropped after it. */
export function useDatabase(opts: DatabaseOptions = {}): DatabaseFixture {
  let testDb: TestDatabase | undefined;
  const opened: { close(): unknown }[] = [];
  const get = () => testDb ?? notYet('the database');
  const fixture: DatabaseFixture = {
    get testDb() {
      return get();
    },
    get database() {
      return get().database;
    },
    get db() {
      return get().database.db;
    },
    get databaseUrl() {
      return get().url;
    },
    query: (q) => rowsOf(get().database, q),
    createTenant: (name) => createTenant(get().database, name),
    startService: async (options) => fixture.track(await startTestService(get(), options)),
    receiver: async () => fixture.track(await Receiver.start()),
    track(thing) {
      opened.push(thing);
      return thing;
    },
  };
  beforeAll(async () => {
    if (opts.postgresOnly && !isPostgres) return;
    testDb = await createTestDatabase();
  }, 60_000);
  afterAll(async () => {
    for (const thing of opened.splice(0).reverse()) await thing.close();
    await testDb?.drop();
  }, 60_000);
  return fixture;
}

export interface ServiceFixtureOptions extends ServiceOptions, DatabaseOptions {
  /** Share a database fixture of an enclosing block instead of creating one. */
  on?: DatabaseFixture;
  /** Name of the block's tenant. */
  tenantName?: string;
  /** Options known only once the set-up runs (a simulator server's URL, a free port), over the others. */
  late?: () => ServiceOptions | Promise<ServiceOptions>;
}

/** A running service (api role) on a database of its own, with a tenant and its clients. */
export function useService(opts: ServiceFixtureOptions = {}): ServiceFixture {
  const { on, tenantName, postgresOnly, late, ...serviceOptions } = opts;
  const base = on ?? useDatabase({ postgresOnly });
  let service: TestService | undefined;
  let tenant: TestTenant | undefined;
  const url = () => service?.url ?? notYet('the service');
  const withClients = (t: Tenant): TestTenant => ({ ...t, api: client(url, t.testKey), live: client(url, t.liveKey) });
  const fixture: ServiceFixture = Object.create(base, {
    service: { get: () => service ?? notYet('the service') },
    url: { get: url },
    tenant: { get: () => tenant ?? notYet('the tenant') },
  });
  Object.assign(fixture, {
    api: client(url, () => fixture.tenant.testKey),
    live: client(url, () => fixture.tenant.liveKey),
    newTenant: async (name?: string) => withClients(await base.createTenant(name)),
  });
  beforeAll(async () => {
    if (postgresOnly && !isPostgres) return;
    service = await base.startService({ ...serviceOptions, ...(await late?.()) });
    tenant = withClients(await base.createTenant(tenantName));
  }, 60_000);
  return fixture;
}

/**
 * Two services on one database, for outcomes that come later: on `manual` a pending answer waits
 * (the test helper, a refresh or the worker settles it); on `automatic` the simulated processor
 * settles it after `delayMs` and reports it by webhook. Each has its own tenant.
 */
export function usePendingServices(delayMs: number, manualOptions: ServiceFixtureOptions = {}) {
  const h = useDatabase();
  const manual = useService({ ...manualOptions, on: h });
  const automatic = useService({ on: h, settings: { simulator: { pendingDelayMs: delayMs } } });
  return { h, manual, automatic, api: manual.api, liveApi: manual.live, autoApi: automatic.api };
}
