// One strategy of the backtest: the whole service in process (sim/service.ts: the real app by
// app.inject, the embedded database, the simulated clock), a merchant whose routing rule names
// the strategy (and the cascade, or none), and the seed's payments sent one at a time, each at its
// arrival on the simulated clock. Routing, the circuit breaker, fallback, the cascade and the
// networks' reattempt limits are the service's own; the processors are the simulators, behaving as
// the traffic model says (model.ts). What comes out is per payment: authorised or not, the calls
// it took, its simulated latency; and the fees the processors' settlement reports show.
import { createAccount, issueKey } from '../../src/domain/accounts/service.js';
import type { Database } from '../../src/storage/db.js';
import { installClock, type SimClock } from '../clock.js';
import { createRng } from '../rng.js';
import { startSimService, type SimService } from '../service.js';
import { FIRST, PROFILES, SECOND, traffic, type Stream, type Traffic } from './model.js';

export const STRATEGIES = ['priority', 'volume_split', 'success_rate'] as const;
export type Strategy = (typeof STRATEGIES)[number];

export interface Config {
  strategy: Strategy;
  cascade: boolean;
}

/** What happened to one payment of the stream. */
export interface Outcome {
  authorised: boolean;
  /** The processor of the final attempt (null: none called), and what it was for. */
  connector: string | null;
  amount: number;
  currency: string;
  /** Calls to processors (skips for an open circuit aside). */
  calls: number;
  latencyMs: number;
  inOutage: boolean;
}

export interface StrategyResult {
  config: Config;
  outcomes: Outcome[];
  /** Processor fees from the processors' settlement reports, per currency, in minor units. */
  fees: Record<string, number>;
}

/** Volume split's weights: most to the cheaper processor. */
const WEIGHTS: Record<string, number> = { [FIRST]: 70, [SECOND]: 30 };

/** The rule under test: both processors, the cheaper first; with cascade, soft declines (generic) go on to the other. */
export function ruleOf(config: Config) {
  return {
    name: 'cards',
    strategy: config.strategy,
    connectors: [FIRST, SECOND].map((name) => ({ name, ...(config.strategy === 'volume_split' ? { weight: WEIGHTS[name] } : {}) })),
    ...(config.cascade ? { cascade: { on: ['generic'], max_attempts: 2 } } : {}),
  };
}

let requests = 0;

async function ok(s: SimService, key: string, method: string, path: string, body?: unknown) {
  const answer = await s.request(method, path, { key, body, idempotencyKey: method === 'POST' ? `bt-${(requests += 1)}` : undefined });
  if (answer === 'crashed' || answer.status >= 300) throw new Error(`${method} ${path} answered ${answer === 'crashed' ? 'nothing' : `${answer.status} ${answer.text}`}`);
  return answer.body;
}

const COUNTED = new Set(['succeeded', 'declined', 'error', 'timeout']);

export interface Bench {
  s: SimService;
  clock: SimClock;
  model: Traffic;
}

/**
 * The service every strategy runs on, one after the other: built once (its database migrated and
 * its app compiled once, which costs more than a strategy's run), the processors behaving as `model` says.
 */
export async function startBench(seed: number, stream: Stream, database: Database): Promise<Bench> {
  const clock = installClock();
  const model = traffic(seed, stream);
  // The routing cache off (ROUTING_CACHE_TTL_MS=0): every payment routes on the window as it stands,
  // read in its own request, instead of on a copy refreshed beside the payments at moments the run does not fix.
  const s = await startSimService(clock, createRng(seed), database, { env: { ROUTING_CACHE_TTL_MS: '0' }, world: { profiles: PROFILES, behaviour: model } });
  return { s, clock, model };
}

export async function closeBench({ s, clock }: Bench): Promise<void> {
  await s.close();
  clock.uninstall();
}

/**
 * One strategy, as a merchant of its own (its own routing, window of outcomes and reattempt
 * counts), on a service whose in-memory state (circuit breaker, caches) starts afresh, as after a
 * restart, a day after the previous strategy's last payment.
 */
export async function runStrategy(bench: Bench, stream: Stream, config: Config): Promise<StrategyResult> {
  const { s, clock, model } = bench;
  await s.crash();
  clock.advance(24 * 60 * 60 * 1000);
  const outcomes: Outcome[] = [];
  const account = await createAccount(s.database.db, `Backtest ${config.strategy}${config.cascade ? ' with cascade' : ''}`);
  const { secret: key } = await issueKey(s.database.db, account.id, { livemode: false });
  await ok(s, key, 'PUT', '/v1/routing', { rules: [ruleOf(config)] });
  const startMs = clock.nowMs();
  for (const p of stream.payments) {
    clock.advance(startMs + p.atMs - clock.nowMs());
    const order = await ok(s, key, 'POST', '/v1/payment-orders', { amount: p.amount, currency: p.issuer.currency, reference: `bt-${p.index}`, customer: { email: 'buyer@example.com' } });
    model.begin(p);
    const sentAt = clock.nowMs();
    const payment = await ok(s, key, 'POST', '/v1/payments', {
      payment_order: order.id,
      payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2034, cvc: '123' } },
    });
    const attempts = (payment.attempts as { outcome: string }[]).filter((a) => COUNTED.has(a.outcome));
    outcomes.push({
      authorised: payment.status === 'succeeded',
      connector: payment.connector ?? null,
      amount: p.amount,
      currency: p.issuer.currency,
      calls: attempts.length,
      latencyMs: clock.nowMs() - sentAt,
      inOutage: p.atMs >= stream.outage.fromMs && p.atMs < stream.outage.toMs,
    });
    // Every payment of the stream is another card, but test mode has one card that succeeds: its
    // declines would count against the next payments' reattempts (docs/declines.md), so they are cleared.
    if (config.cascade && attempts.some((a) => a.outcome === 'declined')) await ok(s, key, 'POST', '/v1/test-helpers/retry-limits/reset', {});
  }
  // The processors' books hold every strategy's charges; this one's are those of its period.
  const fees: Record<string, number> = {};
  const period = { from: new Date(startMs), to: new Date(clock.nowMs() + 1) };
  for (const connector of s.world.connectors) {
    const records = await connector.settlementRecords!(period, new AbortController().signal);
    if (!Array.isArray(records)) throw new Error(`${connector.name}'s settlement report: ${records.message}`);
    for (const r of records) if (r.kind === 'payment') fees[r.currency] = (fees[r.currency] ?? 0) + r.fee;
  }
  return { config, outcomes, fees };
}
