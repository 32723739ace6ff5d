// The one route planner of every movement that goes to a processor — payments, mandates' set-ups
// and payouts: the first routing rule matching the movement (currency, amount, method type) names
// the connectors, weighted ones drawn first (src/connectors/router.ts); only those able to take
// this kind of movement are kept (targets.ts). What differs between movements is said here, once:
// a mandate's set-up moves no amount (rules' amount ranges are for its debits), a payment leaves out
// connectors whose processor cannot take its amount, and a payout without a matching rule goes to
// the mode's default connectors able to pay out.
import { planRoute, ruleMatches } from '../../connectors/router.js';
import type { CascadeRule } from '../../connectors/routing-rules.js';
import { ApiError } from '../../kernel/errors.js';
import type { Runtime } from '../../runtime.js';
import { amountLimitOf, capableKeys, fallbackKeys, type Need, type Routing } from './targets.js';

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
}

/** The connectors the movement may go to, in order; empty when none may. */
export function planMovementRoute(rt: Runtime, routing: Routing, query: RouteQuery, opts: RouteOptions = {}): string[] {
  const capable = capableKeys(routing, query.need);
  const rules = query.amount === undefined ? routing.rules.map((r) => ({ ...r, amount_min: undefined, amount_max: undefined })) : routing.rules;
  const input = { currency: query.currency, amount: query.amount ?? 1, paymentMethodType: query.need };
  const planned = (planRoute(rules, input, rt.random) ?? []).filter((key) => capable.has(key));
  if (planned.length === 0) return opts.fallback ? fallbackKeys(rt, routing, query.need) : [];
  if (opts.amountLimitParam === undefined || query.amount === undefined) return planned;
  const amount = query.amount;
  const limits = planned.map((key) => amountLimitOf(routing, key, amount, query.currency));
  const route = planned.filter((_, i) => limits[i] === undefined);
  if (route.length === 0) {
    throw new ApiError('amount_above_limit', { param: opts.amountLimitParam, message: `No connector of the route can take this amount: ${[...new Set(limits)].join('; ')}.` });
  }
  return route;
}

/** The cascade of the rule that routes the movement (the first matching one, as planMovementRoute reads them); undefined without one. */
export function cascadeOf(routing: Routing, query: RouteQuery): CascadeRule | undefined {
  const input = { currency: query.currency, amount: query.amount ?? 1, paymentMethodType: query.need };
  return routing.rules.find((rule) => ruleMatches(rule, input))?.cascade;
}
