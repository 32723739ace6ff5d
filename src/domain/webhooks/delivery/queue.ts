// Steps 1 and 2 of webhook delivery (engine.ts): events become deliveries, and due
// deliveries are leased to one worker. Each is one statement, so no transaction spans a batch.
import crypto from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from '../../../storage/db.js';
import type { events } from '../../../storage/schema.js';

const asDate = (value: unknown): Date | null => (value === null || value === undefined ? null : value instanceof Date ? value : new Date(String(value)));

// --- 1. dispatch ---------------------------------------------------------------------------------

/** Fresh deliveries leased straight to the dispatching worker, which sends them without a claim. */
export interface DispatchLease {
  id: string;
  ms: number;
  /** At most this many, in the events' order; the rest are inserted due, for any worker's claim. */
  limit: number;
}

/**
 * Fans a batch of committed events out to the endpoints subscribed at that moment (an endpoint
 * created after the event does not receive it). Events of accounts without endpoints are only
 * marked dispatched. With `lease`, up to `lease.limit` of the new deliveries come back already
 * leased (as claimDeliveries would return them), sparing each a claim's write and round trip.
 */
export async function dispatchEvents(
  db: Db,
  now: Date,
  batch: number,
  lease?: DispatchLease,
): Promise<{ events: number; deliveries: number; leased: ClaimedDelivery[] }> {
  const at = now.toISOString();
  const until = now.getTime() + (lease?.ms ?? 0);
  const rows = rowsOf(
    await db.execute(sql`
      WITH claimed AS (
        SELECT account_id, id FROM events
        WHERE dispatched_at IS NULL
        ORDER BY created_at
        LIMIT ${batch}
        FOR UPDATE SKIP LOCKED
      ), marked AS (
        UPDATE events e SET dispatched_at = ${at}::timestamptz
        FROM claimed c
        WHERE e.account_id = c.account_id AND e.id = c.id
        RETURNING e.account_id, e.id, e.livemode, e.type, e.object_id, e.data, e.request_id, e.idempotency_key, e.created_at
      ), targets AS (
        SELECT m.account_id, m.livemode, m.id AS event_id, w.id AS endpoint_id,
               row_number() OVER (ORDER BY m.created_at, m.id, w.id) <= ${lease?.limit ?? 0} AS leased
        FROM marked m
        JOIN webhook_endpoints w
          ON w.account_id = m.account_id AND w.livemode = m.livemode
         AND w.status = 'enabled' AND w.deleted_at IS NULL AND w.created_at <= m.created_at
         AND EXISTS (SELECT 1 FROM unnest(w.enabled_events) AS pattern
                     WHERE m.type LIKE replace(replace(pattern, '_', '\\_'), '*', '%'))
      ), fanned AS (
        INSERT INTO webhook_deliveries
          (account_id, id, livemode, event_id, endpoint_id, "trigger", status, attempts, next_attempt_at, lease_id, created_at, updated_at)
        SELECT t.account_id, gen_random_uuid(), t.livemode, t.event_id, t.endpoint_id, 'event', 'pending', 0,
               CASE WHEN t.leased THEN ${new Date(until).toISOString()}::timestamptz ELSE ${at}::timestamptz END,
               CASE WHEN t.leased THEN ${lease?.id ?? null}::uuid END, ${at}::timestamptz, ${at}::timestamptz
        FROM targets t
        RETURNING account_id, id, livemode, event_id, endpoint_id, "trigger", attempts, lease_id
      ), counts AS (
        SELECT (SELECT count(*) FROM marked)::int AS events, (SELECT count(*) FROM fanned)::int AS deliveries
      )
      SELECT c.events, c.deliveries, ${DELIVERY_COLUMNS}
      FROM counts c
      LEFT JOIN (fanned l
        JOIN marked e ON e.account_id = l.account_id AND e.livemode = l.livemode AND e.id = l.event_id
        JOIN webhook_endpoints w ON w.account_id = l.account_id AND w.livemode = l.livemode AND w.id = l.endpoint_id)
        ON l.lease_id IS NOT NULL
      ORDER BY e.created_at`),
  );
  const leased = lease ? rows.filter((r) => r.id !== null && r.id !== undefined).map((r) => toClaimed(r, lease.id, until)) : [];
  return { events: Number(rows[0]?.events ?? 0), deliveries: Number(rows[0]?.deliveries ?? 0), leased };
}

/**
 * What waits in the database (metrics): events not yet fanned out, and deliveries due now (one
 * leased to a worker is not due until its lease runs out). Both read through partial indexes.
 */
export async function webhookBacklog(db: Db, now: Date): Promise<{ events: number; deliveries: number }> {
  const [row] = rowsOf(
    await db.execute(sql`
      SELECT (SELECT count(*) FROM events WHERE dispatched_at IS NULL)::int AS events,
             (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ${now.toISOString()}::timestamptz)::int AS deliveries`),
  );
  return { events: Number(row?.events ?? 0), deliveries: Number(row?.deliveries ?? 0) };
}

// --- 2. claim ------------------------------------------------------------------------------------

export interface ClaimedDelivery {
  accountId: string;
  id: string;
  livemode: boolean;
  eventId: string;
  endpointId: string;
  trigger: 'event' | 'redeliver';
  /** Recorded attempts before this one. */
  attempts: number;
  leaseId: string;
  /** When the lease runs out (epoch ms, by the clock that granted it). */
  leasedUntilMs: number;
  event: typeof events.$inferSelect | null;
  endpoint: {
    url: string;
    enabled: boolean;
    secretEncrypted: string;
    previousSecretEncrypted: string | null;
    previousSecretExpiresAt: Date | null;
  } | null;
}

