// Where an account's movements can go, in route keys (src/connectors/router.ts): its enabled
// connector accounts whose processor this version can reach (`ca_…`, oldest first), then in test
// mode the built-in simulated processors (by name). The stored rules are read in those keys, so
// that a payment's route, attempts and `connector` name a connector account by its id, which a
// rename does not change.
//
// Defaults, when the account has stored no rules for the mode: its usable connector accounts in the
// order they were created; without any, in test mode the built-in simulators (simulator_a, then
// simulator_b), so that fallback works out of the box; in live mode nothing. In test mode the
// movements none of its accounts can take (mandates beside a card processor's account) keep
// going to the simulators.
import { maxRouteLength } from '../../config.js';
import { capabilitiesOf, catalogueEntry, type Capabilities } from '../../connectors/catalogue.js';
import type { RoutingRule } from '../../connectors/router.js';
import type { Connector } from '../../connectors/types.js';
import type { RequestContext } from '../../kernel/context.js';
import type { Runtime } from '../../runtime.js';
import type { Db } from '../../storage/db.js';
import { loadRoutingEntry, type AccountRef, type RoutingCacheEntry, type StoredChoice } from './cache.js';

export interface RouteTarget {
  /** The route key: the connector account's id, or the built-in connector's name. */
  key: string;
  /** As rules name it. */
  name: string;
  /** The processor, by its catalogue name (or the built-in connector's own name). */
  connector: string;
  connectorAccount: string | null;
  /** The connector instance when there is one without credentials (built-ins, simulator accounts). */
  template: Connector | undefined;
  capabilities: Capabilities | undefined;
}

export type Need = 'card' | 'mandate' | 'payout';

export interface Routing {
  /** The rules in route keys, keeping only the connectors usable now. */
  rules: RoutingRule[];
  /** Every usable target, accounts first. */
  targets: RouteTarget[];
  entry: RoutingCacheEntry;
}

/** The built-in connectors that serve this mode. */
export function builtInTargets(rt: Runtime, livemode: boolean): RouteTarget[] {
  const mode = livemode ? 'live' : 'test';
  const { registry } = rt.connectors;
  return registry
    .names()
    .map((name) => registry.get(name)!)
    .filter((c) => c.modes.includes(mode))
    .map((c) => ({ key: c.name, name: c.name, connector: c.name, connectorAccount: null, template: c, capabilities: capabilitiesOf(c.name, c) }));
}

/** Why a connector account cannot take new movements now, or undefined when it can. */
export function unusableBecause(rt: Runtime, account: Pick<AccountRef, 'connector' | 'status'>): string | undefined {
  if (account.status !== 'enabled') return 'is disabled';
  if (!rt.connectors.implemented(account.connector)) return `is a ${account.connector} account, and this version cannot send requests to ${account.connector} yet`;
  return undefined;
}

export function accountTarget(rt: Runtime, account: AccountRef): RouteTarget {
  const template = rt.connectors.registry.get(account.connector);
  return {
    key: account.id,
    name: account.name,
    connector: account.connector,
    connectorAccount: account.id,
    template,
    capabilities: capabilitiesOf(account.connector, template, account.fields),
  };
}

/** Whether the target can take this kind of movement: what its capabilities say (catalogue.ts), nothing else. */
export function capable(target: RouteTarget, need: Need): boolean {
  const c = target.capabilities;
  if (!c) return false;
  return need === 'card' ? c.card_payments : need === 'payout' ? c.payouts : c.mandate_schemes.length > 0;
}

/** The key of a stored choice. */
export function choiceKey(choice: StoredChoice): string {
  return 'connector_account' in choice ? choice.connector_account : choice.name;
}

/** What the mode routes to without rules of its own: its usable connector accounts, else the built-ins. */
function defaultTargets(targets: RouteTarget[]): RouteTarget[] {
  const accounts = targets.filter((t) => t.connectorAccount !== null);
  return accounts.length ? accounts : targets;
}

/** The longest route this configuration lets one movement take (see maxRouteLength). */
export function routeLengthLimit(rt: Runtime): number {
  return maxRouteLength(rt.idempotencyLockTimeoutS, rt.config.connectorTimeoutMs);
}

/**
 * The targets of a mode without rules, at most as many as one route may take. With a need, the
 * accounts able to take it, else the built-ins: a test-mode tenant whose connector accounts cannot
 * pay out (cards only) keeps the simulated banks.
 */
