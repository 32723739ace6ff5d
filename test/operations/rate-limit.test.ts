// Rate limits as docs/api-conventions.md describes them: a token bucket per API key (mode defaults, or the account's own budget),
// RateLimit-* headers on every authenticated response, 429 rate_limited with Retry-After, and
// Redis-backed counters shared by several processes.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { issueKey, setRateLimit } from '../../src/domain/accounts/service.js';
import { MemoryRateLimiter, RedisRateLimiter, type Budget, type RateLimiter } from '../../src/http/rate-limiter.js';
import { call, client, orderBody, type TestService, REDIS_URL } from '../support/helpers.js';
import { useDatabase } from '../support/fixtures.js';

const TEST_BUDGET = { perSecond: 2, burst: 3 };
const LIVE_BUDGET = { perSecond: 10, burst: 5 };

const h = useDatabase();
afterAll(async () => {
  // Leave nothing behind in the shared Redis.
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  try {
    await redis.connect();
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${PREFIX_ROOT}*`, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
});

const PREFIX_ROOT = `test:ratelimit:${process.pid}:${crypto.randomUUID()}:`;
const uniquePrefix = () => `${PREFIX_ROOT}${crypto.randomUUID()}:`;

function clock(start = 1_700_000_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

async function takeMany(limiter: RateLimiter, key: string, budget: Budget, n: number) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await limiter.take(key, budget));
  return out;
}

describe('rate limiter: memory token bucket', () => {
  it('allows the burst, then refuses with Retry-After', async () => {
    const c = clock();
    const limiter = new MemoryRateLimiter(c.now);
    const decisions = await takeMany(limiter, 'k', TEST_BUDGET, 4);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    expect(decisions[0]).toMatchObject({ retryAfterS: 0, resetS: 1 });
    expect(decisions[3]).toMatchObject({ allowed: false, remaining: 0, retryAfterS: 1, resetS: 2 });
  });

  it('refills at the configured rate and never above the burst', async () => {
    const c = clock();
    const limiter = new MemoryRateLimiter(c.now);
    await takeMany(limiter, 'k', TEST_BUDGET, 3);
    c.advance(499); // 0.998 tokens at 2/s
    expect((await limiter.take('k', TEST_BUDGET)).allowed).toBe(false);
    c.advance(1); // refused requests cost nothing: 1 token now
    expect(await limiter.take('k', TEST_BUDGET)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await limiter.take('k', TEST_BUDGET)).allowed).toBe(false);
    c.advance(1000); // 2 tokens
    expect((await takeMany(limiter, 'k', TEST_BUDGET, 3)).map((d) => d.allowed)).toEqual([true, true, false]);

    c.advance(3_600_000); // an hour idle: full again, but only the burst
    expect((await takeMany(limiter, 'k', TEST_BUDGET, 4)).map((d) => d.allowed)).toEqual([true, true, true, false]);
  });

  it('says how long to wait: Retry-After for one token, Reset for a full bucket', async () => {
    const c = clock();
    const limiter = new MemoryRateLimiter(c.now);
    const slow = { perSecond: 0.5, burst: 2 };
    await takeMany(limiter, 'slow', slow, 2);
    expect(await limiter.take('slow', slow)).toMatchObject({ allowed: false, retryAfterS: 2, resetS: 4 });
    c.advance(1500); // 0.75 tokens: half a second to go, rounded up
    expect(await limiter.take('slow', slow)).toMatchObject({ allowed: false, retryAfterS: 1 });

    const wide = { perSecond: 1, burst: 10 };
    const all = await takeMany(limiter, 'wide', wide, 10);
    expect(all.at(-1)).toMatchObject({ allowed: true, remaining: 0, resetS: 10 });
  });

  it('keeps one bucket per key', async () => {
    const limiter = new MemoryRateLimiter(clock().now);
    await takeMany(limiter, 'a', TEST_BUDGET, 3);
    expect((await limiter.take('a', TEST_BUDGET)).allowed).toBe(false);
    expect(await limiter.take('b', TEST_BUDGET)).toMatchObject({ allowed: true, remaining: 2 });
  });
});

describe('rate limits over HTTP', () => {
  async function start(limiter: RateLimiter = new MemoryRateLimiter(clock().now), overrides = {}): Promise<TestService> {
    return h.startService({ overrides: { rateLimit: { test: TEST_BUDGET, live: LIVE_BUDGET }, apiKeyCacheTtlMs: 0, ...overrides }, rateLimiter: limiter });
  }

  it('sends RateLimit headers on every authenticated response, then 429 rate_limited with Retry-After', async () => {
    const c = clock();
    const service = await start(new MemoryRateLimiter(c.now));
    const tenant = await h.createTenant();
    const api = client(service.url, tenant.testKey);

    const answers = [
      await api.post('/v1/payment-orders', orderBody()), // 201
      await api.get('/v1/payment-orders/ord_nope'), // 404
      await api.get('/v1/payment-orders?limit=1000'), // 400
    ];
    expect(answers.map((a) => a.status)).toEqual([201, 404, 400]);
    answers.forEach((a, i) => {
      expect(a.headers.get('ratelimit-limit')).toBe('3');
      expect(a.headers.get('ratelimit-remaining')).toBe(String(2 - i));
      expect(Number(a.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
      expect(a.headers.get('retry-after')).toBeNull();
    });

    const refused = await api.get('/v1/payment-orders');
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ type: 'rate-limit', code: 'rate_limited' });
    expect(refused.body.error.request_id).toBe(refused.headers.get('request-id'));
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('ratelimit-limit')).toBe('3');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('ratelimit-reset')).toBe('2');

    c.advance(500);
    const again = await api.get('/v1/payment-orders');
    expect(again.status).toBe(200);
    expect(again.headers.get('ratelimit-remaining')).toBe('0');

    // Public routes have no key to count against.
    const health = await call(service.url, 'GET', '/health');
    expect(health.status).toBe(200);
  });

  it('uses the mode default: the live key has the live budget', async () => {
    const service = await start();
    const tenant = await h.createTenant();
    const live = await client(service.url, tenant.liveKey).get('/v1/payment-orders');
    expect(live.status).toBe(200);
    expect(live.headers.get('ratelimit-limit')).toBe('5');
    expect(live.headers.get('ratelimit-remaining')).toBe('4');
  });

  it('counts per API key: one key at its limit does not stop another', async () => {
    const service = await start();
    const tenant = await h.createTenant();
    const second = await issueKey(h.db, tenant.accountId, { livemode: false });
    const one = client(service.url, tenant.testKey);
    const two = client(service.url, second.secret);
    for (let i = 0; i < 3; i++) expect((await one.get('/v1/payment-orders')).status).toBe(200);
    expect((await one.get('/v1/payment-orders')).status).toBe(429);
    const other = await two.get('/v1/payment-orders');
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-remaining')).toBe('2');
    // Another tenant is untouched too.
    const stranger = await h.createTenant();
    expect((await client(service.url, stranger.testKey).get('/v1/payment-orders')).status).toBe(200);
  });

  it("applies the account's own budget set by onboarding", async () => {
    const service = await start();
    const tenant = await h.createTenant();
    const api = client(service.url, tenant.testKey);
    expect((await api.get('/v1/payment-orders')).headers.get('ratelimit-limit')).toBe('3');

    await setRateLimit(h.db, tenant.accountId, { perSecond: 1, burst: 6 });
    const raised = await api.get('/v1/payment-orders');
    expect(raised.headers.get('ratelimit-limit')).toBe('6');
    expect(raised.headers.get('ratelimit-policy')).toBe('1;w=1;burst=6');
    // The live key follows the account budget too.
    expect((await client(service.url, tenant.liveKey).get('/v1/payment-orders')).headers.get('ratelimit-limit')).toBe('6');

    await setRateLimit(h.db, tenant.accountId, null);
    expect((await api.get('/v1/payment-orders')).headers.get('ratelimit-limit')).toBe('3');
  });

  it('stores nothing for a 429: the idempotency key is free afterwards', async () => {
    const c = clock();
    const service = await start(new MemoryRateLimiter(c.now));
    const tenant = await h.createTenant();
    const api = client(service.url, tenant.testKey);
    for (let i = 0; i < 3; i++) await api.get('/v1/payment-orders');
    const key = `rl-${crypto.randomUUID()}`;
    const body = orderBody();
    const refused = await api.post('/v1/payment-orders', body, { idempotencyKey: key });
    expect(refused.status).toBe(429);
    const { rows } = (await h.db.execute(sql`SELECT 1 FROM idempotency_keys WHERE key = ${key}`)) as unknown as {
      rows: unknown[];
    };
    expect(rows).toHaveLength(0);
    c.advance(1000);
    const created = await api.post('/v1/payment-orders', body, { idempotencyKey: key });
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotent-replayed')).toBeNull();
  });

  it('lets requests through when the rate-limit store is down', async () => {
    const broken = new RedisRateLimiter('redis://127.0.0.1:1', uniquePrefix());
    const service = await start(broken);
    const tenant = await h.createTenant();
    const started = Date.now();
    const res = await client(service.url, tenant.testKey).get('/v1/payment-orders');
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-limit')).toBeNull();
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('rate limits in Redis', () => {
  it('two limiter instances (two processes) share one bucket', async () => {
    const prefix = uniquePrefix();
    const a = h.track(new RedisRateLimiter(REDIS_URL, prefix));
    const b = h.track(new RedisRateLimiter(REDIS_URL, prefix));
    const budget = { perSecond: 0.01, burst: 5 };
    const decisions = [];
    for (let i = 0; i < 8; i++) decisions.push(await (i % 2 ? b : a).take('key', budget));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0, 0]);
    expect(decisions[5]!.retryAfterS).toBeGreaterThanOrEqual(99);
    // Another key, or the same key under another prefix, is another bucket.
    expect((await a.take('other', budget)).remaining).toBe(4);
    const elsewhere = h.track(new RedisRateLimiter(REDIS_URL, uniquePrefix()));
    expect((await elsewhere.take('key', budget)).allowed).toBe(true);
  });

  it('is atomic under concurrency: exactly the burst is allowed', async () => {
    const prefix = uniquePrefix();
    const limiters = [0, 1, 2].map(() => h.track(new RedisRateLimiter(REDIS_URL, prefix)));
    const budget = { perSecond: 0.01, burst: 10 };
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => limiters[i % 3]!.take('key', budget)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
  });

  it('refills at the configured rate', async () => {
    const limiter = h.track(new RedisRateLimiter(REDIS_URL, uniquePrefix()));
    const budget = { perSecond: 5, burst: 2 };
    expect((await takeMany(limiter, 'key', budget, 3)).map((d) => d.allowed)).toEqual([true, true, false]);
    await new Promise((resolve) => setTimeout(resolve, 600)); // 3 tokens' worth, capped at 2
    const after = await takeMany(limiter, 'key', budget, 3);
    expect(after.map((d) => d.allowed)).toEqual([true, true, false]);
  });

  it('two service instances with Redis-backed limiters share one budget over HTTP', async () => {
    const prefix = uniquePrefix();
    const budget = { perSecond: 0.05, burst: 4 };
    const overrides = { rateLimit: { test: budget, live: budget }, apiKeyCacheTtlMs: 0 };
    const one = await h.startService({ overrides, rateLimiter: new RedisRateLimiter(REDIS_URL, prefix) });
    const two = await h.startService({ overrides, rateLimiter: new RedisRateLimiter(REDIS_URL, prefix) });
    const tenant = await h.createTenant();
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await client((i % 2 ? two : one).url, tenant.testKey).get('/v1/payment-orders'));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
    expect(answers.map((a) => a.headers.get('ratelimit-remaining'))).toEqual(['3', '2', '1', '0', '0', '0', '0', '0']);
    for (const a of answers.slice(4)) expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
