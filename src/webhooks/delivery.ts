// At-least-once webhook delivery, in three short transactions per batch and never one held across
// an HTTP call:
//
//   1. dispatch  — claim undispatched events (FOR UPDATE SKIP LOCKED), create one delivery per
//                  enabled endpoint subscribed to the type, mark the events dispatched: one statement.
//   2. claim     — take due deliveries (SKIP LOCKED) and lease them: next_attempt_at moves to the
//                  end of the lease and a fencing token (lease_id) is stored. One statement.
//   3. send      — outside any transaction, signed per Standard Webhooks, with a deadline.
//   4. record    — the attempts, each delivery's new state (succeeded, failed, or pending with its
//                  next retry) only if the lease is still ours, and endpoint health (410 Gone and
//                  failing for days disable the endpoint, with an event). One transaction.
//
// A worker killed between 2 and 4 loses nothing: its lease runs out and the delivery is due again,
// without having used up one of its retries (only recorded attempts count). Any number of workers
// share the queue through SKIP LOCKED; a worker whose lease was taken over cannot record over the
// newer holder.
import crypto from 'node:crypto';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Executor } from '../storage/db.js';
import { webhookEndpoints, type events } from '../storage/schema.js';
import type { WebhookConfig } from '../config.js';
import type { Encryptor } from '../lib/encryption.js';
import { newId, toPublicId } from '../kernel/ids.js';
import { eventView, systemContext } from '../domain/events/service.js';
import { isGuarded } from '../domain/webhooks/destinations.js';
import { setEndpointStatus, signingSecrets } from '../domain/webhooks/service.js';
import { signedHeaders } from './signing.js';
import { nextRetryDelayMs, type RetryPolicy } from './retry.js';
import type { Sender, SendResult } from './sender.js';

export interface DeliveryDeps {
  db: Db;
  config: WebhookConfig;
  encryptor: Encryptor;
  sender: Sender;
  log: Pick<FastifyBaseLogger, 'info' | 'error'>;
  now: () => Date;
  random: () => number;
}

type Row = Record<string, unknown>;
const rowsOf = (result: unknown): Row[] => (result as { rows: Row[] }).rows;
const asDate = (value: unknown): Date | null => (value === null || value === undefined ? null : value instanceof Date ? value : new Date(String(value)));

// --- 1. dispatch ---------------------------------------------------------------------------------

/**
 * Fans a batch of committed events out to the endpoints subscribed at that moment (an endpoint
 * created after the event does not receive it). Events of accounts without endpoints are only
 * marked dispatched.
 */
export async function dispatchEvents(db: Db, now: Date, batch: number): Promise<{ events: number; deliveries: number }> {
  const at = now.toISOString();
  const [row] = rowsOf(
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
        RETURNING e.account_id, e.id, e.livemode, e.type, e.created_at
      ), fanned AS (
        INSERT INTO webhook_deliveries
          (account_id, id, livemode, event_id, endpoint_id, "trigger", status, attempts, next_attempt_at, created_at, updated_at)
        SELECT m.account_id, gen_random_uuid(), m.livemode, m.id, w.id, 'event', 'pending', 0,
               ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
        FROM marked m
        JOIN webhook_endpoints w
          ON w.account_id = m.account_id AND w.livemode = m.livemode
         AND w.status = 'enabled' AND w.deleted_at IS NULL AND w.created_at <= m.created_at
         AND EXISTS (SELECT 1 FROM unnest(w.enabled_events) AS pattern
                     WHERE m.type LIKE replace(replace(pattern, '_', '\\_'), '*', '%'))
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM marked)::int AS events, (SELECT count(*) FROM fanned)::int AS deliveries`),
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
  event: typeof events.$inferSelect | null;
  endpoint: {
    url: string;
    enabled: boolean;
    secretEncrypted: string;
    previousSecretEncrypted: string | null;
    previousSecretExpiresAt: Date | null;
  } | null;
}

export async function claimDeliveries(db: Db, now: Date, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
  const leaseId = crypto.randomUUID();
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
        SET next_attempt_at = ${new Date(now.getTime() + leaseMs).toISOString()}::timestamptz,
            lease_id = ${leaseId}::uuid, updated_at = ${now.toISOString()}::timestamptz
        FROM due
        WHERE d.account_id = due.account_id AND d.id = due.id
        RETURNING d.account_id, d.id, d.livemode, d.event_id, d.endpoint_id, d."trigger", d.attempts
      )
      SELECT l.account_id, l.id, l.livemode, l.event_id, l.endpoint_id, l."trigger", l.attempts,
             e.id AS e_id, e.type AS e_type, e.object_id AS e_object_id, e.data AS e_data, e.request_id AS e_request_id,
             e.idempotency_key AS e_idempotency_key, e.created_at AS e_created_at,
             w.id AS w_id, w.url AS w_url, (w.status = 'enabled' AND w.deleted_at IS NULL) AS w_enabled,
             w.secret_encrypted AS w_secret, w.previous_secret_encrypted AS w_previous_secret,
             w.previous_secret_expires_at AS w_previous_expires_at
      FROM leased l
      LEFT JOIN events e ON e.account_id = l.account_id AND e.id = l.event_id
      LEFT JOIN webhook_endpoints w ON w.account_id = l.account_id AND w.id = l.endpoint_id`),
  );
  return rows.map((r) => ({
    accountId: String(r.account_id),
    id: String(r.id),
    livemode: Boolean(r.livemode),
    eventId: String(r.event_id),
    endpointId: String(r.endpoint_id),
    trigger: r.trigger as 'event' | 'redeliver',
    attempts: Number(r.attempts),
    leaseId,
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
  }));
}