export function fallbackKeys(rt: Runtime, routing: Routing, need?: Need): string[] {
  const targets = defaultTargets(routing.targets.filter((t) => need === undefined || capable(t, need)));
  return targets.slice(0, routeLengthLimit(rt)).map((t) => t.key);
}

const NEEDS: readonly Need[] = ['card', 'mandate', 'payout'];

/**
 * The default rules of a mode without rules of its own: its connector accounts (or, without any,
 * the built-ins). In test mode, what no account can take (mandates beside a card processor's
 * account, say) still goes to the built-in simulators, in a second rule for those movements only.
 */
export function defaultRuleTargets(rt: Runtime, targets: RouteTarget[]): { types?: Need[]; targets: RouteTarget[] }[] {
  const limit = (list: RouteTarget[]) => list.slice(0, routeLengthLimit(rt));
  const chosen = defaultTargets(targets);
  const builtIns = targets.filter((t) => t.connectorAccount === null);
  const uncovered = NEEDS.filter((need) => !chosen.some((t) => capable(t, need)) && builtIns.some((t) => capable(t, need)));
  if (chosen === builtIns || uncovered.length === 0) return chosen.length ? [{ targets: limit(chosen) }] : [];
  const covered = NEEDS.filter((need) => !uncovered.includes(need));
  return [
    ...(covered.length ? [{ types: covered, targets: limit(chosen) }] : []),
    { types: uncovered, targets: limit(builtIns) },
  ];
}

export function usableTargets(rt: Runtime, entry: RoutingCacheEntry, livemode: boolean): RouteTarget[] {
  const accounts = entry.accounts.filter((a) => unusableBecause(rt, a) === undefined).map((a) => accountTarget(rt, a));
  return [...accounts, ...builtInTargets(rt, livemode)];
}

/** The account's routing for its mode, in route keys. */
export async function routingFor(db: Db, rt: Runtime, ctx: RequestContext): Promise<Routing> {
  const entry = await loadRoutingEntry(db, rt, ctx);
  const targets = usableTargets(rt, entry, ctx.livemode);
  const usable = new Set(targets.map((t) => t.key));
  const partial: Routing = { rules: [], targets, entry };
  if (entry.rules === undefined) {
    const rules = defaultRuleTargets(rt, targets).map(
      (rule): RoutingRule => ({ name: 'default', ...(rule.types ? { payment_method_types: rule.types } : {}), connectors: rule.targets.map((t) => ({ name: t.key })) }),
    );
    return { ...partial, rules };
  }
  const rules = entry.rules.map((rule): RoutingRule => {
    const connectors = rule.connectors.map((c) => ({ name: choiceKey(c), weight: c.weight })).filter((c) => usable.has(c.name));
    return { ...rule, connectors };
  });
  return { ...partial, rules };
}

/** The keys of the targets able to take `need`. */
export function capableKeys(routing: Routing, need: Need): Set<string> {
  return new Set(routing.targets.filter((t) => capable(t, need)).map((t) => t.key));
}

/** Whether every connector of the route is a built-in simulated processor (they know only the test cards). */
export function onlySimulated(routing: Routing, route: readonly string[]): boolean {
  return route.every((key) => {
    const target = routing.targets.find((t) => t.key === key);
    return target !== undefined && catalogueEntry(target.connector)?.simulated === true;
  });
}

/**
 * Whether some connector of the route may be sent a charge again by the worker (a processor that
 * replays sends instead of answering status questions: CatalogueEntry.replaysSends), so that a card
 * payment on it keeps its card until final; an uncatalogued double says so by what it implements.
 */
export function routeReplaysSends(routing: Routing, route: readonly string[]): boolean {
  return route.some((key) => {
    const target = routing.targets.find((t) => t.key === key);
    if (!target) return false;
    const entry = catalogueEntry(target.connector);
    return entry ? entry.replaysSends === true : target.template?.replaysSendsForMs !== undefined;
  });
}

/** Why the processor behind route key `key` cannot take `amount` of `currency`, or undefined. */
export function amountLimitOf(routing: Routing, key: string, amount: number, currency: string): string | undefined {
  const target = routing.targets.find((t) => t.key === key);
  return target && catalogueEntry(target.connector)?.amountLimit?.(amount, currency);
}
