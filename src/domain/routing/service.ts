// Each account's routing rules per mode (GET/PUT /v1/routing). A rule names its connectors by
// name — a connector account's name, or in test mode a built-in simulator's — or a connector
// account by its id (`connector_account`); a connector account is stored by its id, so renaming it
// keeps the rules, and shown under its current name. What routes where is targets.ts.
import { sql } from 'drizzle-orm';
import type { Db, Tx } from '../../storage/db.js';
import { connectorAccounts, routingConfigs } from '../../storage/schema.js';
import { ApiError } from '../../kernel/errors.js';
import { parseId } from '../../kernel/ids.js';
import { notFound } from '../../storage/lookup.js';
import type { RequestContext } from '../../kernel/context.js';
import type { Runtime } from '../../runtime.js';
import { accountRefs, forgetRouting, loadRoutingEntry, type AccountRef, type RoutingCacheEntry, type StoredChoice, type StoredRule } from './cache.js';
import { builtInTargets, choiceKey, defaultRuleTargets, routeLengthLimit, unusableBecause, usableTargets } from './targets.js';
import type { PutRoutingBody, RoutingView } from './schema.js';
import type { CascadeRule, RoutingStrategy } from '../../storage/routing-rules.js';
import { CASCADABLE, NEVER_CASCADED } from '../../connectors/declines.js';

type ChoiceView = RoutingView['rules'][number]['connectors'][number];

function choiceView(choice: StoredChoice, accounts: readonly AccountRef[]): ChoiceView {
  const weight = choice.weight === undefined ? {} : { weight: choice.weight };
  if (!('connector_account' in choice)) return { name: choice.name, ...weight };
  const account = accounts.find((a) => a.id === choice.connector_account);
  return { name: account?.name ?? choice.connector_account, connector_account: choice.connector_account, ...weight };
}

function view(rt: Runtime, ctx: RequestContext, entry: RoutingCacheEntry): RoutingView {
  const stored: StoredRule[] =
    entry.rules ??
    // The defaults, as rules would name them.
    routingDefaults(rt, ctx, entry);
  return {
    object: 'routing',
    livemode: ctx.livemode,
    rules: stored.map((rule) => ({ ...rule, connectors: rule.connectors.map((c) => choiceView(c, entry.accounts)) })),
    is_default: entry.rules === undefined,
    connectors: usableTargets(rt, entry, ctx.livemode).map((t) => ({
      name: t.name,
      connector: t.connector,
      connector_account: t.connectorAccount,
      circuit: rt.connectors.breaker.state(t.key),
    })),
    version: entry.version,
    updated_at: entry.updatedAt?.toISOString() ?? null,
  };
}

function routingDefaults(rt: Runtime, ctx: RequestContext, entry: RoutingCacheEntry): StoredRule[] {
  return defaultRuleTargets(rt, usableTargets(rt, entry, ctx.livemode)).map((rule) => ({
    name: 'default',
    ...(rule.types ? { payment_method_types: rule.types } : {}),
    connectors: rule.targets.map((t): StoredChoice => (t.connectorAccount ? { connector_account: t.connectorAccount } : { name: t.name })),
  }));
}

export async function retrieveRouting(db: Db, rt: Runtime, ctx: RequestContext): Promise<RoutingView> {
  return view(rt, ctx, await loadRoutingEntry(db, rt, ctx));
}

type Choice = PutRoutingBody['rules'][number]['connectors'][number];

/** A rule names an account id this mode does not have: answered as a 404 once the transaction is over. */
class MissingAccount extends Error {
  constructor(
    readonly id: string,
    readonly param: string,
  ) {
    super(`no connector account ${id}`);
  }
}

/** One choice of a new rule, checked against the mode's accounts (locked) and built-ins; its stored form. */
function storedChoice(rt: Runtime, ctx: RequestContext, accounts: readonly AccountRef[], choice: Choice, param: string): StoredChoice {
  const weight = choice.weight === undefined ? {} : { weight: choice.weight };
  let account: AccountRef | undefined;
  if (choice.connector_account !== undefined) {
    account = accounts.find((a) => a.id === choice.connector_account);
    if (!account) throw new MissingAccount(choice.connector_account, `${param}.connector_account`);
    if (choice.name !== undefined && choice.name !== account.name) {
      throw new ApiError('parameter_invalid', {
        param: `${param}.name`,
        message: `${param}.name: ${choice.connector_account} is named ${account.name}, not ${choice.name}; give one of name and connector_account, or both agreeing.`,
      });
    }
  } else if (choice.name !== undefined) {
    account = accounts.find((a) => a.name === choice.name);
    if (!account) {
      if (builtInTargets(rt, ctx.livemode).some((t) => t.name === choice.name)) return { name: choice.name, ...weight };
      const mode = ctx.livemode ? 'live' : 'test';
      const available = [...accounts.map((a) => a.name), ...builtInTargets(rt, ctx.livemode).map((t) => t.name)];
      const why = rt.connectors.registry.get(choice.name)
        ? `${choice.name} cannot take ${mode}-mode payments`
        : `there is no connector account named ${choice.name} in ${mode} mode`;
      throw new ApiError('parameter_invalid', {
        param: `${param}.name`,
        message: `${param}.name: ${why}; available: ${available.join(', ') || 'none (create one with POST /v1/connector-accounts)'}.`,
      });
    }
  } else {
    throw new ApiError('parameter_missing', { param: `${param}.name`, message: `Missing required parameter: ${param}.name (or ${param}.connector_account).` });
  }
  const why = unusableBecause(rt, account);
  if (why) throw new ApiError('parameter_invalid', { param: `${param}.${choice.name === undefined ? 'connector_account' : 'name'}`, message: `${param}: the connector account ${account.name} (${account.id}) ${why}.` });
  return { connector_account: account.id, ...weight };
}

