// What became of an event's deliveries: the attempt log of an endpoint or an event, and asking
// for an event to be delivered again.
import { webhookEndpointStates } from './state.js';
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../storage/schema.js';
import { newId, objectHead, toPublicId } from '../../kernel/ids.js';
import { ApiError, invalidState } from '../../kernel/errors.js';
import { respond } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import type { ListParams, Page } from '../../kernel/pagination.js';
import { findOne, listPage, loadOne, ownRows, type Resource } from '../../storage/tenant.js';
import { EVENTS } from '../../events/service.js';
import { WEBHOOK_ENDPOINTS } from './service.js';
import type { ListAttemptsQuery, RedeliverBody, WebhookDeliveryAttemptView } from './schema.js';

type AttemptRow = typeof webhookAttempts.$inferSelect;

const ATTEMPTS: Resource<typeof webhookAttempts> = { table: webhookAttempts, prefix: 'wda', name: 'webhook delivery attempt' };

export function attemptView(row: AttemptRow): WebhookDeliveryAttemptView {
  return {
    ...objectHead('wda', 'webhook_delivery_attempt', row),
    event: toPublicId('evt', row.eventId),
    event_type: row.eventType,
    webhook_endpoint: toPublicId('we', row.endpointId),
    url: row.url,
    trigger: row.trigger,
    attempt: row.attemptNumber,
    outcome: row.outcome,
    response_status: row.responseStatus,
    error: row.errorCode ? { code: row.errorCode, message: row.errorMessage ?? '' } : null,
    duration_ms: row.durationMs,
    next_retry_at: row.nextRetryAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  };
}

function listAttempts(db: Db, ctx: RequestContext, filter: SQL, params: ListParams): Promise<Page<WebhookDeliveryAttemptView>> {
  return listPage(db, ctx, ATTEMPTS, params, [filter], attemptView);
}

export async function listEndpointAttempts(db: Db, ctx: RequestContext, id: string, params: ListAttemptsQuery): Promise<Page<WebhookDeliveryAttemptView>> {
  const endpoint = await loadOne(db, ctx, WEBHOOK_ENDPOINTS, id);
  return listAttempts(db, ctx, eq(webhookAttempts.endpointId, endpoint.id), params);
}

export async function listEventAttempts(db: Db, ctx: RequestContext, id: string, params: ListAttemptsQuery): Promise<Page<WebhookDeliveryAttemptView>> {
  const event = await loadOne(db, ctx, EVENTS, id);
  return listAttempts(db, ctx, eq(webhookAttempts.eventId, event.id), params);
}

/** SQL: does `type` match one of the endpoint's patterns (`*` = any run of characters)? */
function subscribedSql(type: unknown) {
  return sql`EXISTS (SELECT 1 FROM unnest(${webhookEndpoints.enabledEvents}) AS pattern
                     WHERE ${type} LIKE replace(replace(pattern, '_', '\\_'), '*', '%'))`;
}

/**
 * Queues the event again (same webhook-id, so receivers that already have it can ignore it) for
 * one endpoint, or for every enabled endpoint subscribed to its type now.
 */
export async function redeliverEvent(db: Db, ctx: RequestContext, id: string, input: RedeliverBody, now = new Date()): Promise<Outcome> {
  const event = await loadOne(db, ctx, EVENTS, id);
  let endpointUuid: string | undefined;
  if (input.webhook_endpoint !== undefined) {
    const row = await findOne(db, ctx, WEBHOOK_ENDPOINTS, input.webhook_endpoint);
    if (!row) {
      throw new ApiError('resource_missing', { param: 'webhook_endpoint', message: `No such webhook endpoint: '${input.webhook_endpoint}'.` });
    }
    webhookEndpointStates.require(row.status, 'delivering', 'redeliver to');
    endpointUuid = row.id;
  }
  return db.transaction(async (tx) => {
    const targets = await tx
      .select({ id: webhookEndpoints.id })
      .from(webhookEndpoints)
      .where(
        and(
          ownRows(ctx, WEBHOOK_ENDPOINTS),
          eq(webhookEndpoints.status, 'enabled'),
          endpointUuid ? eq(webhookEndpoints.id, endpointUuid) : subscribedSql(event.type),
        ),
      )
      .orderBy(webhookEndpoints.id);
    if (targets.length) {
      await tx.insert(webhookDeliveries).values(
        targets.map((t) => ({
          accountId: ctx.accountId,
          id: newId('wda').uuid,
          livemode: ctx.livemode,
          eventId: event.id,
          endpointId: t.id,
          trigger: 'redeliver' as const,
          status: 'pending' as const,
          nextAttemptAt: now,
          createdAt: now,
          updatedAt: now,
        })),
      );
    }
    return respond(tx, ctx, 202, {
      object: 'event_redelivery',
      event: toPublicId('evt', event.id),
      webhook_endpoints: targets.map((t) => toPublicId('we', t.id)),
    });
  });
}
