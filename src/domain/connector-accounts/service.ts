// Connector accounts (`ca_`): an account's credentials at one processor of the catalogue, per mode.
// Credentials are checked for shape (src/connectors/catalogue.ts), sealed at rest
// (src/connectors/account-credentials.ts) and never returned; the object shows which fields are
// set and their last four characters. Routing rules name accounts (src/domain/routing), so a
// change drops this process's routing cache entry.
//
// Disabling takes an account out of routing for new movements; deleting is refused while this
// mode's routing rules name it (connector_account_in_use), and keeps the row with its sealed
// credentials, since movements it already holds are still checked and settled through it.
import { and, eq, isNull } from 'drizzle-orm';
import { catalogueEntry, checkCredentials, webhookSecretField, CATALOGUE, type CatalogueEntry, type Mode } from '../../connectors/catalogue.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { ApiError } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import { changeOne, tenantReads, type Resource } from '../../storage/tenant.js';
import { respond } from '../../idempotency/store.js';
import type { Runtime } from '../../runtime.js';
import type { Db, Tx } from '../../storage/db.js';
import { isDatabaseError, UNIQUE_VIOLATION } from '../../storage/errors.js';
import { connectorAccountRoutes, connectorAccounts, routingConfigs } from '../../storage/schema.js';
import { forgetRouting, type StoredRule } from '../routing/cache.js';
import { DEFAULT_GRACE_PERIOD_S } from '../webhooks/schema.js';
import type {
  ConnectorAccountView,
  ConnectorView,
  CreateConnectorAccountBody,
  ListConnectorAccountsQuery,
  UpdateConnectorAccountBody,
} from './schema.js';
import { connectorAccountId, credentialsContext, findByWebhookId, openCredentials, sealCredentials, type ConnectorAccountRow } from '../../connectors/account-credentials.js';
import { accountSender, type InboundSender } from '../../movement/inbound.js';

export const CONNECTOR_ACCOUNTS: Resource<typeof connectorAccounts> = {
  table: connectorAccounts,
  prefix: 'ca',
  name: 'connector account',
  visible: isNull(connectorAccounts.deletedAt),
};

const modeOf = (livemode: boolean): Mode => (livemode ? 'live' : 'test');