/** Weights are what volume_split orders by, and only it: a rule naming another strategy gives none, and volume_split needs some. */
function strategyFits(rule: PutRoutingBody['rules'][number], param: string): void {
  if (rule.strategy === undefined) return;
  const weighted = rule.connectors.findIndex((c) => (c.weight ?? 0) > 0);
  if (rule.strategy === 'volume_split' && weighted < 0) {
    throw new ApiError('parameter_invalid', { param: `${param}.strategy`, message: `${param}.strategy: volume_split draws by weight, and no connector of the rule has one above 0.` });
  }
  if (rule.strategy !== 'volume_split' && weighted >= 0) {
    throw new ApiError('parameter_invalid', {
      param: `${param}.connectors.${weighted}.weight`,
      message: `${param}.connectors.${weighted}.weight: a ${rule.strategy} rule does not split by weight; leave weights out or use volume_split.`,
    });
  }
}

async function storedRules(rt: Runtime, ctx: RequestContext, tx: Tx, body: PutRoutingBody): Promise<StoredRule[]> {
  // Locked for share: a concurrent delete or disable of an account waits for this change, or this
  // change sees it (a deleted account is named by no rule).
  const accounts = await accountRefs(tx, ctx, { lock: true });
  const limit = routeLengthLimit(rt);
  const rules: StoredRule[] = [];
  for (const [r, rule] of body.rules.entries()) {
    if (rule.amount_min !== undefined && rule.amount_max !== undefined && rule.amount_min > rule.amount_max) {
      throw new ApiError('parameter_invalid', { param: `rules.${r}.amount_min`, message: `rules.${r}.amount_min must not be above amount_max.` });
    }
    if (rule.connectors.length > limit) {
      throw new ApiError('parameter_invalid', {
        param: `rules.${r}.connectors`,
        message: `rules.${r}.connectors: a rule may list at most ${limit} connectors, so that a request's calls to all of them fit well within IDEMPOTENCY_LOCK_TIMEOUT_S (CONNECTOR_TIMEOUT_MS each).`,
      });
    }
    strategyFits(rule, `rules.${r}`);
    const seen = new Set<string>();
    const connectors: StoredChoice[] = [];
    for (const [c, choice] of rule.connectors.entries()) {
      const param = `rules.${r}.connectors.${c}`;
      const stored = storedChoice(rt, ctx, accounts, choice, param);
      const key = choiceKey(stored);
      if (seen.has(key)) throw new ApiError('parameter_invalid', { param: `${param}.name`, message: `${param}.name: ${choice.name ?? key} is listed twice in one rule.` });
      seen.add(key);
      connectors.push(stored);
    }
    const cascade = rule.cascade === undefined ? {} : { cascade: checkedCascade(rule.cascade as CascadeRule, rule.connectors.length, limit, `rules.${r}.cascade`) };
    rules.push({ ...rule, payment_method_types: rule.payment_method_types as StoredRule['payment_method_types'], strategy: rule.strategy as RoutingStrategy | undefined, connectors, ...cascade } as StoredRule);
  }
  return rules;
}

/**
 * A rule's cascade, checked: never on a decline that no retry can turn (API.md §7), and its calls
 * within the route-length limit — each connector is called at most once, and a retry of
 * `authentication_required` with 3-D Secure calls one of them once more (cascade.ts).
 */
function checkedCascade(cascade: CascadeRule, connectors: number, limit: number, param: string): CascadeRule {
  const never = cascade.on.filter((type) => NEVER_CASCADED.includes(type));
  if (never.length) {
    throw new ApiError('parameter_invalid', {
      param: `${param}.on`,
      message: `${param}.on: ${never.join(' and ')} declines are never sent elsewhere (the issuer will not approve, or only new card data can succeed); list among ${CASCADABLE.join(', ')}.`,
    });
  }
  const calls = connectors + (cascade.on.includes('authentication_required') ? 1 : 0);
  if (calls > limit) {
    throw new ApiError('parameter_invalid', {
      param: `${param}.on`,
      message: `${param}.on: with authentication_required retried, a payment of this rule could call ${calls} connectors, and a request's calls may be at most ${limit} so that they fit within IDEMPOTENCY_LOCK_TIMEOUT_S (CONNECTOR_TIMEOUT_MS each); list fewer connectors or leave authentication_required out.`,
    });
  }
  return { on: [...cascade.on], max_attempts: cascade.max_attempts };
}

export async function putRouting(db: Db, rt: Runtime, ctx: RequestContext, body: PutRoutingBody, now = rt.now()): Promise<RoutingView> {
  try {
    await db.transaction(async (tx) => {
      const rules = await storedRules(rt, ctx, tx, body);
      await tx
        .insert(routingConfigs)
        .values({ accountId: ctx.accountId, livemode: ctx.livemode, rules, version: 1, createdAt: now, updatedAt: now })
        .onConflictDoUpdate({
          target: [routingConfigs.accountId, routingConfigs.livemode],
          set: { rules, version: sql`${routingConfigs.version} + 1`, updatedAt: now },
        });
    });
  } catch (err) {
    if (!(err instanceof MissingAccount)) throw err;
    // Outside the transaction: the 404 says whether the id is this account's in the other mode.
    const missing = await notFound(db, ctx, connectorAccounts, parseId('ca', err.id), 'connector account', err.id);
    throw new ApiError('resource_missing', { param: err.param, message: missing.message });
  }
  forgetRouting(rt, ctx);
  return retrieveRouting(db, rt, ctx);
}
