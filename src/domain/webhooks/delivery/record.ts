// Step 4 of webhook delivery (engine.ts): a batch of attempts, their deliveries'
// next state and the endpoints' health, written together.
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../../storage/db.js';
import { webhookEndpoints } from '../../../storage/schema.js';
import type { WebhookConfig } from '../../../config.js';
import { systemContext } from '../../../events/service.js';
import { setEndpointStatus } from '../service.js';
import type { Completed } from './attempt.js';
import { nextRetryDelayMs, type RetryPolicy } from './retry.js';
import type { Metrics, WebhookResult } from '../../../metrics/registry.js';

export interface RecordDeps {
  db: Db;
  config: WebhookConfig;
  now: () => Date;
  random: () => number;
  metrics?: Pick<Metrics, 'webhookRecorded' | 'webhookLag'>;
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

export async function recordOutcomes(deps: RecordDeps, batch: Completed[]): Promise<void> {
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
  // whatever the batch size. An attempt recorded twice (a retried record) carries the same id and
  // start, so it still meets the partitioned table's key (account_id, id, created_at) and is skipped.
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
        ${param(attempts.map((a) => a.done.attemptId))}::uuid[],
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
      ON CONFLICT DO NOTHING
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
    countRecorded(deps, decided);
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
  countRecorded(deps, decided);
}

const RESULTS: Record<Decision['status'], WebhookResult> = { succeeded: 'succeeded', pending: 'retrying', failed: 'failed', cancelled: 'cancelled' };

/** Once recorded (a batch whose record fails is recorded, and counted, on its retry). */
function countRecorded(deps: RecordDeps, decided: { done: Completed; decision: Decision }[]) {
  if (!deps.metrics) return;
  for (const { done, decision } of decided) {
    deps.metrics.webhookRecorded(RESULTS[decision.status]);
    // Commit to first attempt: the event's first delivery, not a retry or a redelivery.
    if (done.kind === 'attempt' && done.claimed.attempts === 0 && done.claimed.trigger === 'event' && done.claimed.event) {
      deps.metrics.webhookLag((done.startedAt.getTime() - done.claimed.event.createdAt.getTime()) / 1000);
    }
  }
}
