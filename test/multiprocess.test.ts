// Idempotency across real service processes sharing one PostgreSQL database (API.md §4), and one
// rate-limit budget shared through Redis (§8). PostgreSQL only: PGlite is single-process.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setRateLimit } from '../src/domain/accounts/service.js';
import { call, createTenant, createTestDatabase, isPostgres, orderBody, type ApiResponse, type Tenant, type TestDatabase } from './helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface ServiceProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** Starts `src/main.ts` as its own OS process on a free port and waits until it is ready. */
async function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', METRICS_PORT: '0', ROLES: 'api', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in time:\n${output}`)), 45_000);
    const onData = () => {
      const match = /Listening on (http:\/\/[^\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${output}`));
    });
  });
  for (let i = 0; ; i++) {
    const ready = await call(url, 'GET', '/ready').catch(() => undefined);
    if (ready?.status === 200) break;
    if (i > 100) throw new Error(`service never became ready:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, url, output: () => output };
}

async function stop(processes: ServiceProcess[]) {
  await Promise.all(
    processes.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('exit', () => {
            clearTimeout(force);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}

describe.skipIf(!isPostgres)('several service processes on one PostgreSQL', () => {
  let testDb: TestDatabase;
  let tenant: Tenant;
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    testDb = await createTestDatabase();
    // The tenant exists before the processes start, so neither bootstraps a first-start account.
    tenant = await createTenant(testDb.database, 'Multiprocess tenant');
    const env = { DATABASE_URL: testDb.url!, RATE_LIMIT_TEST_PER_S: '100000', RATE_LIMIT_TEST_BURST: '100000' };
    processes.push(...(await Promise.all([spawnService(env), spawnService(env)])));
  }, 120_000);

  afterAll(async () => {
    await stop(processes);
    await testDb?.drop();
  }, 60_000);

  async function query(q: ReturnType<typeof sql>): Promise<Record<string, unknown>[]> {
    return ((await testDb.database.db.execute(q)) as unknown as { rows: Record<string, unknown>[] }).rows;
  }

  it('one key fired at both processes at once creates exactly one order, round after round', async () => {
    const [a, b] = processes as [ServiceProcess, ServiceProcess];
    const rounds = Array.from({ length: 20 }, () => ({ key: `mp-${crypto.randomUUID()}`, body: orderBody() }));
    const answers = await Promise.all(
      rounds.map(({ key, body }, r) =>
        Promise.all(
          // Alternate which process hears the key first, so both win some rounds.
          Array.from({ length: 10 }, (_, i) =>
            call(((i + r) % 2 ? b : a).url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: key, body }),
          ),
        ),
      ),
    );

    const ids: string[] = [];
    rounds.forEach((round, r) => {
      const mine = answers[r]!;
      const statuses = mine.map((x) => x.status);
      expect(statuses.every((s) => s === 201 || s === 409), `round ${r}: ${statuses.join(',')} ${a.output()}${b.output()}`).toBe(true);
      const created = mine.filter((x) => x.status === 201);
      expect(created.length, `round ${r}`).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((x) => x.body.id)).size, `round ${r}`).toBe(1);
      expect(new Set(created.map((x) => x.text)).size, `round ${r}`).toBe(1);
      expect(created.filter((x) => x.headers.get('idempotent-replayed') !== 'true'), `round ${r}`).toHaveLength(1);
      for (const busy of mine.filter((x) => x.status === 409)) {
        expect(busy.body.error.code).toBe('idempotency_key_in_use');
        expect(Number(busy.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      ids.push(created[0]!.body.id);
    });

    // Exactly one order and one created event per key in the shared database.
    const refs = rounds.map((r) => r.body.reference);
    const perReference = await query(sql`
      SELECT reference, count(*)::int AS n FROM payment_orders
      WHERE reference IN (${sql.join(refs.map((ref) => sql`${ref}`), sql`, `)}) GROUP BY reference`);
    expect(perReference).toHaveLength(rounds.length);
    for (const row of perReference) expect(row.n).toBe(1);
    const perEvent = await query(sql`
      SELECT object_id, count(*)::int AS n FROM events
      WHERE type = 'payment_order.created' AND object_id IN (${sql.join(ids.map((id) => sql`${id}`), sql`, `)}) GROUP BY object_id`);
    expect(perEvent).toHaveLength(rounds.length);
    for (const row of perEvent) expect(row.n).toBe(1);

    // Afterwards both processes replay the same bytes for every key.
    for (const [r, round] of rounds.entries()) {
      const replays: ApiResponse[] = [];
      for (const p of [a, b]) {
        replays.push(await call(p.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: round.key, body: round.body }));
      }
      for (const replay of replays) {
        expect(replay.status).toBe(201);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.body.id).toBe(ids[r]);
      }
      expect(replays[0]!.text).toBe(replays[1]!.text);
    }
  });

  it('a key used in one process is reused with another body in the other: 422', async () => {
    const [a, b] = processes as [ServiceProcess, ServiceProcess];
    const key = `mp-${crypto.randomUUID()}`;
    const body = orderBody();
    expect((await call(a.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: key, body })).status).toBe(201);
    const reused = await call(b.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: key, body: { ...body, amount: 1 } });
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
  });

  it('cancels once across processes: concurrent cancels with one key make one transition', async () => {
    const [a, b] = processes as [ServiceProcess, ServiceProcess];
    const created = await call(a.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: crypto.randomUUID(), body: orderBody() });
    const key = `mp-${crypto.randomUUID()}`;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call((i % 2 ? b : a).url, 'POST', `/v1/payment-orders/${created.body.id}/cancel`, { key: tenant.testKey, idempotencyKey: key }),
      ),
    );
    for (const x of answers) expect([200, 409]).toContain(x.status);
    const ok = answers.filter((x) => x.status === 200);
    expect(new Set(ok.map((x) => x.text)).size).toBe(1);
    const [events] = await query(
      sql`SELECT count(*)::int AS n FROM events WHERE type = 'payment_order.cancelled' AND object_id = ${created.body.id}`,
    );
    expect(events!.n).toBe(1);
  });
});

