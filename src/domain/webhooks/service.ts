// Webhook endpoints: where an account's events are POSTed, signed with the endpoint's secret. The
// secret is encrypted at rest (it must be read back to sign), returned only when created or
// rotated. Status changes commit with their event, and every request's final transaction holds its
// idempotency record (respond()).
import { and, count, eq, isNull, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { events, webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../storage/schema.js';
import { newId, parseId, toPublicId } from '../../kernel/ids.js';
import type { Encryptor } from '../../lib/encryption.js';
import type { WebhookConfig } from '../../config.js';
import { ApiError, invalidState } from '../../kernel/errors.js';
import { respond } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../events/service.js';
import { notFound } from '../../kernel/lookup.js';
import { planPage, toPage, type Page } from '../../kernel/pagination.js';
import { newWebhookSecret } from '../../webhooks/signing.js';
import { hostOf, isForbiddenHostname } from '../../webhooks/ssrf.js';
import type { Sender } from '../../webhooks/sender.js';
import {
  DEFAULT_GRACE_PERIOD_S,
  type CreateWebhookEndpointBody,
  type ListAttemptsQuery,
  type ListWebhookEndpointsQuery,
  type RedeliverBody,
  type RotateSecretBody,
  type UpdateWebhookEndpointBody,
  type WebhookDeliveryAttemptView,
  type WebhookEndpointView,
} from './schema.js';
import { webhookEndpointStates, type DisabledReason, type WebhookEndpointStatus } from './state.js';

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
type AttemptRow = typeof webhookAttempts.$inferSelect;

/** What the webhook services need besides the database. */
export interface WebhookSettings {
  config: WebhookConfig;
  encryptor: Encryptor;
  /** Used by the test-mode delivery scenarios, which send from the API process. */
  sender: Sender;
}

export const MAX_ENDPOINTS_PER_MODE = 16;

export function webhookEndpointView(row: EndpointRow, now = new Date()): WebhookEndpointView {
  const previousValid = row.previousSecretEncrypted !== null && row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now;
  return {
    id: toPublicId('we', row.id),
    object: 'webhook_endpoint',
    livemode: row.livemode,
    url: row.url,
    description: row.description,
    enabled_events: row.enabledEvents,
    status: row.status,
    disabled_reason: row.disabledReason,
    metadata: row.metadata,
    previous_secret_expires_at: previousValid ? row.previousSecretExpiresAt!.toISOString() : null,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The additional authenticated data binding a sealed secret to its endpoint row. */
export function secretContext(accountId: string, endpointId: string): string {
  return `webhook_endpoint:${accountId}:${endpointId}`;
}

/** The secrets that sign right now, newest first: the current one and, in its grace period, the previous. */
export function signingSecrets(encryptor: Encryptor, row: Pick<EndpointRow, 'accountId' | 'id' | 'secretEncrypted' | 'previousSecretEncrypted' | 'previousSecretExpiresAt'>, now: Date): string[] {
  const context = secretContext(row.accountId, row.id);
  const secrets = [encryptor.decrypt(row.secretEncrypted, context)];
  if (row.previousSecretEncrypted && row.previousSecretExpiresAt && row.previousSecretExpiresAt > now) {
    secrets.push(encryptor.decrypt(row.previousSecretEncrypted, context));
  }
  return secrets;
}

/** Live mode always refuses private destinations; test mode does unless configured to allow them. */
export function isGuarded(livemode: boolean, config: WebhookConfig): boolean {
  return livemode || config.testModePrivateDestinations === 'deny';
}

function checkUrl(raw: string, livemode: boolean, config: WebhookConfig): string {
  const invalid = (message: string) => new ApiError('parameter_invalid', { param: 'url', message });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url must be an absolute http or https URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('url must be an absolute http or https URL.');
  if (livemode && url.protocol !== 'https:') throw invalid('url must use https in live mode.');
  if (url.username || url.password) throw invalid('url must not contain credentials; receivers authenticate requests by their signature.');
  if (url.hash) throw invalid('url must not contain a fragment.');
  if (isGuarded(livemode, config) && isForbiddenHostname(hostOf(url))) {
    throw invalid(`url must not point at a private, loopback or link-local address${livemode ? ' in live mode' : ''}.`);
  }
  return raw;
}

function byId(ctx: RequestContext, uuid: string) {
  return and(
    eq(webhookEndpoints.accountId, ctx.accountId),
    eq(webhookEndpoints.livemode, ctx.livemode),
    eq(webhookEndpoints.id, uuid),
    isNull(webhookEndpoints.deletedAt),
  );
}

async function lockEndpoint(tx: Executor, ctx: RequestContext, uuid: string): Promise<EndpointRow | undefined> {
  const [row] = await tx.select().from(webhookEndpoints).where(byId(ctx, uuid)).for('update');
  return row;
}

function missing(db: Db, ctx: RequestContext, uuid: string | undefined, id: string) {
  return notFound(db, ctx, webhookEndpoints, uuid, 'webhook endpoint', id);
}

export async function createWebhookEndpoint(
  db: Db,
  settings: WebhookSettings,
  ctx: RequestContext,
  input: CreateWebhookEndpointBody,
  now = new Date(),
): Promise<Outcome> {
  const url = checkUrl(input.url, ctx.livemode, settings.config);
  const { uuid } = newId('we');
  const secret = newWebhookSecret();
  return db.transaction(async (tx) => {
    // One account's fan-out is bounded, so one event cannot turn into an unbounded number of requests.
    // Creates of one account and mode queue on a transaction-scoped lock, or two could both count
    // one below the limit and both insert.
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook_endpoints:${ctx.accountId}:${ctx.livemode}`}, 0))`);
    const [existing] = await tx
      .select({ n: count() })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.accountId, ctx.accountId), eq(webhookEndpoints.livemode, ctx.livemode), isNull(webhookEndpoints.deletedAt)));
    if ((existing?.n ?? 0) >= MAX_ENDPOINTS_PER_MODE) {
      throw new ApiError('webhook_endpoint_limit_reached', {
        message: `An account may have at most ${MAX_ENDPOINTS_PER_MODE} webhook endpoints per mode; delete one first.`,
      });
    }
    const [row] = await tx
      .insert(webhookEndpoints)
      .values({
        accountId: ctx.accountId,
        id: uuid,
        livemode: ctx.livemode,
        url,
        description: input.description ?? null,
        enabledEvents: input.enabled_events,
        status: 'enabled',
        metadata: input.metadata ?? {},
        secretEncrypted: settings.encryptor.encrypt(secret, secretContext(ctx.accountId, uuid)),
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return respond(tx, ctx, 201, { ...webhookEndpointView(row!, now), secret }, { seal: settings.encryptor });
  });
}

export async function retrieveWebhookEndpoint(db: Db, ctx: RequestContext, id: string): Promise<WebhookEndpointView> {
  const uuid = parseId('we', id);
  if (uuid) {
    const [row] = await db.select().from(webhookEndpoints).where(byId(ctx, uuid));
    if (row) return webhookEndpointView(row);
  }
  throw await missing(db, ctx, uuid, id);
}

export async function listWebhookEndpoints(db: Db, ctx: RequestContext, params: ListWebhookEndpointsQuery): Promise<Page<WebhookEndpointView>> {
  const plan = planPage('we', webhookEndpoints.id, webhookEndpoints.createdAt, params);
  const rows = await db
    .select()
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.accountId, ctx.accountId),
        eq(webhookEndpoints.livemode, ctx.livemode),
        isNull(webhookEndpoints.deletedAt),
        params.status ? eq(webhookEndpoints.status, params.status as WebhookEndpointStatus) : undefined,
        plan.where,
      ),
    )
    .orderBy(plan.orderBy)
    .limit(plan.fetch);
  const now = new Date();
  return toPage(rows, plan, (row) => webhookEndpointView(row, now));
}

