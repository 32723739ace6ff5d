// Each account's routing rules per mode. Without a stored configuration a mode uses its default:
// in test mode one rule sending everything to the simulated processors in order (simulator_a,
// then simulator_b), so that fallback works out of the box; in live mode none (no live connector
// is configured yet). Reads go through a per-process cache whose staleness is bounded by
// ROUTING_CACHE_TTL_MS; a PUT clears this process's entry at once.
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { routingConfigs } from '../../storage/schema.js';
import { ApiError } from '../../kernel/errors.js';
import type { RequestContext } from '../../kernel/context.js';
import type { RoutingRule } from '../../connectors/router.js';
import type { Runtime } from '../../runtime.js';
import type { PutRoutingBody, RoutingView } from './schema.js';

const cacheKey = (ctx: RequestContext) => `${ctx.accountId}:${ctx.livemode}`;

export function usableConnectors(rt: Runtime, livemode: boolean): string[] {
  const mode = livemode ? 'live' : 'test';
  return rt.connectors.registry.names().filter((name) => rt.connectors.registry.get(name)!.modes.includes(mode));
}

export function defaultRules(rt: Runtime, livemode: boolean): RoutingRule[] {
  const names = usableConnectors(rt, livemode);
  return names.length ? [{ name: 'default', connectors: names.map((name) => ({ name })) }] : [];
}

async function load(db: Db, rt: Runtime, ctx: RequestContext) {
  const key = cacheKey(ctx);
  const hit = rt.routingCache.get(key);
  const nowMs = Date.now();
  if (hit && nowMs - hit.fetchedAtMs < rt.config.routingCacheTtlMs) return hit;
  const [row] = await db
    .select()
    .from(routingConfigs)
    .where(and(eq(routingConfigs.accountId, ctx.accountId), eq(routingConfigs.livemode, ctx.livemode)));
  const entry = {
    rules: row ? (row.rules as RoutingRule[]) : undefined,
    version: row?.version ?? 0,
    updatedAt: row?.updatedAt ?? null,
    fetchedAtMs: nowMs,
  };
  if (rt.config.routingCacheTtlMs > 0) {
    if (rt.routingCache.size >= 10_000) rt.routingCache.clear();
    rt.routingCache.set(key, entry);
  }
  return entry;
}

/** The rules that route this account's payments in this mode. */
export async function routingRules(db: Db, rt: Runtime, ctx: RequestContext): Promise<RoutingRule[]> {
  return (await load(db, rt, ctx)).rules ?? defaultRules(rt, ctx.livemode);
}

function view(rt: Runtime, ctx: RequestContext, entry: Awaited<ReturnType<typeof load>>): RoutingView {
  return {
    object: 'routing',
    livemode: ctx.livemode,
    rules: entry.rules ?? defaultRules(rt, ctx.livemode),
    is_default: entry.rules === undefined,
    connectors: usableConnectors(rt, ctx.livemode).map((name) => ({ name, circuit: rt.connectors.breaker.state(name) })),
    version: entry.version,
    updated_at: entry.updatedAt?.toISOString() ?? null,
  };
}

export async function retrieveRouting(db: Db, rt: Runtime, ctx: RequestContext): Promise<RoutingView> {
  return view(rt, ctx, await load(db, rt, ctx));
}

function validateRules(rt: Runtime, ctx: RequestContext, rules: RoutingRule[]): void {
  const usable = new Set(usableConnectors(rt, ctx.livemode));
  const known = new Set(rt.connectors.registry.names());
  rules.forEach((rule, r) => {
    if (rule.amount_min !== undefined && rule.amount_max !== undefined && rule.amount_min > rule.amount_max) {
      throw new ApiError('parameter_invalid', { param: `rules.${r}.amount_min`, message: `rules.${r}.amount_min must not be above amount_max.` });
    }
    const seen = new Set<string>();
    rule.connectors.forEach((choice, c) => {
      const param = `rules.${r}.connectors.${c}.name`;
      if (!usable.has(choice.name)) {
        const why = known.has(choice.name)
          ? `${choice.name} cannot take ${ctx.livemode ? 'live' : 'test'}-mode payments`
          : `there is no connector ${choice.name}`;
        throw new ApiError('parameter_invalid', { param, message: `${param}: ${why}; available: ${[...usable].join(', ') || 'none'}.` });
      }
      if (seen.has(choice.name)) throw new ApiError('parameter_invalid', { param, message: `${param}: ${choice.name} is listed twice in one rule.` });
      seen.add(choice.name);
    });
  });
}

export async function putRouting(db: Db, rt: Runtime, ctx: RequestContext, body: PutRoutingBody, now = rt.now()): Promise<RoutingView> {
  const rules = body.rules as RoutingRule[];
  validateRules(rt, ctx, rules);
  const [row] = await db
    .insert(routingConfigs)
    .values({ accountId: ctx.accountId, livemode: ctx.livemode, rules, version: 1, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({
      target: [routingConfigs.accountId, routingConfigs.livemode],
      set: { rules, version: sql`${routingConfigs.version} + 1`, updatedAt: now },
    })
    .returning();
  rt.routingCache.delete(cacheKey(ctx));
  return view(rt, ctx, { rules: row!.rules as RoutingRule[], version: row!.version, updatedAt: row!.updatedAt, fetchedAtMs: Date.now() });
}