// --- 3. send -------------------------------------------------------------------------------------

export type Completed =
  | { kind: 'cancel'; claimed: ClaimedDelivery }
  | { kind: 'attempt'; claimed: ClaimedDelivery; url: string; result: SendResult; startedAt: Date; finishedAt: Date };

/** The request body: the event exactly as GET /v1/events/{id} returns it. */
export function deliveryBody(event: typeof events.$inferSelect): string {
  return JSON.stringify(eventView(event));
}

export async function attemptDelivery(deps: Pick<DeliveryDeps, 'config' | 'encryptor' | 'sender' | 'now'>, claimed: ClaimedDelivery): Promise<Completed> {
  const { event, endpoint } = claimed;
  // A disabled or deleted endpoint receives nothing more; its pending deliveries end here.
  if (!event || !endpoint || !endpoint.enabled) return { kind: 'cancel', claimed };
  const startedAt = deps.now();
  let result: SendResult;
  try {
    const secrets = signingSecrets(deps.encryptor, { accountId: claimed.accountId, id: claimed.endpointId, ...endpoint }, startedAt);
    const body = deliveryBody(event);
    result = await deps.sender.send({
      url: endpoint.url,
      headers: { ...signedHeaders(secrets, toPublicId('evt', event.id), Math.floor(startedAt.getTime() / 1000), body) },
      body,
      timeoutMs: deps.config.timeoutMs,
      guarded: isGuarded(claimed.livemode, deps.config),
    });
  } catch (err) {
    // Our side failed (e.g. the secret's encryption key is not configured): nothing was sent.
    result = { statusCode: null, retryAfterS: null, durationMs: 0, errorCode: 'signing_failed', errorMessage: (err as Error).message };
  }
  return { kind: 'attempt', claimed, url: endpoint.url, result, startedAt, finishedAt: deps.now() };
}

// --- 4. record -----------------------------------------------------------------------------------

const isSuccess = (status: number | null) => status !== null && status >= 200 && status < 300;

interface Decision {
  status: 'pending' | 'succeeded' | 'failed' | 'cancelled';
  nextAttemptAt: Date | null;
}

function decide(config: WebhookConfig, random: () => number, done: Completed): Decision {
  if (done.kind === 'cancel') return { status: 'cancelled', nextAttemptAt: null };
  const { statusCode, retryAfterS } = done.result;
  if (isSuccess(statusCode)) return { status: 'succeeded', nextAttemptAt: null };
  if (statusCode === 410) return { status: 'failed', nextAttemptAt: null };
  const policy: RetryPolicy = {
    scheduleS: done.claimed.livemode ? config.retryScheduleS.live : config.retryScheduleS.test,
    jitterRatio: config.retryJitterRatio,
    random,
  };
  const honoured = statusCode === 429 || statusCode === 503 ? retryAfterS : null;
  const delayMs = nextRetryDelayMs(policy, done.claimed.attempts + 1, honoured);
  if (delayMs === null) return { status: 'failed', nextAttemptAt: null };
  return { status: 'pending', nextAttemptAt: new Date(done.finishedAt.getTime() + delayMs) };
}

