// The one route planner of every movement that goes to a processor — payments, mandates' set-ups
// and payouts: the first routing rule matching the movement (currency, amount, method type) names
// the connectors, ordered by the rule's strategy (strategy.ts); only those able to take this kind
// of movement in its currency are kept (targets.ts), and the explanation says why of the others. What differs between movements is said here, once:
// a mandate's set-up moves no amount (rules' amount ranges are for its debits), a payment leaves out
// connectors whose processor cannot take its amount, and a payout without a matching rule goes to
// the mode's default connectors able to pay out.
import { ruleMatches } from '../../connectors/router.js';
import type { CascadeRule } from '../../storage/routing-rules.js';
import { ApiError } from '../../kernel/errors.js';
import type { Runtime } from '../../runtime.js';
import { rankCandidates, type Outcomes, type Ranked, type SkipReason } from './strategy.js';
import { amountLimitOf, capable, fallbackKeys, type Need, type Routing } from './targets.js';

export interface RouteQuery {
  need: Need;
  currency: string;
  /** Undefined for a movement that moves no amount: the rules' amount ranges do not apply. */
  amount?: number;
}

export interface RouteOptions {
  /** Leave out connectors whose processor cannot take the amount; when that empties the route, a typed 422 on this parameter. */
  amountLimitParam?: string;
  /** Without a matching rule, the mode's default connectors able to take it. */
  fallback?: boolean;
  /** success_rate: the window's outcomes per route key in the movement's segment (stats.ts). */
  stats?: ReadonlyMap<string, Outcomes>;
  /** Connectors that already declined the movement (a cascade): skipped as already_declined. */
  declined?: ReadonlySet<string>;
}

/** The connectors the movement may go to, in order, and why (strategy.ts); an empty route when none may. */
export function planExplainedRoute(rt: Runtime, routing: Routing, query: RouteQuery, opts: RouteOptions = {}): Ranked {
  const input = { currency: query.currency, amount: query.amount ?? 1, paymentMethodType: query.need };
  // A movement without an amount (a mandate's set-up) matches rules whatever their amount range.
  const index = routing.rules.findIndex((r) => ruleMatches(query.amount === undefined ? { ...r, amount_min: undefined, amount_max: undefined } : r, input));
  const rule = routing.rules[index];
  const limits = new Map<string, string>();
  const unable = (key: string): SkipReason | undefined => {
    const target = routing.targets.find((t) => t.key === key);
    if (!target || !capable(target, query.need)) return 'capability_missing';
    if (!target.capabilities!.currencies.includes(query.currency)) {
      limits.set(key, amountLimitOf(routing, key, query.amount ?? 1, query.currency) ?? `${target.name} does not take ${query.currency}`);
      return 'currency_not_supported';
    }
    if (opts.amountLimitParam === undefined || query.amount === undefined) return undefined;
    const limit = amountLimitOf(routing, key, query.amount, query.currency);
    if (limit !== undefined) limits.set(key, limit);
    return limit === undefined ? undefined : 'amount_limit';
  };
  const breakerOpen = (key: string) => !rt.connectors.breaker.isAvailable(key);
  const ranked = rule
    ? rankCandidates({ rule: { ...rule, ref: rule.name ?? `rules.${index}` }, unable, breakerOpen, stats: opts.stats, declined: opts.declined, random: rt.random })
    : { route: [], explanation: { rule: null, strategy: 'priority' as const, candidates: [], chosen: null } };
  if (ranked.route.length > 0) return ranked;
  if (opts.fallback) {
    const route = fallbackKeys(rt, routing, query.need);
    return { route, explanation: { rule: null, strategy: 'priority', candidates: route.map((connector) => ({ connector })), chosen: route[0] ?? null } };
  }
  if (opts.amountLimitParam !== undefined && limits.size > 0) {
    throw new ApiError('amount_above_limit', { param: opts.amountLimitParam, message: `No connector of the route can take this amount: ${[...new Set(limits.values())].join('; ')}.` });
  }
  return ranked;
}

/** The connectors the movement may go to, in order; empty when none may. */
export function planMovementRoute(rt: Runtime, routing: Routing, query: RouteQuery, opts: RouteOptions = {}): string[] {
  return planExplainedRoute(rt, routing, query, opts).route;
}

/** The cascade of the rule that routes the movement (the first matching one, as planMovementRoute reads them); undefined without one. */
export function cascadeOf(routing: Routing, query: RouteQuery): CascadeRule | undefined {
  const input = { currency: query.currency, amount: query.amount ?? 1, paymentMethodType: query.need };
  return routing.rules.find((rule) => ruleMatches(rule, input))?.cascade;
}
