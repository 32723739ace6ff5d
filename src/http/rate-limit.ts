// Per-key token buckets (docs/api-conventions.md, rate limits): the account's own budget when onboarding set one, else the
// mode's default. Every authenticated response carries the RateLimit-* headers. Inbound processor
// webhooks of a connector account have a bucket of their own, the live default.
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { Config } from '../config.js';
import type { Principal } from '../domain/accounts/service.js';
import type { Budget, Decision, RateLimiter } from './rate-limiter.js';
import { ApiError } from '../kernel/errors.js';

export async function applyRateLimit(
  limiter: RateLimiter,
  config: Config,
  principal: Principal,
  reply: FastifyReply,
  log: FastifyBaseLogger,
): Promise<void> {
  const budget = principal.rateLimit ?? config.rateLimit[principal.livemode ? 'live' : 'test'];
  await takeToken(limiter, principal.keyId, budget, reply, log);
}

/** One request against `key`'s bucket: the RateLimit-* headers, or 429 rate_limited with Retry-After. */
export async function takeToken(limiter: RateLimiter, key: string, budget: Budget, reply: FastifyReply, log: FastifyBaseLogger): Promise<void> {
  let decision: Decision;
  try {
    decision = await limiter.take(key, budget);
  } catch (err) {
    // A rate-limit store outage must not stop payments: let the request through and say so.
    log.warn({ err }, 'rate limiter unavailable; request allowed');
    return;
  }
  reply.header('ratelimit-limit', String(budget.burst));
  reply.header('ratelimit-remaining', String(decision.remaining));
  reply.header('ratelimit-reset', String(decision.resetS));
  reply.header('ratelimit-policy', `${budget.perSecond};w=1;burst=${budget.burst}`);
  if (!decision.allowed) {
    throw new ApiError('rate_limited', { headers: { 'retry-after': String(decision.retryAfterS) } });
  }
}