/** A delivery's row (alias l) with its event (e) and endpoint (w): what attemptDelivery needs. */
const DELIVERY_COLUMNS = sql.raw(`l.account_id, l.id, l.livemode, l.event_id, l.endpoint_id, l."trigger", l.attempts,
  e.id AS e_id, e.type AS e_type, e.object_id AS e_object_id, e.data AS e_data, e.request_id AS e_request_id,
  e.idempotency_key AS e_idempotency_key, e.created_at AS e_created_at,
  w.id AS w_id, w.url AS w_url, (w.status = 'enabled' AND w.deleted_at IS NULL) AS w_enabled,
  w.secret_encrypted AS w_secret, w.previous_secret_encrypted AS w_previous_secret,
  w.previous_secret_expires_at AS w_previous_expires_at`);

function toClaimed(r: Record<string, unknown>, leaseId: string, leasedUntilMs: number): ClaimedDelivery {
  return {
    accountId: String(r.account_id),
    id: String(r.id),
    livemode: Boolean(r.livemode),
    eventId: String(r.event_id),
    endpointId: String(r.endpoint_id),
    trigger: r.trigger as 'event' | 'redeliver',
    attempts: Number(r.attempts),
    leaseId,
    leasedUntilMs,
    event:
      r.e_id === null || r.e_id === undefined
        ? null
        : {
            accountId: String(r.account_id),
            id: String(r.e_id),
            livemode: Boolean(r.livemode),
            type: String(r.e_type),
            objectId: String(r.e_object_id),
            data: (typeof r.e_data === 'string' ? JSON.parse(r.e_data) : r.e_data) as { object: Record<string, unknown> },
            requestId: (r.e_request_id as string | null) ?? null,
            idempotencyKey: (r.e_idempotency_key as string | null) ?? null,
            createdAt: asDate(r.e_created_at)!,
            dispatchedAt: null,
          },
    endpoint:
      r.w_id === null || r.w_id === undefined
        ? null
        : {
            url: String(r.w_url),
            enabled: Boolean(r.w_enabled),
            secretEncrypted: String(r.w_secret),
            previousSecretEncrypted: (r.w_previous_secret as string | null) ?? null,
            previousSecretExpiresAt: asDate(r.w_previous_expires_at),
          },
  };
}

/** `leaseId` is chosen by the caller, so that a claim whose answer was lost can be given back (releaseLostClaims). */
export async function claimDeliveries(db: Db, now: Date, leaseMs: number, limit: number, leaseId: string = crypto.randomUUID()): Promise<ClaimedDelivery[]> {
  const until = now.getTime() + leaseMs;
  const rows = rowsOf(
    await db.execute(sql`
      WITH due AS (
        SELECT account_id, id FROM webhook_deliveries
        WHERE status = 'pending' AND next_attempt_at <= ${now.toISOString()}::timestamptz
        ORDER BY next_attempt_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ), leased AS (
        UPDATE webhook_deliveries d
        SET next_attempt_at = ${new Date(until).toISOString()}::timestamptz,
            lease_id = ${leaseId}::uuid, updated_at = ${now.toISOString()}::timestamptz
        FROM due
        WHERE d.account_id = due.account_id AND d.id = due.id
        RETURNING d.account_id, d.id, d.livemode, d.event_id, d.endpoint_id, d."trigger", d.attempts
      )
      SELECT ${DELIVERY_COLUMNS}
      FROM leased l
      LEFT JOIN events e ON e.account_id = l.account_id AND e.id = l.event_id
      LEFT JOIN webhook_endpoints w ON w.account_id = l.account_id AND w.id = l.endpoint_id`),
  );
  return rows.map((r) => toClaimed(r, leaseId, until));
}

// --- giving leases back ---------------------------------------------------------------------------

async function releaseWhere(db: Db, now: Date, which: SQL): Promise<number> {
  const at = now.toISOString();
  const released = rowsOf(
    await db.execute(sql`
      UPDATE webhook_deliveries SET next_attempt_at = ${at}::timestamptz, lease_id = NULL, updated_at = ${at}::timestamptz
      WHERE status = 'pending' AND ${which}
      RETURNING 1 AS ok`),
  );
  return released.length;
}

/**
 * Gives leases back before they run out (a worker shutting down with attempts still in flight):
 * the deliveries are due again at `now`, for any worker, instead of after the lease. The attempt
 * given up was not recorded, so it does not count against the retries; the receiver may still
 * have got it, which at-least-once delivery allows.
 */
export function releaseLeases(db: Db, now: Date, leased: ClaimedDelivery[]): Promise<number> {
  if (leased.length === 0) return Promise.resolve(0);
  const keys = sql.join(
    leased.map((l) => sql`(${l.accountId}::uuid, ${l.id}::uuid, ${l.leaseId}::uuid)`),
    sql`, `,
  );
  return releaseWhere(db, now, sql`(account_id, id, lease_id) IN (${keys})`);
}

/**
 * Gives back whatever claims with these lease ids took, when their answers were lost (the
 * connection broke after the statement went out, so whether it committed is unknown): nobody is
 * sending those deliveries, and without this they would wait for their leases to run out.
 */
export function releaseLostClaims(db: Db, now: Date, leaseIds: string[]): Promise<number> {
  if (leaseIds.length === 0) return Promise.resolve(0);
  return releaseWhere(db, now, sql`lease_id IN (${sql.join(leaseIds.map((id) => sql`${id}::uuid`), sql`, `)})`);
}
