// The candidates of one movement and why it goes where it goes (API.md §7 "Declines, cascading
// and routing strategies"; docs/routing.md): a pure function of the matching rule, what each of its
// connectors can take, their circuit breakers, the window's outcomes for the payment's segment
// (stats.ts) and a source of randomness (weights only). The planner (planner.ts) calls it once per
// movement; the route is the candidates not skipped for good, in order, and the explanation is
// stored with the payment.
//
// success_rate is a sliding-window UCB (upper confidence bound): each connector scores its
// authorisation rate in the segment plus a bonus that shrinks with the outcomes it has in the
// window, so a connector with few recent outcomes — one whose failures have left the window after
// an outage — is tried again and wins its traffic back if it now approves. It needs no randomness,
// so the same figures give the same order (the backtest and the tests rely on that).
import { orderConnectors, strategyOf, type RoutingRule } from '../../connectors/router.js';
import type { Candidate, RoutingExplanation, SkipReason } from '../../storage/routing-rules.js';

export { SKIP_REASONS, type Candidate, type RoutingExplanation, type SkipReason } from '../../storage/routing-rules.js';

/** Reasons a connector is left out of the route; a connector whose breaker is open stays in it (last), as the send may find it half-open. */
const LEFT_OUT: ReadonlySet<SkipReason> = new Set(['currency_not_supported', 'amount_limit', 'capability_missing', 'already_declined']);

/** A connector's outcomes in the window, for one segment. */
export interface Outcomes {
  attempts: number;
  authorized: number;
}

/** Below this many outcomes in the segment (over the rule's connectors) the segment is cold: priority order. */
export const COLD_SEGMENT_OUTCOMES = 20;
/** Weight of the exploration bonus (UCB1's is 1; lower explores less, at less cost in declines). */
export const EXPLORATION = 0.5;

export interface RankInput {
  rule: Pick<RoutingRule, 'strategy' | 'connectors'> & { ref: string | null };
  /** Why the connector cannot take this movement at all (capability, currency, amount), or undefined. */
  unable: (key: string) => SkipReason | undefined;
  breakerOpen: (key: string) => boolean;
  /** The segment's outcomes per route key; undefined or missing keys: none. */
  stats?: ReadonlyMap<string, Outcomes>;
  random: () => number;
  /** Connectors that already declined this payment (the cascade): never tried again. */
  declined?: ReadonlySet<string>;
}

export interface Ranked {
  /** The keys to try, in order: breaker-open ones last under success_rate, in place otherwise. */
  route: string[];
  explanation: RoutingExplanation;
}

/** Scores of the eligible keys under success_rate, or undefined when the segment is cold. */
export function successScores(keys: readonly string[], stats: ReadonlyMap<string, Outcomes> | undefined): Map<string, number> | undefined {
  const of = (key: string) => stats?.get(key) ?? { attempts: 0, authorized: 0 };
  const total = keys.reduce((sum, key) => sum + of(key).attempts, 0);
  if (total < COLD_SEGMENT_OUTCOMES) return undefined;
  const scores = new Map<string, number>();
  for (const key of keys) {
    const { attempts, authorized } = of(key);
    // One pseudo-outcome at one half keeps an unseen connector finite (JSON has no Infinity) yet on top.
    const rate = (authorized + 0.5) / (attempts + 1);
    const bonus = EXPLORATION * Math.sqrt((2 * Math.log(total + 1)) / (attempts + 1));
    scores.set(key, Math.round((rate + bonus) * 10_000) / 10_000);
  }
  return scores;
}

export function rankCandidates(input: RankInput): Ranked {
  const { rule } = input;
  const strategy = strategyOf(rule);
  const keys = rule.connectors.map((c) => c.name);
  const reason = (key: string): SkipReason | undefined =>
    input.declined?.has(key) ? 'already_declined' : (input.unable(key) ?? (input.breakerOpen(key) ? 'breaker_open' : undefined));
  const reasons = new Map(keys.map((key) => [key, reason(key)]));
  const eligible = keys.filter((key) => !LEFT_OUT.has(reasons.get(key)!));
  let scores: Map<string, number> | undefined;
  let order: string[];
  if (strategy === 'volume_split') {
    const kept = new Set(eligible);
    order = orderConnectors(rule.connectors.filter((c) => kept.has(c.name)), input.random);
  } else if (strategy === 'success_rate') {
    const open = eligible.filter((key) => reasons.get(key) === 'breaker_open');
    const closed = eligible.filter((key) => reasons.get(key) === undefined);
    scores = successScores(closed, input.stats);
    // A stable sort: equal scores, and a cold segment, keep the rule's order.
    order = [...(scores ? [...closed].sort((a, b) => scores!.get(b)! - scores!.get(a)!) : closed), ...open];
  } else {
    order = eligible;
  }
  const leftOut = keys.filter((key) => !eligible.includes(key));
  const candidates = [...order, ...leftOut].map((key): Candidate => {
    const skipped = reasons.get(key);
    const score = scores?.get(key);
    return { connector: key, ...(score === undefined ? {} : { score }), ...(skipped ? { skipped } : {}) };
  });
  const chosen = candidates.find((c) => c.skipped === undefined)?.connector ?? order[0] ?? null;
  return { route: order, explanation: { rule: rule.ref, strategy, candidates, chosen } };
}

/**
 * The explanation once `connector` has declined the payment (the cascade's hook): it is skipped as
 * already declined. The stored `chosen` stays the first planned: which connector the payment went to
 * since is its attempts' to say (explanationView).
 */
export function markDeclined(explanation: RoutingExplanation, connector: string): RoutingExplanation {
  const candidates = explanation.candidates.map((c): Candidate => (c.connector === connector ? { connector: c.connector, ...(c.score === undefined ? {} : { score: c.score }), skipped: 'already_declined' } : c));
  return { ...explanation, candidates };
}

/**
 * The explanation as a payment answers it, keys in the documented order (jsonb keeps its own):
 * `chosen` is the connector of the final attempt (skips aside) once there is one, else the stored
 * first planned — the one place the answer's `chosen` is decided (docs/routing.md).
 */
export function explanationView(stored: RoutingExplanation | null, attempts: readonly Record<string, unknown>[]): RoutingExplanation | null {
  if (stored === null) return null;
  const tried = attempts.filter((a) => a.outcome !== 'skipped');
  const candidates = stored.candidates.map(
    (c): Candidate => ({ connector: c.connector, ...(c.score === undefined ? {} : { score: c.score }), ...(c.skipped === undefined ? {} : { skipped: c.skipped }) }),
  );
  return { rule: stored.rule, strategy: stored.strategy, candidates, chosen: (tried.at(-1)?.connector as string | undefined) ?? stored.chosen };
}