export function connectorAccountView(rt: Runtime, row: ConnectorAccountRow, now = rt.now()): ConnectorAccountView {
  const entry = catalogueEntry(row.connector);
  const fields = entry ? entry.credentials.map((f) => f.name) : Object.keys(row.credentialHints);
  const id = connectorAccountId(row);
  const previousValid = row.previousWebhookSecretEncrypted !== null && row.previousWebhookSecretExpiresAt !== null && row.previousWebhookSecretExpiresAt > now;
  return {
    id,
    object: 'connector_account',
    livemode: row.livemode,
    connector: row.connector,
    name: row.name,
    status: row.status,
    credentials: Object.fromEntries(
      fields.map((field) => {
        const hint = row.credentialHints[field];
        return [field, hint === undefined ? { set: false, last4: null } : { set: true, last4: hint }];
      }),
    ),
    webhook_url: entry?.simulated ? `${rt.publicUrl()}/v1/connectors/${row.connector}/webhooks` : `${rt.publicUrl()}/v1/connector-accounts/${id}/webhooks`,
    previous_webhook_secret_expires_at: previousValid ? row.previousWebhookSecretExpiresAt!.toISOString() : null,
    metadata: row.metadata,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** A name may not be a built-in connector's: test-mode rules name those directly. */
function checkName(rt: Runtime, name: string): void {
  if (rt.connectors.registry.get(name)) {
    throw new ApiError('parameter_invalid', { param: 'name', message: `name ${name} is the built-in connector's own; choose another name.` });
  }
}

/** Runs `write`; a name another account of the mode already has is the typed 400 naming it. */
async function withUniqueName<T>(ctx: RequestContext, name: string | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (name === undefined || !isDatabaseError(err, UNIQUE_VIOLATION, 'connector_accounts_name_key')) throw err;
    throw new ApiError('parameter_invalid', {
      param: 'name',
      message: `A connector account named ${name} already exists in ${modeOf(ctx.livemode)} mode; names are unique per mode.`,
    });
  }
}

function entryFor(connector: string, livemode: boolean): CatalogueEntry {
  const entry = catalogueEntry(connector);
  if (!entry) throw new ApiError('parameter_invalid', { param: 'connector', message: `connector must be one of: ${CATALOGUE.map((e) => e.name).join(', ')}.` });
  if (!entry.modes.includes(modeOf(livemode))) {
    throw new ApiError('parameter_invalid', { param: 'connector', message: `${connector} serves ${entry.modes.join(' and ')} mode only; this key is a ${modeOf(livemode)} key.` });
  }
  return entry;
}

export async function createConnectorAccount(db: Db, rt: Runtime, ctx: RequestContext, input: CreateConnectorAccountBody): Promise<Outcome> {
  const entry = entryFor(input.connector, ctx.livemode);
  checkName(rt, input.name);
  const credentials = input.credentials ?? {};
  checkCredentials(entry, credentials, modeOf(ctx.livemode));
  const now = rt.now();
  const { uuid } = newId('ca');
  const outcome = await withUniqueName(ctx, input.name, () =>
    db.transaction(async (tx) => {
      const [row] = await tx
        .insert(connectorAccounts)
        .values({
          accountId: ctx.accountId,
          id: uuid,
          livemode: ctx.livemode,
          connector: entry.name,
          name: input.name,
          status: 'enabled',
          ...sealCredentials(rt.encryptor, ctx.accountId, uuid, credentials),
          metadata: input.metadata ?? {},
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      // Its webhook URL names it alone: the reference table finds its owner (src/connectors/account-credentials.ts).
      await tx.insert(connectorAccountRoutes).values({ id: uuid, accountId: ctx.accountId, livemode: ctx.livemode });
      return respond(tx, ctx, 201, connectorAccountView(rt, row!, now));
    }),
  );
  forgetRouting(rt, ctx);
  return outcome;
}

export function connectorAccountReads(rt: Runtime) {
  return tenantReads(CONNECTOR_ACCOUNTS, (row) => connectorAccountView(rt, row), (q: ListConnectorAccountsQuery) => [
    q.connector ? eq(connectorAccounts.connector, q.connector) : undefined,
    q.status ? eq(connectorAccounts.status, q.status as ConnectorAccountRow['status']) : undefined,
  ]);
}

/** The credentials after a PATCH: given fields set (null removes one), the others kept; checked as a whole. */
function mergedCredentials(row: ConnectorAccountRow, before: Record<string, string>, changes: Record<string, string | null>): Record<string, string> {
  const merged = { ...before };
  for (const [field, value] of Object.entries(changes)) {
    if (value === null) delete merged[field];
    else merged[field] = value;
  }
  checkCredentials(catalogueEntry(row.connector)!, merged, modeOf(row.livemode));
  return merged;
}

/** The new credentials sealed and, when the webhook secret changed, the previous one kept for the grace period. */
function rotated(rt: Runtime, row: ConnectorAccountRow, changes: Record<string, string | null>, graceS: number, now: Date): Partial<ConnectorAccountRow> {
  const before = openCredentials(rt.encryptor, row);
  const credentials = mergedCredentials(row, before, changes);
  const field = webhookSecretField(catalogueEntry(row.connector)!);
  const previous = field === undefined ? undefined : before[field];
  const changed = previous !== undefined && previous !== credentials[field!];
  const kept = changed && graceS > 0;
  return {
    ...sealCredentials(rt.encryptor, row.accountId, row.id, credentials),
    ...(changed
      ? {
          previousWebhookSecretEncrypted: kept ? rt.encryptor.encrypt(previous, credentialsContext(row.accountId, row.id)) : null,
          previousWebhookSecretExpiresAt: kept ? new Date(now.getTime() + graceS * 1000) : null,
        }
      : {}),
  };
}

export async function updateConnectorAccount(db: Db, rt: Runtime, ctx: RequestContext, id: string, input: UpdateConnectorAccountBody): Promise<Outcome> {
  if (input.name !== undefined) checkName(rt, input.name);
  const now = rt.now();
  const outcome = await withUniqueName(ctx, input.name, () =>
    changeOne(db, ctx, CONNECTOR_ACCOUNTS, id, async (tx, row) => {
      const changes: Partial<ConnectorAccountRow> = {};
      if (input.name !== undefined) changes.name = input.name;
      if (input.status !== undefined) changes.status = input.status as ConnectorAccountRow['status'];
      if (input.metadata !== undefined) changes.metadata = input.metadata;
      if (input.credentials !== undefined) {
        Object.assign(changes, rotated(rt, row, input.credentials, input.grace_period_seconds ?? DEFAULT_GRACE_PERIOD_S, now));
      }
      const updated = Object.keys(changes).length ? await writeAccount(tx, row, now, changes) : row;
      return respond(tx, ctx, 200, connectorAccountView(rt, updated, now));
    }),
  );
  forgetRouting(rt, ctx);
  return outcome;
}

/** Every change of an account goes through here, so none forgets to move its version. */
async function writeAccount(tx: Tx, row: ConnectorAccountRow, now: Date, changes: Partial<ConnectorAccountRow>): Promise<ConnectorAccountRow> {
  const [updated] = await tx
    .update(connectorAccounts)
    .set({ ...changes, version: row.version + 1, updatedAt: now })
    .where(and(eq(connectorAccounts.accountId, row.accountId), eq(connectorAccounts.id, row.id)))
    .returning();
  return updated!;
}

/** Whether this mode's stored routing rules name the account. */
async function namedByRouting(tx: Tx, row: ConnectorAccountRow): Promise<boolean> {
  const [config] = await tx
    .select({ rules: routingConfigs.rules })
    .from(routingConfigs)
    .where(and(eq(routingConfigs.accountId, row.accountId), eq(routingConfigs.livemode, row.livemode)));
  const id = connectorAccountId(row);
  return ((config?.rules ?? []) as StoredRule[]).some((rule) => rule.connectors.some((c) => 'connector_account' in c && c.connector_account === id));
}

export async function deleteConnectorAccount(db: Db, rt: Runtime, ctx: RequestContext, id: string): Promise<Outcome> {
  const now = rt.now();
  const outcome = await changeOne(db, ctx, CONNECTOR_ACCOUNTS, id, async (tx, row) => {
    // The row lock orders this with PUT /v1/routing, which locks the accounts it names for share.
    if (await namedByRouting(tx, row)) {
      throw new ApiError('connector_account_in_use', {
        message: `The connector account ${row.name} (${connectorAccountId(row)}) is named by this mode's routing rules; take it out of them (PUT /v1/routing) first.`,
      });
    }
    await writeAccount(tx, row, now, { deletedAt: now });
    return respond(tx, ctx, 200, { id: connectorAccountId(row), object: 'connector_account', deleted: true });
  });
  forgetRouting(rt, ctx);
  return outcome;
}

/** GET /v1/connectors. */
export function connectorCatalogue(rt: Runtime): { object: 'list'; data: ConnectorView[]; has_more: false } {
  return {
    object: 'list',
    data: CATALOGUE.map((entry) => ({
      name: entry.name,
      object: 'connector',
      modes: entry.modes,
      capabilities: entry.capabilities,
      credential_fields: entry.credentials.map((f) => ({ name: f.name, required: f.required, description: f.description })),
      routable: rt.connectors.implemented(entry.name),
    })),
    has_more: false,
  };
}

/**
 * The sender of a webhook to a connector account's webhook_url: its processor's connector, built
 * from its credentials (whatever its status: what it holds still settles). 404 for an unknown id,
 * or while this version cannot reach the account's processor.
 */
export async function connectorAccountSender(db: Db, rt: Runtime, id: string): Promise<InboundSender> {
  const row = await findByWebhookId(db, id);
  if (!row) throw new ApiError('resource_missing', { param: 'id', message: `No such connector account: '${id}'.` });
  const owner = { accountId: row.accountId, livemode: row.livemode };
  const connector = await rt.connectors.resolveAccount(id, owner);
  if (!connector) {
    throw new ApiError('resource_missing', { param: 'id', message: `The connector account '${id}' cannot receive webhooks: this version does not reach ${row.connector} yet.` });
  }
  return accountSender(connector, id, owner);
}
