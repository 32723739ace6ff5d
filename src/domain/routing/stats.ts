// The window of recent outcomes that success_rate routing scores (strategy.ts) and that
// GET /v1/routing/stats shows: per connector and segment (card brand, currency, issuing country
// where known), the attempts whose outcome the request learnt and how many were authorised.
//
// The figures are an aggregate over the payments themselves, which every process already writes:
// no write is added to a payment's phases (the hot path), and every process reads the same rows.
// The window is the account and mode's last WINDOW_PAYMENTS payments created within WINDOW_MS, read
// newest first from the id the window starts at, so that one read costs at most WINDOW_PAYMENTS
// rows however long the history (measured on PostgreSQL 15, 300,000 older payments and 20,000 in
// the hour: 34 ms median at the cap, under 1 ms for a quiet account); each process keeps the
// answer for ROUTING_CACHE_TTL_MS (as cache.ts keeps the rules) and refreshes it beside payments.
import type { RequestContext } from '../../kernel/context.js';
import type { Runtime } from '../../runtime.js';
import type { Executor } from '../../storage/db.js';
import { rawQuery, type RawStatement } from '../../storage/raw.js';
import type { SegmentOutcomes } from '../../storage/routing-rules.js';
import type { Outcomes } from './strategy.js';
import type { RoutingStatsView } from './schema.js';

export type { SegmentOutcomes } from '../../storage/routing-rules.js';

/** How far back the window reaches. */
export const WINDOW_MS = 60 * 60 * 1000;
/** The most payments the window holds: at high volume it is shorter than WINDOW_MS. */
export const WINDOW_PAYMENTS = 5000;

/** The attempt outcomes that say how a connector did; `skipped`, `pending` and `requires_action` say nothing yet. */
const COUNTED = ['succeeded', 'declined', 'error', 'timeout'] as const;

const WINDOW_OUTCOMES: RawStatement = {
  name: 'routing_window_outcomes_v1',
  text: `SELECT a->>'connector' AS connector, p.payment_method->'card'->>'brand' AS card_brand, p.currency,
       p.payment_method->'card'->>'issuing_country' AS issuing_country,
       count(*)::int AS attempts, (count(*) FILTER (WHERE a->>'outcome' = 'succeeded'))::int AS authorized
FROM (SELECT payment_method, currency, attempts FROM payments
      WHERE account_id = $1 AND livemode = $2 AND id >= $3 AND created_at >= $4
      ORDER BY id DESC LIMIT $5) p
CROSS JOIN LATERAL jsonb_array_elements(p.attempts) a
WHERE a->>'outcome' IN (${COUNTED.map((o) => `'${o}'`).join(', ')})
GROUP BY 1, 2, 3, 4
ORDER BY 1, 2, 3, 4`,
};

/**
 * The smallest UUIDv7 minted at `ms`: ids carry the wall clock of their minting (src/kernel/ids.ts),
 * so the window's first id bounds the index scan.
 */
