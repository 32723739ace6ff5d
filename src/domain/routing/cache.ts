// What routing reads of an account and mode — its stored rules and its connector accounts (their
// names, processors and status, never their credentials) — through a per-process cache whose
// staleness is bounded by ROUTING_CACHE_TTL_MS. A change made through this process (PUT /v1/routing,
// a connector account created, changed or deleted) drops its entry at once; other processes see it
// within the bound.
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { RequestContext } from '../../kernel/context.js';
import { toPublicId } from '../../kernel/ids.js';
import type { Runtime } from '../../runtime.js';
import type { Db, Executor } from '../../storage/db.js';
import { connectorAccounts, routingConfigs } from '../../storage/schema.js';
import type { AccountRef, RoutingCacheEntry, StoredRule } from '../../storage/routing-rules.js';

export type { AccountRef, RoutingCacheEntry, StoredChoice, StoredRule } from '../../storage/routing-rules.js';

const cacheKey = (ctx: Pick<RequestContext, 'accountId' | 'livemode'>) => `${ctx.accountId}:${ctx.livemode}`;

/** Drops this process's entry of the account and mode: the next read sees the database. */
export function forgetRouting(rt: Runtime, ctx: Pick<RequestContext, 'accountId' | 'livemode'>): void {
  rt.routingCache.delete(cacheKey(ctx));
}

/** The mode's connector accounts not deleted, oldest first; `lock`: FOR SHARE, in the caller's transaction. */
export async function accountRefs(db: Executor, ctx: Pick<RequestContext, 'accountId' | 'livemode'>, opts: { lock?: boolean } = {}): Promise<AccountRef[]> {
  const query = db
    .select({
      id: connectorAccounts.id,
      name: connectorAccounts.name,
      connector: connectorAccounts.connector,
      status: connectorAccounts.status,
      hints: connectorAccounts.credentialHints,
    })
    .from(connectorAccounts)
    .where(and(eq(connectorAccounts.accountId, ctx.accountId), eq(connectorAccounts.livemode, ctx.livemode), isNull(connectorAccounts.deletedAt)))
    .orderBy(asc(connectorAccounts.id));
  const rows = opts.lock ? await query.for('share') : await query;
  return rows.map(({ hints, ...a }) => ({ ...a, id: toPublicId('ca', a.id), fields: Object.keys(hints) }));
}

export async function loadRoutingEntry(db: Db, rt: Runtime, ctx: RequestContext): Promise<RoutingCacheEntry> {
  const key = cacheKey(ctx);
  const hit = rt.routingCache.get(key);
  const nowMs = Date.now();
  if (hit && nowMs - hit.fetchedAtMs < rt.config.routingCacheTtlMs) return hit;
  const [[row], accounts] = await Promise.all([
    db
      .select()
      .from(routingConfigs)
      .where(and(eq(routingConfigs.accountId, ctx.accountId), eq(routingConfigs.livemode, ctx.livemode))),
    accountRefs(db, ctx),
  ]);
  const entry: RoutingCacheEntry = {
    rules: row ? (row.rules as StoredRule[]) : undefined,
    accounts,
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