/**
 * Moves a locked endpoint to `to`, with its event (`webhook_endpoint.disabled|enabled`). Used by
 * the API and by the delivery worker (410 Gone, failing for days).
 */
export async function setEndpointStatus(
  tx: Executor,
  ctx: RequestContext,
  row: EndpointRow,
  to: WebhookEndpointStatus,
  reason: DisabledReason | null,
  now: Date,
  changes: Partial<EndpointRow> = {},
): Promise<EndpointRow> {
  webhookEndpointStates.assert(row.status, to, to === 'enabled' ? 'enable' : 'disable');
  const [updated] = await tx
    .update(webhookEndpoints)
    .set({
      ...changes,
      status: to,
      disabledReason: to === 'disabled' ? reason : null,
      // A re-enabled endpoint starts a fresh failure count.
      ...(to === 'enabled' ? { failingSince: null } : {}),
      version: sql`${webhookEndpoints.version} + 1`,
      updatedAt: now,
    })
    .where(and(eq(webhookEndpoints.accountId, row.accountId), eq(webhookEndpoints.id, row.id)))
    .returning();
  await recordEvent(tx, ctx, `webhook_endpoint.${to}`, webhookEndpointView(updated!, now), now);
  return updated!;
}

export async function updateWebhookEndpoint(
  db: Db,
  settings: WebhookSettings,
  ctx: RequestContext,
  id: string,
  input: UpdateWebhookEndpointBody,
  now = new Date(),
): Promise<Outcome> {
  const uuid = parseId('we', id);
  const url = input.url === undefined ? undefined : checkUrl(input.url, ctx.livemode, settings.config);
  const outcome = uuid
    ? await db.transaction(async (tx) => {
        const row = await lockEndpoint(tx, ctx, uuid);
        if (!row) return undefined;
        const changes: Partial<EndpointRow> = {};
        if (url !== undefined) changes.url = url;
        if (input.enabled_events !== undefined) changes.enabledEvents = input.enabled_events;
        if (input.description !== undefined) changes.description = input.description;
        if (input.metadata !== undefined) changes.metadata = input.metadata;
        let updated: EndpointRow;
        if (input.status !== undefined && input.status !== row.status) {
          updated = await setEndpointStatus(tx, ctx, row, input.status as WebhookEndpointStatus, 'requested', now, changes);
        } else if (Object.keys(changes).length > 0) {
          [updated] = (await tx
            .update(webhookEndpoints)
            .set({ ...changes, version: sql`${webhookEndpoints.version} + 1`, updatedAt: now })
            .where(and(eq(webhookEndpoints.accountId, row.accountId), eq(webhookEndpoints.id, row.id)))
            .returning()) as [EndpointRow];
        } else {
          updated = row;
        }
        return respond(tx, ctx, 200, webhookEndpointView(updated, now));
      })
    : undefined;
  if (outcome) return outcome;
  throw await missing(db, ctx, uuid, id);
}