export function firstIdAt(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

const cacheKey = (ctx: Pick<RequestContext, 'accountId' | 'livemode'>) => `${ctx.accountId}:${ctx.livemode}`;

const STALE_GRACE_MS = 60_000;

async function readWindow(db: Executor, rt: Runtime, ctx: Pick<RequestContext, 'accountId' | 'livemode'>, key: string): Promise<SegmentOutcomes[]> {
  const nowMs = Date.now();
  const since = rt.now().getTime() - WINDOW_MS;
  // The id bound uses the wall clock the ids were minted on; the window itself is the service's clock.
  const firstId = firstIdAt(Math.min(since, nowMs - WINDOW_MS));
  const rows = await rawQuery<Record<string, unknown>>(db, WINDOW_OUTCOMES, [ctx.accountId, ctx.livemode, firstId, new Date(since).toISOString(), WINDOW_PAYMENTS]);
  const outcomes = rows.map(
    (r): SegmentOutcomes => ({
      connector: r.connector as string,
      card_brand: (r.card_brand as string | null) ?? null,
      currency: r.currency as string,
      issuing_country: (r.issuing_country as string | null) ?? null,
      attempts: Number(r.attempts),
      authorized: Number(r.authorized),
    }),
  );
  if (rt.config.routingCacheTtlMs > 0) {
    if (rt.routingStats.size >= 10_000) rt.routingStats.clear();
    rt.routingStats.set(key, { rows: outcomes, fetchedAtMs: nowMs });
  }
  return outcomes;
}

/**
 * The window's outcomes of the account and mode. Routing reads this process's copy: fresh for
 * ROUTING_CACHE_TTL_MS, then for a minute more still used while one refresh runs beside the
 * payment (a read of up to WINDOW_PAYMENTS rows, tens of milliseconds at the cap, kept off the
 * payment's latency). `fresh`: read now (the stats endpoint).
 */
export async function windowOutcomes(db: Executor, rt: Runtime, ctx: Pick<RequestContext, 'accountId' | 'livemode'>, opts: { fresh?: boolean } = {}): Promise<SegmentOutcomes[]> {
  const key = cacheKey(ctx);
  const hit = rt.routingStats.get(key);
  const ageMs = hit ? Date.now() - hit.fetchedAtMs : Infinity;
  // A copy older than a minute past its TTL (an account quiet for a while) is not routed on: read now.
  if (opts.fresh || !hit || ageMs >= rt.config.routingCacheTtlMs + STALE_GRACE_MS) return readWindow(db, rt, ctx, key);
  if (ageMs >= rt.config.routingCacheTtlMs && !hit.refreshing) {
    // One read at a time however many payments find the copy stale; it replaces the entry when done.
    hit.refreshing = true;
    readWindow(db, rt, ctx, key).catch(() => {
      hit.refreshing = false; // the next payment tries again; routing goes on with the figures it has
    });
  }
  return hit.rows;
}

/** A movement's segment: what success_rate compares connectors within. */
export interface Segment {
  card_brand: string | null;
  currency: string;
  issuing_country: string | null;
}

/** The outcomes per connector of one segment. */
export function segmentOutcomes(rows: readonly SegmentOutcomes[], segment: Segment): Map<string, Outcomes> {
  const of = new Map<string, Outcomes>();
  for (const r of rows) {
    if (r.card_brand !== segment.card_brand || r.currency !== segment.currency || r.issuing_country !== segment.issuing_country) continue;
    of.set(r.connector, { attempts: r.attempts, authorized: r.authorized });
  }
  return of;
}

/** Drops this process's window of the account and mode (tests that record outcomes, then route). */
export function forgetOutcomes(rt: Runtime, ctx: Pick<RequestContext, 'accountId' | 'livemode'>): void {
  rt.routingStats.delete(cacheKey(ctx));
}

/** The window's outcomes when some rule of the routing orders by success rate; undefined (nothing read) otherwise. */
export async function outcomesFor(db: Executor, rt: Runtime, ctx: Pick<RequestContext, 'accountId' | 'livemode'>, routing: { rules: readonly { strategy?: string }[] }): Promise<SegmentOutcomes[] | undefined> {
  return routing.rules.some((r) => r.strategy === 'success_rate') ? windowOutcomes(db, rt, ctx) : undefined;
}

/** GET /v1/routing/stats: the window as read now (this process's routing reads the same from then on). */
export async function routingStatsView(db: Executor, rt: Runtime, ctx: Pick<RequestContext, 'accountId' | 'livemode'>): Promise<RoutingStatsView> {
  const rows = await windowOutcomes(db, rt, ctx, { fresh: true });
  return {
    object: 'routing_stats',
    livemode: ctx.livemode,
    window: { since: new Date(rt.now().getTime() - WINDOW_MS).toISOString(), max_payments: WINDOW_PAYMENTS },
    data: rows.map((r) => ({ ...r, authorization_rate: r.attempts === 0 ? 0 : Math.round((r.authorized / r.attempts) * 10_000) / 10_000 })),
  };
}
