// The database going away — a restart, a failover, a network cut — is survived, not fatal: real
// service processes (combined, and split into api and worker) reach PostgreSQL through a TCP proxy
// that the test cuts under load and restores. Every process stays up; requests during the outage
// get a typed 503 with Retry-After (never a 500); /ready says so; the worker backs off and resumes
// delivering webhooks; and clients retrying with their Idempotency-Keys end with each object
// exactly once. PostgreSQL only (the embedded database cannot go away), but for the classification
// of errors, which runs on both.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, createTestDatabase, isPostgres, orderBody, startTestService, TEST_PREPARED_STATEMENTS, type ApiResponse, type Tenant, type TestDatabase } from '../support/helpers.js';
import { loadConfig } from '../../src/config.js';
import { openPostgres } from '../../src/storage/db.js';
import { isDatabaseUnavailable } from '../../src/kernel/outage.js';
import { startChild, stopChild, type Child } from '../support/processes.js';
import { startDbProxy, type DbProxy } from '../support/db-proxy.js';
import { Receiver } from '../support/webhooks.js';
import { checkLedger } from '../../src/ledger/check.js';
import { parseId } from '../../src/kernel/ids.js';

const CLIENTS = 6;
const CUT_MS = 4000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the clients saw: every answer's status (and code), and the objects each key ended with. */
interface Seen {
  statuses: Map<string, number>;
  untyped: ApiResponse[];
  orders: Map<string, string>;
  payments: Map<string, { id: string; order: string; amount: number }>;
  completed: number;
}

/**
 * Clients that create a payment order and pay it, over and over, each request retried with its
 * own Idempotency-Key until it has its 201 — honouring Retry-After, as a well-behaved client does.
 */
function startLoad(url: string, key: string, tag: string) {
  const seen: Seen = { statuses: new Map(), untyped: [], orders: new Map(), payments: new Map(), completed: 0 };
  let stopping = false;
  const untilCreated = async (path: string, idempotencyKey: string, body: unknown) => {
    for (;;) {
      const res = await call(url, 'POST', path, { key, idempotencyKey, body });
      const label = res.status === 201 ? '201' : `${res.status} ${res.body?.error?.code}`;
      seen.statuses.set(label, (seen.statuses.get(label) ?? 0) + 1);
      if (res.status === 201) return res.body;
      const typed =
        (res.status === 503 && res.body?.error?.type === 'processing' && res.body.error.code === 'service_unavailable') ||
        (res.status === 409 && res.body?.error?.code === 'idempotency_key_in_use');
      if (!typed || !res.headers.get('retry-after') || !res.body.error.request_id) seen.untyped.push(res);
      await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
    }
  };
  const client = async (n: number) => {
    for (let i = 0; !stopping; i++) {
      const body = orderBody({ amount: 1000 + n * 100 + (i % 100), reference: `${tag}-order-${n}-${i}` });
      const order = await untilCreated('/v1/payment-orders', `${tag}-order-${n}-${i}`, body);
      seen.orders.set(`${tag}-order-${n}-${i}`, order.id);
      const payment = await untilCreated('/v1/payments', `${tag}-pay-${n}-${i}`, {
        payment_order: order.id,
        payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' } },
      });
      seen.payments.set(`${tag}-pay-${n}-${i}`, { id: payment.id, order: order.id, amount: body.amount });
      seen.completed++;
    }
  };
  const done = Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
  return {
    seen,
    async stop() {
      stopping = true;
      await done;
    },
  };
}