async function lockEnabledEndpoint(tx: Executor, accountId: string, endpointId: string) {
  const [row] = await tx
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.accountId, accountId), eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.status, 'enabled'), isNull(webhookEndpoints.deletedAt)))
    .for('update');
  return row;
}

export async function recordOutcomes(deps: Pick<DeliveryDeps, 'db' | 'config' | 'now' | 'random'>, batch: Completed[]): Promise<void> {
  if (batch.length === 0) return;
  const now = deps.now();
  const decided = batch.map((done) => ({ done, decision: decide(deps.config, deps.random, done) }));
  const attempts = decided.filter((d): d is typeof d & { done: Extract<Completed, { kind: 'attempt' }> } => d.done.kind === 'attempt');

  // The last outcome per endpoint in this batch decides its health.
  const health = new Map<string, { accountId: string; endpointId: string; livemode: boolean; ok: boolean; gone: boolean; at: Date }>();
  for (const { done } of attempts) {
    const key = `${done.claimed.accountId}/${done.claimed.endpointId}`;
    const previous = health.get(key);
    if (previous && previous.at > done.finishedAt) continue;
    health.set(key, {
      accountId: done.claimed.accountId,
      endpointId: done.claimed.endpointId,
      livemode: done.claimed.livemode,
      ok: isSuccess(done.result.statusCode),
      gone: done.result.statusCode === 410 || (previous?.gone ?? false),
      at: done.finishedAt,
    });
  }

  // One statement records the whole batch: the attempts, each delivery's new state — only while
  // the lease is still ours, so a worker that stalled past its lease records its attempt (it
  // happened) without overwriting what the newer holder decided — and, for endpoints that
  // answered 2xx, the end of their run of failures. Arrays keep the statement the same size
  // whatever the batch size.
  const param = <T>(values: T[]) => sql.param(values);
  const healthy = [...health.values()].filter((h) => h.ok && !h.gone);
  const failureMessage = (status: number | null) => `The endpoint answered ${status}${status === 410 ? ' Gone: it is disabled' : ''}.`;
  const recordBatch = sql`
    WITH inserted AS (
      INSERT INTO webhook_attempts (account_id, id, livemode, delivery_id, event_id, event_type, endpoint_id, "trigger",
                                    attempt_number, url, outcome, response_status, error_code, error_message, duration_ms,
                                    next_retry_at, created_at)
      SELECT * FROM unnest(
        ${param(attempts.map((a) => a.done.claimed.accountId))}::uuid[],
        ${param(attempts.map(() => newId('wda').uuid))}::uuid[],
        ${param(attempts.map((a) => a.done.claimed.livemode))}::boolean[],
        ${param(attempts.map((a) => a.done.claimed.id))}::uuid[],
        ${param(attempts.map((a) => a.done.claimed.eventId))}::uuid[],
        ${param(attempts.map((a) => a.done.claimed.event!.type))}::text[],
        ${param(attempts.map((a) => a.done.claimed.endpointId))}::uuid[],
        ${param(attempts.map((a) => a.done.claimed.trigger))}::text[],
        ${param(attempts.map((a) => a.done.claimed.attempts + 1))}::int[],
        ${param(attempts.map((a) => a.done.url))}::text[],
        ${param(attempts.map((a) => (isSuccess(a.done.result.statusCode) ? 'succeeded' : 'failed')))}::text[],
        ${param(attempts.map((a) => a.done.result.statusCode))}::int[],
        ${param(attempts.map((a) => a.done.result.errorCode ?? (isSuccess(a.done.result.statusCode) ? null : 'http_status')))}::text[],
        ${param(attempts.map((a) => a.done.result.errorMessage ?? (isSuccess(a.done.result.statusCode) ? null : failureMessage(a.done.result.statusCode))))}::text[],
        ${param(attempts.map((a) => a.done.result.durationMs))}::int[],
        ${param(attempts.map((a) => a.decision.nextAttemptAt?.toISOString() ?? null))}::timestamptz[],
        ${param(attempts.map((a) => a.done.startedAt.toISOString()))}::timestamptz[])
      RETURNING 1
    ), cleared AS (
      UPDATE webhook_endpoints w SET failing_since = NULL
      FROM unnest(${param(healthy.map((h) => h.accountId))}::uuid[], ${param(healthy.map((h) => h.endpointId))}::uuid[]) AS h(account_id, id)
      WHERE w.account_id = h.account_id AND w.id = h.id AND w.failing_since IS NOT NULL
      RETURNING 1
    )
    UPDATE webhook_deliveries d
    SET status = v.status, attempts = d.attempts + v.counted, next_attempt_at = v.next_at, lease_id = NULL,
        updated_at = ${now.toISOString()}::timestamptz
    FROM unnest(
      ${param(decided.map((d) => d.done.claimed.accountId))}::uuid[],
      ${param(decided.map((d) => d.done.claimed.id))}::uuid[],
      ${param(decided.map((d) => d.done.claimed.leaseId))}::uuid[],
      ${param(decided.map((d) => d.decision.status))}::text[],
      ${param(decided.map((d) => (d.done.kind === 'attempt' ? 1 : 0)))}::int[],
      ${param(decided.map((d) => (d.decision.nextAttemptAt ?? now).toISOString()))}::timestamptz[]
    ) AS v(account_id, id, lease_id, status, counted, next_at)
    WHERE d.account_id = v.account_id AND d.id = v.id AND d.lease_id = v.lease_id AND d.status = 'pending'`;

  // Failures may disable an endpoint (410 Gone, failing for days): that needs the endpoint's
  // lock and its event in the same transaction. The common case is one statement on its own.
  const unhealthy = [...health.values()].filter((h) => h.gone || !h.ok);
  if (unhealthy.length === 0) {
    await deps.db.execute(recordBatch);
    return;
  }
  await deps.db.transaction(async (tx) => {
    await tx.execute(recordBatch);
    for (const h of unhealthy) {
      const where = and(eq(webhookEndpoints.accountId, h.accountId), eq(webhookEndpoints.id, h.endpointId));
      if (h.gone) {
        const row = await lockEnabledEndpoint(tx, h.accountId, h.endpointId);
        if (row) await setEndpointStatus(tx, systemContext(h.accountId, h.livemode), row, 'disabled', 'gone', now);
        continue;
      }
      await tx.update(webhookEndpoints).set({ failingSince: h.at }).where(and(where, isNull(webhookEndpoints.failingSince)));
      const threshold = new Date(now.getTime() - deps.config.disableAfterFailingS * 1000);
      const [failing] = await tx
        .select({ id: webhookEndpoints.id })
        .from(webhookEndpoints)
        .where(and(where, eq(webhookEndpoints.status, 'enabled'), sql`${webhookEndpoints.failingSince} <= ${threshold.toISOString()}::timestamptz`));
      if (failing) {
        const row = await lockEnabledEndpoint(tx, h.accountId, h.endpointId);
        if (row) await setEndpointStatus(tx, systemContext(h.accountId, h.livemode), row, 'disabled', 'failing', now);
      }
    }
  });
}