/** Deleted endpoints stop receiving at once (pending deliveries are dropped when due) and answer 404. */
export async function deleteWebhookEndpoint(db: Db, ctx: RequestContext, id: string, now = new Date()): Promise<Outcome> {
  const uuid = parseId('we', id);
  const outcome = uuid
    ? await db.transaction(async (tx) => {
        const row = await lockEndpoint(tx, ctx, uuid);
        if (!row) return undefined;
        await tx
          .update(webhookEndpoints)
          .set({ deletedAt: now, updatedAt: now, version: sql`${webhookEndpoints.version} + 1` })
          .where(and(eq(webhookEndpoints.accountId, row.accountId), eq(webhookEndpoints.id, row.id)));
        return respond(tx, ctx, 200, { id: toPublicId('we', row.id), object: 'webhook_endpoint', deleted: true });
      })
    : undefined;
  if (outcome) return outcome;
  throw await missing(db, ctx, uuid, id);
}

/**
 * A new secret signs from now on; the previous one keeps signing beside it for the grace period
 * (both signatures in webhook-signature), so receivers can switch without missing a request. A
 * secret still in its grace period from an earlier rotation stops at once.
 */
export async function rotateWebhookSecret(
  db: Db,
  settings: WebhookSettings,
  ctx: RequestContext,
  id: string,
  input: RotateSecretBody,
  now = new Date(),
): Promise<Outcome> {
  const uuid = parseId('we', id);
  const graceS = input.grace_period_seconds ?? DEFAULT_GRACE_PERIOD_S;
  const secret = newWebhookSecret();
  const outcome = uuid
    ? await db.transaction(async (tx) => {
        const row = await lockEndpoint(tx, ctx, uuid);
        if (!row) return undefined;
        const [updated] = await tx
          .update(webhookEndpoints)
          .set({
            secretEncrypted: settings.encryptor.encrypt(secret, secretContext(row.accountId, row.id)),
            previousSecretEncrypted: graceS > 0 ? row.secretEncrypted : null,
            previousSecretExpiresAt: graceS > 0 ? new Date(now.getTime() + graceS * 1000) : null,
            version: sql`${webhookEndpoints.version} + 1`,
            updatedAt: now,
          })
          .where(and(eq(webhookEndpoints.accountId, row.accountId), eq(webhookEndpoints.id, row.id)))
          .returning();
        return respond(tx, ctx, 200, { ...webhookEndpointView(updated!, now), secret }, { seal: settings.encryptor });
      })
    : undefined;
  if (outcome) return outcome;
  throw await missing(db, ctx, uuid, id);
}