async function waitFor(what: string, predicate: () => Promise<boolean> | boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

describe.skipIf(!isPostgres)('the database going away under load', () => {
  let testDb: TestDatabase;
  let tenant: Tenant;
  let receiver: Receiver;
  const children: Child[] = [];
  const proxies: DbProxy[] = [];

  beforeAll(async () => {
    testDb = await createTestDatabase();
    tenant = await createTenant(testDb.database, 'Outage tenant');
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await Promise.all(children.map((c) => stopChild(c)));
    await Promise.all(proxies.map((p) => p.close()));
    await receiver?.close();
    await testDb?.drop();
  });

  /** How the database goes away: where the processes connect, and what the test does to them. */
  interface Outage {
    url: string;
    begin(): void;
    end(): void;
    /** Unreachable throughout (a cut), rather than connections killed now and then. */
    unreachable: boolean;
  }

  /** A network cut or a server that is down: nothing gets through the proxy. */
  async function proxyCut(): Promise<Outage> {
    const proxy = await startDbProxy(testDb.url!);
    proxies.push(proxy);
    return { url: proxy.url, begin: () => proxy.cut(), end: () => proxy.restore(), unreachable: true };
  }

  /**
   * What a restart or failover does to the sessions: the server terminates them (SQLSTATE 57P01
   * on a running query, the connection closed under an idle one), over and over for a while —
   * only the service processes' sessions, found by their application_name.
   */
  function serverTerminations(): Outage {
    const url = new URL(testDb.url!);
    url.searchParams.set('application_name', 'po-outage-test');
    let timer: NodeJS.Timeout | undefined;
    const terminate = () =>
      testDb.database.db.execute(sql`
        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'po-outage-test'`);
    return {
      url: url.toString(),
      begin: () => (timer = setInterval(() => void terminate(), 250)),
      end: () => clearInterval(timer),
      unreachable: false,
    };
  }

  async function rideOut(tag: string, roles: string[], outage: Outage) {
    const started = await Promise.all(
      roles.map((role) =>
        startChild({
          DATABASE_URL: outage.url,
          ROLES: role,
          DATABASE_POOL_SIZE: '6',
          WORKER_INTERVAL_MS: '200',
          STATUS_CHECK_INTERVAL_MS: '1000',
          WEBHOOK_POLL_INTERVAL_MS: '50',
          WEBHOOK_TEST_RETRY_SCHEDULE_S: '0,1,1,1,1,1,1,1,1,1',
        }),
      ),
    );
    children.push(...started);
    const api = started.find((c) => c.url)!;
    const { body: endpoint } = await call(api.url, 'POST', '/v1/webhook-endpoints', {
      key: tenant.testKey,
      body: { url: receiver.url, enabled_events: ['payment_order.paid'], metadata: { run: tag } },
    });
    expect(endpoint.id).toMatch(/^we_/);

    const load = startLoad(api.url, tenant.testKey, tag);
    await waitFor('traffic before the cut', () => load.seen.completed >= 10);

    outage.begin();
    const cutAt = Date.now();
    await sleep(500);
    if (outage.unreachable) {
      const during = await call(api.url, 'GET', '/ready');
      expect(during.status).toBe(503);
      expect(during.body.error).toMatchObject({ type: 'processing', code: 'service_unavailable' });
      expect(during.headers.get('retry-after')).toBeTruthy();
    }
    await sleep(CUT_MS - (Date.now() - cutAt));
    const completedAtRestore = load.seen.completed;
    outage.end();
    const restoredAt = Date.now();
    await waitFor('/ready after the restore', async () => (await call(api.url, 'GET', '/ready')).status === 200, 10_000);
    await waitFor('orders paid again after the restore', () => load.seen.completed >= completedAtRestore + 10, 20_000);
    const recoveredMs = Date.now() - restoredAt;
    await load.stop();

    // Every process rode it out.
    for (const child of started) expect(child.process.exitCode, child.output()).toBeNull();
    // During the outage only typed, retryable answers: 503 service_unavailable (or 409 while a
    // key was still held), each with Retry-After; never a 500.
    expect(load.seen.untyped.map((r) => `${r.status} ${r.text}`)).toEqual([]);
    expect([...load.seen.statuses.keys()].filter((s) => s.startsWith('5') && !s.startsWith('503 service_unavailable'))).toEqual([]);
    expect(recoveredMs).toBeLessThan(15_000);
    if (outage.unreachable) {
      expect(load.seen.statuses.get('503 service_unavailable')).toBeGreaterThan(0);
      // The worker told of its outage and kept going.
      const workerOutput = started.filter((_, i) => roles[i]!.includes('worker')).map((c) => c.output()).join('\n');
      expect(workerOutput).toContain('database unavailable; backing off');
    }
    return { seen: load.seen, endpointId: endpoint.id as string };
  }

  /** Nothing lost, nothing twice: one order per key, one payment per order, one charge per payment. */
  async function expectExactlyOnce(seen: Seen, tag: string) {
    const db = testDb.database.db;
    const account = parseId('acct', tenant.accountId)!;
    const rows = (q: ReturnType<typeof sql>) => db.execute(q).then((r) => (r as unknown as { rows: Record<string, unknown>[] }).rows);
    const keys = await rows(sql`
      SELECT key, response_status FROM idempotency_keys
      WHERE account_id = ${account} AND key LIKE ${tag + '-%'}`);
    expect(keys.length).toBe(seen.orders.size + seen.payments.size);
    expect(keys.every((k) => Number(k.response_status) === 201)).toBe(true);
    const orderIds = [...seen.orders.values()];
    expect(new Set(orderIds).size).toBe(orderIds.length);
    const perOrder = await rows(sql`
      SELECT o.reference, o.status, count(p.id)::int AS payments
      FROM payment_orders o LEFT JOIN payments p ON p.account_id = o.account_id AND p.payment_order_id = o.id
      WHERE o.account_id = ${account} AND o.reference LIKE ${tag + '-order-%'}
      GROUP BY o.id, o.reference, o.status`);
    // Orders of a client stopped between its two requests have no payment: every other has one.
    expect(perOrder.length).toBe(seen.orders.size);
    const paidFor = new Set([...seen.payments.keys()].map((k) => k.replace('-pay-', '-order-')));
    expect(perOrder.filter((o) => o.payments !== (paidFor.has(String(o.reference)) ? 1 : 0))).toEqual([]);
    expect(perOrder.filter((o) => paidFor.has(String(o.reference)) && o.status !== 'paid')).toEqual([]);
    const charges = await rows(sql`
      SELECT reference, count(*)::int AS n FROM simulator_objects WHERE kind = 'charge' GROUP BY reference HAVING count(*) > 1`);
    expect(charges).toEqual([]);
    const report = await checkLedger(db, { accountId: account });
    expect(report.ok, JSON.stringify(report)).toBe(true);
  }

  it('a combined process (api and worker) survives a cut under load and recovers by itself', async () => {
    const { seen, endpointId } = await rideOut('combined', ['api,worker'], await proxyCut());
    await expectExactlyOnce(seen, 'combined');
    // Webhooks resumed: every order paid before, during or after the cut is delivered.
    await waitForDeliveries(endpointId, seen);
  }, 120_000);

  it('split api and worker processes survive a cut under load and recover by themselves', async () => {
    const { seen, endpointId } = await rideOut('split', ['api', 'worker'], await proxyCut());
    await expectExactlyOnce(seen, 'split');
    await waitForDeliveries(endpointId, seen);
  }, 120_000);

  it('a combined process survives the server terminating its sessions again and again (a restart, a failover)', async () => {
    const { seen, endpointId } = await rideOut('terminated', ['api,worker'], serverTerminations());
    await expectExactlyOnce(seen, 'terminated');
    await waitForDeliveries(endpointId, seen);
  }, 120_000);

  it('a connection that breaks while checked out between two queries fails its user, not the process', async () => {
    const proxy = await startDbProxy(testDb.url!);
    proxies.push(proxy);
    const database = await openPostgres(proxy.url, { poolSize: 2, connectTimeoutMs: 1000, preparedStatements: TEST_PREPARED_STATEMENTS });
    try {
      // A transaction holds its connection between statements: no query is running when it breaks.
      const held = database.db.transaction(async (tx) => {
        await tx.execute(sql`SELECT 1`);
        await sleep(300);
        await tx.execute(sql`SELECT 2`);
      });
      await sleep(100);
      proxy.cut();
      const failure = await held.then(() => undefined, (err: unknown) => err);
      expect(isDatabaseUnavailable(failure), String(failure)).toBe(true);
      proxy.restore();
      // The pool dropped the broken connection and opens a new one.
      expect(await database.db.execute(sql`SELECT 3 AS n`)).toMatchObject({ rows: [{ n: 3 }] });
    } finally {
      await database.close();
    }
  });

  it('a payment cut off mid-way answers 503 and its retry resumes it within seconds, once', async () => {
    const proxy = await startDbProxy(testDb.url!);
    proxies.push(proxy);
    const proxied = { database: await openPostgres(proxy.url, { poolSize: 4, connectTimeoutMs: 1000, preparedStatements: TEST_PREPARED_STATEMENTS }), url: proxy.url, drop: async () => {} };
    const defaults = loadConfig({});
    // The processor takes a second to answer: time to cut the database while the charge is out.
    const service = await startTestService(proxied, {
      settings: { connectorTimeoutMs: defaults.payments.connectorTimeoutMs, simulator: { ...defaults.payments.simulator, latencyMs: 1000 } },
    });
    try {
      const order = await call(service.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: 'cut-order', body: orderBody() });
      expect(order.status).toBe(201);
      const pay = () =>
        call(service.url, 'POST', '/v1/payments', {
          key: tenant.testKey,
          idempotencyKey: 'cut-payment',
          body: { payment_order: order.body.id, payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' } } },
        });
      const first = pay();
      await sleep(400);
      proxy.cut();
      const cutOff = await first;
      expect(cutOff.status).toBe(503);
      expect(cutOff.body.error).toMatchObject({ type: 'processing', code: 'service_unavailable' });
      expect(Number(cutOff.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await pay()).status).toBe(503);
      proxy.restore();
      const restoredAt = Date.now();
      let final: ApiResponse | undefined;
      const seen: number[] = [];
      while (!final && Date.now() - restoredAt < 10_000) {
        const res = await pay();
        seen.push(res.status);
        if (res.status === 201) final = res;
        else await sleep(200);
      }
      // Well before the lock timeout (60 s): the key was let go as soon as the database answered.
      expect(final?.status, String(seen)).toBe(201);
      expect(seen.every((s) => s === 201 || s === 503 || s === 409)).toBe(true);
      expect(final!.body.status).toBe('succeeded');
      const replay = await pay();
      expect(replay.body.id).toBe(final!.body.id);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      const payments = await call(service.url, 'GET', `/v1/payments?payment_order=${order.body.id}`, { key: tenant.testKey });
      expect(payments.body.data.map((p: { id: string }) => p.id)).toEqual([final!.body.id]);
      const charges = await testDb.database.db.execute(sql`SELECT count(*)::int AS n FROM simulator_objects WHERE kind = 'charge' AND reference IN (${final!.body.id}, ${parseId('pay', final!.body.id)!})`);
      expect((charges as unknown as { rows: { n: number }[] }).rows[0]!.n).toBe(1);
    } finally {
      await service.close();
      await proxied.database.close();
    }
  }, 60_000);

  async function waitForDeliveries(endpointId: string, seen: Seen) {
    const expected = [...seen.payments.values()].map((p) => p.order);
    await waitFor(
      `payment_order.paid delivered for every paid order of ${endpointId}`,
      () => {
        const delivered = new Set(receiver.requests.map((r) => JSON.parse(r.body).data.object.id as string));
        return expected.every((id) => delivered.has(id));
      },
      15_000,
    );
  }
});