// --- the loops -----------------------------------------------------------------------------------

/**
 * One complete pass, for the periodic worker and for tests with an injected clock: dispatches
 * every pending event, then sends every due delivery (and retries that fall due at once) until
 * nothing is due at `now`.
 */
export async function runDeliveryPass(deps: DeliveryDeps): Promise<{ dispatchedEvents: number; attempts: number }> {
  let dispatchedEvents = 0;
  let attempts = 0;
  for (let round = 0; round < 10_000; round++) {
    for (;;) {
      const d = await dispatchEvents(deps.db, deps.now(), deps.config.batchSize);
      dispatchedEvents += d.events;
      if (d.events < deps.config.batchSize) break;
    }
    const claimed = await claimDeliveries(deps.db, deps.now(), deps.config.leaseMs, deps.config.batchSize);
    if (claimed.length === 0) break;
    const done = await Promise.all(claimed.map((c) => attemptDelivery(deps, c)));
    await recordOutcomes(deps, done);
    attempts += done.filter((d) => d.kind === 'attempt').length;
  }
  return { dispatchedEvents, attempts };
}

export interface DeliveryEngine {
  /** Stops claiming, lets the attempts in flight finish and records them. */
  stop(): Promise<void>;
}

/** A promise-based wake-up: sleep(ms) resolves after ms or as soon as wake() is called. */
function alarm() {
  let wakeUp: (() => void) | undefined;
  let pending = false;
  return {
    wake() {
      pending = true;
      const resolve = wakeUp;
      wakeUp = undefined;
      resolve?.();
    },
    sleep(ms: number) {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          wakeUp = undefined;
          resolve();
        }, ms);
        wakeUp = () => {
          clearTimeout(timer);
          pending = false;
          resolve();
        };
      });
    },
  };
}