// --- delivery attempts --------------------------------------------------------------------------

export function attemptView(row: AttemptRow): WebhookDeliveryAttemptView {
  return {
    id: toPublicId('wda', row.id),
    object: 'webhook_delivery_attempt',
    livemode: row.livemode,
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

async function listAttempts(db: Db, ctx: RequestContext, filter: ReturnType<typeof eq>, params: ListAttemptsQuery) {
  const plan = planPage('wda', webhookAttempts.id, webhookAttempts.createdAt, params);
  const rows = await db
    .select()
    .from(webhookAttempts)
    .where(and(eq(webhookAttempts.accountId, ctx.accountId), eq(webhookAttempts.livemode, ctx.livemode), filter, plan.where))
    .orderBy(plan.orderBy)
    .limit(plan.fetch);
  return toPage(rows, plan, attemptView);
}

export async function listEndpointAttempts(db: Db, ctx: RequestContext, id: string, params: ListAttemptsQuery): Promise<Page<WebhookDeliveryAttemptView>> {
  const uuid = parseId('we', id);
  const [row] = uuid ? await db.select({ id: webhookEndpoints.id }).from(webhookEndpoints).where(byId(ctx, uuid)) : [];
  if (!row) throw await missing(db, ctx, uuid, id);
  return listAttempts(db, ctx, eq(webhookAttempts.endpointId, row.id), params);
}

async function findEvent(db: Db, ctx: RequestContext, id: string) {
  const uuid = parseId('evt', id);
  const [row] = uuid
    ? await db
        .select({ id: events.id, type: events.type })
        .from(events)
        .where(and(eq(events.accountId, ctx.accountId), eq(events.livemode, ctx.livemode), eq(events.id, uuid)))
    : [];
  if (!row) throw await notFound(db, ctx, events, uuid, 'event', id);
  return row;
}

export async function listEventAttempts(db: Db, ctx: RequestContext, id: string, params: ListAttemptsQuery): Promise<Page<WebhookDeliveryAttemptView>> {
  const event = await findEvent(db, ctx, id);
  return listAttempts(db, ctx, eq(webhookAttempts.eventId, event.id), params);
}

/** SQL: does `type` match one of the endpoint's patterns (`*` = any run of characters)? */
export function subscribedSql(type: unknown) {
  return sql`EXISTS (SELECT 1 FROM unnest(${webhookEndpoints.enabledEvents}) AS pattern
                     WHERE ${type} LIKE replace(replace(pattern, '_', '\\_'), '*', '%'))`;
}

/**
 * Queues the event again (same webhook-id, so receivers that already have it can ignore it) for
 * one endpoint, or for every enabled endpoint subscribed to its type now.
 */
export async function redeliverEvent(db: Db, ctx: RequestContext, id: string, input: RedeliverBody, now = new Date()): Promise<Outcome> {
  const event = await findEvent(db, ctx, id);
  let endpointUuid: string | undefined;
  if (input.webhook_endpoint !== undefined) {
    endpointUuid = parseId('we', input.webhook_endpoint);
    const [row] = endpointUuid ? await db.select().from(webhookEndpoints).where(byId(ctx, endpointUuid)) : [];
    if (!row) {
      throw new ApiError('resource_missing', { param: 'webhook_endpoint', message: `No such webhook endpoint: '${input.webhook_endpoint}'.` });
    }
    if (row.status !== 'enabled') throw invalidState('webhook endpoint', row.status, ['enabled'], 'redeliver to');
  }
  return db.transaction(async (tx) => {
    const targets = await tx
      .select({ id: webhookEndpoints.id })
      .from(webhookEndpoints)
      .where(
        and(
          eq(webhookEndpoints.accountId, ctx.accountId),
          eq(webhookEndpoints.livemode, ctx.livemode),
          isNull(webhookEndpoints.deletedAt),
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

export async function findEndpointForTest(db: Db, ctx: RequestContext, id: string): Promise<EndpointRow> {
  const uuid = parseId('we', id);
  const [row] = uuid ? await db.select().from(webhookEndpoints).where(byId(ctx, uuid)) : [];
  if (!row) throw await missing(db, ctx, uuid, id);
  return row;
}