describe.skipIf(!isPostgres)('several service processes sharing a Redis rate limit', () => {
  let testDb: TestDatabase;
  let tenant: Tenant;
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    testDb = await createTestDatabase();
    tenant = await createTenant(testDb.database, 'Rate-limited tenant');
    // Hardly any refill during the test: the budget is the burst.
    await setRateLimit(testDb.database.db, tenant.accountId, { perSecond: 1, burst: 6 });
    const env = { DATABASE_URL: testDb.url!, REDIS_URL };
    processes.push(...(await Promise.all([spawnService(env), spawnService(env)])));
  }, 120_000);

  afterAll(async () => {
    await stop(processes);
    await testDb?.drop();
  }, 60_000);

  it('the two processes count one budget for the key', async () => {
    const [a, b] = processes as [ServiceProcess, ServiceProcess];
    const answers: ApiResponse[] = [];
    for (let i = 0; i < 10; i++) answers.push(await call((i % 2 ? b : a).url, 'GET', '/v1/payment-orders', { key: tenant.testKey }));
    const allowed = answers.filter((x) => x.status === 200).length;
    // 6 from the burst, plus at most one refilled token if the ten requests took over a second.
    expect(allowed).toBeGreaterThanOrEqual(6);
    expect(allowed).toBeLessThanOrEqual(7);
    expect(answers.slice(0, 6).map((x) => x.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers.slice(0, 6).map((x) => x.headers.get('ratelimit-remaining'))).toEqual(['5', '4', '3', '2', '1', '0']);
    const refused = answers.find((x) => x.status === 429)!;
    expect(refused.body.error).toMatchObject({ type: 'rate-limit', code: 'rate_limited' });
    expect(refused.headers.get('retry-after')).toBe('1');
    for (const x of answers) expect(x.headers.get('ratelimit-limit')).toBe('6');
  });
});
