// A connector account's credentials at rest: sealed together as one JSON object with the row as
// context (src/kernel/encryption.ts), so that a sealed value copied to another row does not open; the
// last four characters of each field kept in clear for the API to show. Opened only to build the
// account's connector for a call (connectorAccountSource), never for a view, a log or an answer.
// resealConnectorAccounts moves values sealed with an older key to the active one (ENCRYPTION_KEYS
// rotation), a few rows at a time in the worker.
import { and, eq, isNotNull, like, not, or } from 'drizzle-orm';
import type { ConnectorAccountCredentials, ConnectorAccountSource } from './registry.js';
import { catalogueEntry, webhookSecretField } from './catalogue.js';
import { parseId, toPublicId } from '../kernel/ids.js';
import { EncryptionError, type Encryptor } from '../kernel/encryption.js';
import type { Db, Executor } from '../storage/db.js';
import { connectorAccountRoutes, connectorAccounts } from '../storage/schema.js';

export type ConnectorAccountRow = typeof connectorAccounts.$inferSelect;

/** The additional authenticated data binding sealed credentials to their row. */
export function credentialsContext(accountId: string, id: string): string {
  return `connector_account:${accountId}:${id}`;
}

/** Enough of a secret for a person to recognise it, never enough to use it. */
export function last4(value: string): string {
  return value.slice(-4);
}

export function sealCredentials(encryptor: Encryptor, accountId: string, id: string, credentials: Record<string, string>) {
  return {
    credentialsEncrypted: encryptor.encrypt(JSON.stringify(credentials), credentialsContext(accountId, id)),
    credentialHints: Object.fromEntries(Object.entries(credentials).map(([field, value]) => [field, last4(value)])),
  };
}

export function openCredentials(encryptor: Encryptor, row: Pick<ConnectorAccountRow, 'accountId' | 'id' | 'credentialsEncrypted'>): Record<string, string> {
  return JSON.parse(encryptor.decrypt(row.credentialsEncrypted, credentialsContext(row.accountId, row.id))) as Record<string, string>;
}

/** The webhook secrets that verify now, newest first: the current one and, in its grace period, the previous. */
export function webhookSecrets(encryptor: Encryptor, row: ConnectorAccountRow, credentials: Record<string, string>, now: Date): string[] {
  const entry = catalogueEntry(row.connector);
  const field = entry && webhookSecretField(entry);
  const current = field === undefined ? undefined : credentials[field];
  const secrets = current === undefined ? [] : [current];
  if (row.previousWebhookSecretEncrypted && row.previousWebhookSecretExpiresAt && row.previousWebhookSecretExpiresAt > now) {
    secrets.push(encryptor.decrypt(row.previousWebhookSecretEncrypted, credentialsContext(row.accountId, row.id)));
  }
  return secrets;
}

/**
 * Opens a connector account of `owner` for a call, whatever its status: a disabled or deleted
 * account takes no new movements (routing leaves it out), but the ones it already holds are still
 * checked and settled through it. Undefined when it is not the owner's or does not open (its key
 * is no longer configured).
 */
export function connectorAccountSource(db: Db, encryptor: Encryptor, now: () => Date = () => new Date()): ConnectorAccountSource {
  return async (key, owner): Promise<ConnectorAccountCredentials | undefined> => {
    const uuid = parseId('ca', key);
    if (!uuid) return undefined;
    const [row] = await db
      .select()
      .from(connectorAccounts)
      .where(and(eq(connectorAccounts.accountId, owner.accountId), eq(connectorAccounts.livemode, owner.livemode), eq(connectorAccounts.id, uuid)));
    if (!row) return undefined;
    return unlessSealedWithUnknownKey(() => {
      const credentials = openCredentials(encryptor, row);
      return { id: key, connector: row.connector, livemode: row.livemode, credentials, webhookSecrets: webhookSecrets(encryptor, row, credentials, now()) };
    });
  };
}

/**
 * Which processor a connector account of `owner` is at, read in the caller's transaction (a
 * webhook's, which may have just written what it reads); nothing is unsealed. Undefined when it is
 * not the owner's.
 */
export async function processorOfAccount(tx: Executor, key: string, owner: { accountId: string; livemode: boolean }): Promise<string | undefined> {
  const uuid = parseId('ca', key);
  if (!uuid) return undefined;
  const [row] = await tx
    .select({ connector: connectorAccounts.connector })
    .from(connectorAccounts)
    .where(and(eq(connectorAccounts.accountId, owner.accountId), eq(connectorAccounts.livemode, owner.livemode), eq(connectorAccounts.id, uuid)));
  return row?.connector;
}

/**
 * The connector account behind an inbound webhook URL: processors know it by its id alone, so its
 * owner is read from a reference table first, then the account within its owner's rows.
 */
export async function findByWebhookId(db: Db, id: string): Promise<ConnectorAccountRow | undefined> {
  const uuid = parseId('ca', id);
  if (!uuid) return undefined;
  const [route] = await db.select().from(connectorAccountRoutes).where(eq(connectorAccountRoutes.id, uuid));
  if (!route) return undefined;
  const [row] = await db
    .select()
    .from(connectorAccounts)
    .where(and(eq(connectorAccounts.accountId, route.accountId), eq(connectorAccounts.livemode, route.livemode), eq(connectorAccounts.id, uuid)));
  return row;
}

/**
 * Re-seals up to `batch` accounts whose values were sealed with a key other than the active one;
 * the number done. Rows being changed by a request are skipped and taken at a later pass.
 */
export async function resealConnectorAccounts(db: Db, encryptor: Encryptor, batch = 100): Promise<number> {
  // Key ids may hold `_`, a LIKE wildcard.
  const active = `v1.${encryptor.activeKeyId.replace(/_/g, '\\_')}.%`;
  return db.transaction(async (tx) => {
    const rows = await tx
      .select()
      .from(connectorAccounts)
      .where(
        or(
          not(like(connectorAccounts.credentialsEncrypted, active)),
          and(isNotNull(connectorAccounts.previousWebhookSecretEncrypted), not(like(connectorAccounts.previousWebhookSecretEncrypted, active))),
        ),
      )
      .limit(batch)
      .for('update', { skipLocked: true });
    let done = 0;
    for (const row of rows) {
      const context = credentialsContext(row.accountId, row.id);
      const reseal = (sealed: string) => encryptor.encrypt(encryptor.decrypt(sealed, context), context);
      // A value whose key is no longer configured cannot be moved; it stays as it is.
      const moved = unlessSealedWithUnknownKey(() => ({
        credentialsEncrypted: reseal(row.credentialsEncrypted),
        previousWebhookSecretEncrypted: row.previousWebhookSecretEncrypted === null ? null : reseal(row.previousWebhookSecretEncrypted),
      }));
      if (!moved) continue;
      await tx
        .update(connectorAccounts)
        .set(moved)
        .where(and(eq(connectorAccounts.accountId, row.accountId), eq(connectorAccounts.id, row.id)));
      done++;
    }
    return done;
  });
}

/** What `open` gives, or undefined when a value does not open with the configured keys. */
function unlessSealedWithUnknownKey<T>(open: () => T): T | undefined {
  try {
    return open();
  } catch (err) {
    if (err instanceof EncryptionError) return undefined;
    throw err;
  }
}

/** The public id of a connector account row. */
export const connectorAccountId = (row: Pick<ConnectorAccountRow, 'id'>) => toPublicId('ca', row.id);
