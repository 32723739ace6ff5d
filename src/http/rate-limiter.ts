// Token-bucket rate limiting behind one small interface, with an in-memory store for a single
// process and a Redis store (one atomic Lua script per request) for processes sharing a budget.
import { Redis } from 'ioredis';

export interface Budget {
  perSecond: number;
  burst: number;
}

export interface Decision {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetS: number;
  /** Seconds until one token is available (only meaningful when refused). */
  retryAfterS: number;
}

export interface RateLimiter {
  take(key: string, budget: Budget): Promise<Decision>;
  close(): Promise<void>;
}

function decide(tokensBefore: number, budget: Budget): Decision {
  const allowed = tokensBefore >= 1;
  const tokens = allowed ? tokensBefore - 1 : tokensBefore;
  return {
    allowed,
    remaining: Math.floor(tokens),
    resetS: Math.ceil((budget.burst - tokens) / budget.perSecond),
    retryAfterS: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / budget.perSecond)),
  };
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; atMs: number }>();

  constructor(private readonly nowMs: () => number = Date.now) {}

  async take(key: string, budget: Budget): Promise<Decision> {
    const now = this.nowMs();
    const bucket = this.buckets.get(key) ?? { tokens: budget.burst, atMs: now };
    const refilled = Math.min(budget.burst, bucket.tokens + ((now - bucket.atMs) / 1000) * budget.perSecond);
    const decision = decide(refilled, budget);
    bucket.tokens = decision.allowed ? refilled - 1 : refilled;
    bucket.atMs = now;
    this.buckets.set(key, bucket);
    if (this.buckets.size > 100_000) this.evictFull(now, budget);
    return decision;
  }

  /** Buckets that have refilled completely carry no information and can go. */
  private evictFull(now: number, budget: Budget) {
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.atMs) / 1000) * budget.perSecond >= budget.burst) this.buckets.delete(key);
    }
  }

  async close(): Promise<void> {}
}

// Uses Redis' own clock so that processes with skewed clocks still share one consistent bucket.
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + (math.max(0, now - at) / 1000) * rate)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return { allowed, tostring(tokens) }
`;

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;

  constructor(url: string, private readonly prefix = 'ratelimit:') {
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false });
    // Connection errors reach the caller as a failed take() (logged there, request allowed);
    // without a listener ioredis would also print every reconnect failure, unstructured, to stderr.
    this.redis.on('error', () => {});
    this.redis.defineCommand('takeToken', { numberOfKeys: 1, lua: TAKE_SCRIPT });
  }

  async take(key: string, budget: Budget): Promise<Decision> {
    const [allowed, tokensText] = (await (this.redis as unknown as {
      takeToken(k: string, rate: number, burst: number): Promise<[number, string]>;
    }).takeToken(this.prefix + key, budget.perSecond, budget.burst)) as [number, string];
    const tokensAfter = Number(tokensText);
    return decide(allowed === 1 ? tokensAfter + 1 : tokensAfter, budget);
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }
}

export function createRateLimiter(redisUrl: string | undefined): RateLimiter {
  return redisUrl ? new RedisRateLimiter(redisUrl) : new MemoryRateLimiter();
}