/**
 * The continuous delivery of a worker process: three loops on their own connections, so that no
 * one's round trips wait for another's —
 *   dispatcher  fans committed events out into deliveries, then wakes the claimer;
 *   claimer     keeps up to `concurrency` attempts in flight;
 *   recorder    records completed attempts in batches as they arrive.
 * When idle, the dispatcher and claimer look again every pollIntervalMs (a cheap index probe),
 * which bounds the latency from commit to first attempt without the commit-serialising cost of
 * NOTIFY in every event-writing transaction.
 */
export function startDeliveryEngine(deps: DeliveryDeps): DeliveryEngine {
  const { config, log } = deps;
  let stopped = false;
  let inFlight = 0;
  const completed: Completed[] = [];
  const dispatcherAlarm = alarm();
  const claimerAlarm = alarm();
  const recorderAlarm = alarm();

  const launch = (claimed: ClaimedDelivery) => {
    inFlight++;
    attemptDelivery(deps, claimed)
      .then((done) => completed.push(done))
      .catch((err) => log.error({ err }, 'webhook attempt failed unexpectedly; its lease will expire and it will be retried'))
      .finally(() => {
        inFlight--;
        recorderAlarm.wake();
        claimerAlarm.wake();
      });
  };

  /** Runs `step` until stopped; `step` answers whether to go again at once. */
  const forever = async (name: string, step: () => Promise<boolean>, idle: ReturnType<typeof alarm>, until: () => boolean) => {
    let failures = 0;
    while (!until()) {
      try {
        const again = await step();
        failures = 0;
        if (!again) await idle.sleep(stopped ? 100 : config.pollIntervalMs);
      } catch (err) {
        failures++;
        log.error({ err }, `webhook ${name} failed; retrying`);
        // Unrecorded outcomes are not worth waiting for forever at shutdown: their leases expire.
        if (stopped && failures >= 3) break;
        await idle.sleep(Math.min(1000 * failures, 10_000));
      }
    }
  };

  const dispatcher = forever(
    'dispatch',
    async () => {
      const dispatched = await dispatchEvents(deps.db, deps.now(), config.batchSize);
      if (dispatched.deliveries > 0) claimerAlarm.wake();
      return dispatched.events === config.batchSize;
    },
    dispatcherAlarm,
    () => stopped,
  );

  const claimer = forever(
    'claim',
    async () => {
      const room = Math.min(config.batchSize, config.concurrency - inFlight);
      if (room <= 0) {
        await claimerAlarm.sleep(config.pollIntervalMs);
        return true;
      }
      const claimed = await claimDeliveries(deps.db, deps.now(), config.leaseMs, room);
      for (const c of claimed) launch(c);
      return claimed.length === room;
    },
    claimerAlarm,
    () => stopped,
  );

  const recorder = forever(
    'record',
    async () => {
      if (completed.length === 0) {
        await recorderAlarm.sleep(stopped ? 100 : 1000);
        return true;
      }
      const batch = completed.splice(0, completed.length);
      try {
        await recordOutcomes(deps, batch);
      } catch (err) {
        completed.unshift(...batch);
        throw err;
      }
      return true;
    },
    recorderAlarm,
    () => stopped && inFlight === 0 && completed.length === 0,
  );

  return {
    async stop() {
      stopped = true;
      dispatcherAlarm.wake();
      claimerAlarm.wake();
      recorderAlarm.wake();
      await Promise.all([dispatcher, claimer]);
      await recorder;
    },
  };
}
