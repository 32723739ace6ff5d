// Webhook endpoints: where an account's events are POSTed, signed with the endpoint's secret. The
// secret is encrypted at rest (it must be read back to sign), returned only when created or
// rotated. Status changes commit with their event, and every request's final transaction holds its
// idempotency record (respond()).
import { and, count, eq, isNull, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { webhookEndpoints } from '../../storage/schema.js';
import { lockTenantKey } from '../../storage/locks.js';
import { newId, toPublicId } from '../../kernel/ids.js';
import type { Encryptor } from '../../kernel/encryption.js';
import type { WebhookConfig } from '../../config.js';
import { ApiError } from '../../kernel/errors.js';
import { respond } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../../events/service.js';
import { checkEventPatterns } from '../../events/types.js';
import type { Page } from '../../kernel/pagination.js';
import { changeOne, listPage, loadOne, ownRows, type Resource } from '../../storage/tenant.js';
import { newWebhookSecret } from './signing.js';
import type { Sender } from './sender.js';
import { checkUrl } from './destinations.js';
import {
  DEFAULT_GRACE_PERIOD_S,
  type CreateWebhookEndpointBody,
  type ListWebhookEndpointsQuery,
  type RotateSecretBody,
  type UpdateWebhookEndpointBody,
  type WebhookEndpointView,
} from './schema.js';
import { webhookEndpointStates, type DisabledReason, type WebhookEndpointStatus } from './state.js';

export type EndpointRow = typeof webhookEndpoints.$inferSelect;

/** Deleted endpoints are kept (their attempts point at them) but answer 404 like absent ones. */
export const WEBHOOK_ENDPOINTS: Resource<typeof webhookEndpoints> = {
  table: webhookEndpoints,
  prefix: 'we',
  name: 'webhook endpoint',
  visible: isNull(webhookEndpoints.deletedAt),
};

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

export async function createWebhookEndpoint(
  db: Db,
  settings: WebhookSettings,
  ctx: RequestContext,
  input: CreateWebhookEndpointBody,
  now = new Date(),
): Promise<Outcome> {
  const url = checkUrl(input.url, ctx.livemode, settings.config);
  checkEventPatterns(input.enabled_events, 'enabled_events');
  const { uuid } = newId('we');
  const secret = newWebhookSecret();
  return db.transaction(async (tx) => {
    // One account's fan-out is bounded, so one event cannot turn into an unbounded number of requests.
    // Creates of one account and mode queue on a transaction-scoped lock, or two could both count
    // one below the limit and both insert.
    await lockTenantKey(tx, 'webhook_endpoints', ctx);
    const [existing] = await tx
      .select({ n: count() })
      .from(webhookEndpoints)
      .where(ownRows(ctx, WEBHOOK_ENDPOINTS));
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
  return webhookEndpointView(await loadOne(db, ctx, WEBHOOK_ENDPOINTS, id));
}

export async function listWebhookEndpoints(db: Db, ctx: RequestContext, params: ListWebhookEndpointsQuery): Promise<Page<WebhookEndpointView>> {
  const now = new Date();
  const filters = [params.status ? eq(webhookEndpoints.status, params.status as WebhookEndpointStatus) : undefined];
  return listPage(db, ctx, WEBHOOK_ENDPOINTS, params, filters, (row) => webhookEndpointView(row, now));
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
  const updated = await writeEndpoint(tx, row, now, {
    ...changes,
    status: to,
    disabledReason: to === 'disabled' ? reason : null,
    // A re-enabled endpoint starts a fresh failure count.
    ...(to === 'enabled' ? { failingSince: null } : {}),
  });
  await recordEvent(tx, ctx, `webhook_endpoint.${to}`, webhookEndpointView(updated, now), now);
  return updated;
}

/** Every change of an endpoint goes through here, so none forgets to move its version. */
async function writeEndpoint(tx: Executor, row: EndpointRow, now: Date, changes: Partial<EndpointRow>): Promise<EndpointRow> {
  const [updated] = await tx
    .update(webhookEndpoints)
    .set({ ...changes, version: sql`${webhookEndpoints.version} + 1`, updatedAt: now })
    .where(and(eq(webhookEndpoints.accountId, row.accountId), eq(webhookEndpoints.id, row.id)))
    .returning();
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
  const url = input.url === undefined ? undefined : checkUrl(input.url, ctx.livemode, settings.config);
  if (input.enabled_events !== undefined) checkEventPatterns(input.enabled_events, 'enabled_events');
  return changeOne(db, ctx, WEBHOOK_ENDPOINTS, id, async (tx, row) => {
    const changes: Partial<EndpointRow> = {};
    if (url !== undefined) changes.url = url;
    if (input.enabled_events !== undefined) changes.enabledEvents = input.enabled_events;
    if (input.description !== undefined) changes.description = input.description;
    if (input.metadata !== undefined) changes.metadata = input.metadata;
    let updated = row;
    if (input.status !== undefined && input.status !== row.status) {
      updated = await setEndpointStatus(tx, ctx, row, input.status as WebhookEndpointStatus, 'requested', now, changes);
    } else if (Object.keys(changes).length > 0) {
      updated = await writeEndpoint(tx, row, now, changes);
    }
    return respond(tx, ctx, 200, webhookEndpointView(updated, now));
  });
}

/** Deleted endpoints stop receiving at once (pending deliveries are dropped when due) and answer 404. */
export async function deleteWebhookEndpoint(db: Db, ctx: RequestContext, id: string, now = new Date()): Promise<Outcome> {
  return changeOne(db, ctx, WEBHOOK_ENDPOINTS, id, async (tx, row) => {
    await writeEndpoint(tx, row, now, { deletedAt: now });
    return respond(tx, ctx, 200, { id: toPublicId('we', row.id), object: 'webhook_endpoint', deleted: true });
  });
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
  const graceS = input.grace_period_seconds ?? DEFAULT_GRACE_PERIOD_S;
  const secret = newWebhookSecret();
  return changeOne(db, ctx, WEBHOOK_ENDPOINTS, id, async (tx, row) => {
    const updated = await writeEndpoint(tx, row, now, {
      secretEncrypted: settings.encryptor.encrypt(secret, secretContext(row.accountId, row.id)),
      previousSecretEncrypted: graceS > 0 ? row.secretEncrypted : null,
      previousSecretExpiresAt: graceS > 0 ? new Date(now.getTime() + graceS * 1000) : null,
    });
    return respond(tx, ctx, 200, { ...webhookEndpointView(updated, now), secret }, { seal: settings.encryptor });
  });
}

