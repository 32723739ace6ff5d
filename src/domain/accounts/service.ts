// Accounts and their API keys: onboarding operations used by the CLI and the first-start
// bootstrap, and the key lookup behind authentication.
import { and, desc, eq } from 'drizzle-orm';
import type { Db, Executor, Tx } from '../../storage/db.js';
import { accounts, apiKeyLookups, apiKeys } from '../../storage/schema.js';
import { newId, parseId, toPublicId } from '../../kernel/ids.js';
import { newApiKey, redactApiKey, sha256Hex } from '../../kernel/secrets.js';
import { integrationPlan } from './integration.js';
import type { IntegrationPlan } from './schema.js';
import { checkProfile, type AccountProfile } from './profile.js';

export class OnboardingError extends Error {}

export interface AccountView {
  id: string;
  /** The display name: the hosted checkout's merchant and the dashboard's header. */
  name: string;
  /** Where the checkout sends a customer with a question; null: none given. */
  support_email: string | null;
  status: 'active' | 'suspended';
  live_enabled: boolean;
  rate_limit: { per_second: number; burst: number } | null;
  /** Payout settings: live-mode payouts on or off (test mode always has them), and the largest single payout. */
  payouts: { live_enabled: boolean; max_amount: number | null };
  /** When live mode was activated with required plan items still open (--force); null otherwise. */
  live_forced_at: string | null;
  created_at: string;
}

function accountView(row: typeof accounts.$inferSelect): AccountView {
  return {
    id: toPublicId('acct', row.id),
    name: row.name,
    support_email: row.supportEmail,
    status: row.status,
    live_enabled: row.liveEnabled,
    rate_limit: row.rateLimitPerS && row.rateLimitBurst ? { per_second: row.rateLimitPerS, burst: row.rateLimitBurst } : null,
    payouts: { live_enabled: row.payoutsEnabled, max_amount: row.payoutMaxAmount },
    live_forced_at: row.liveForcedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  };
}

function accountUuid(accountId: string): string {
  const uuid = parseId('acct', accountId);
  if (!uuid) throw new OnboardingError(`${accountId} is not an account id (acct_…)`);
  return uuid;
}

/** The plan of an account: for the CLI (public id) and the API (the caller's own account). */
export async function accountPlan(db: Executor, accountId: string): Promise<IntegrationPlan> {
  return integrationPlan(db, await requireAccount(db, accountId));
}

async function requireAccount(db: Executor, accountId: string) {
  const [row] = await db.select().from(accounts).where(eq(accounts.id, accountUuid(accountId)));
  if (!row) throw new OnboardingError(`no account ${accountId}`);
  return row;
}

export async function createAccount(db: Executor, name: string, supportEmail: string | null = null): Promise<AccountView> {
  const profile = checkProfile({ name, supportEmail });
  const { uuid } = newId('acct');
  const [row] = await db.insert(accounts).values({ id: uuid, name: profile.name!, supportEmail: profile.supportEmail ?? null }).returning();
  return accountView(row!);
}

/** Renames the account or changes its support contact (null removes it); fields left out stay. */
export const updateProfile = (db: Executor, accountId: string, profile: AccountProfile) => {
  const checked = checkProfile(profile);
  return updateAccount(db, accountId, {
    ...(checked.name === undefined ? {} : { name: checked.name }),
    ...(checked.supportEmail === undefined ? {} : { supportEmail: checked.supportEmail }),
  });
};

export async function getAccount(db: Executor, accountId: string): Promise<AccountView> {
  return accountView(await requireAccount(db, accountId));
}

export async function listAccounts(db: Executor): Promise<AccountView[]> {
  return (await db.select().from(accounts).orderBy(desc(accounts.id))).map(accountView);
}

async function updateAccount(db: Executor, accountId: string, values: Partial<typeof accounts.$inferInsert>): Promise<AccountView> {
  const [row] = await db
    .update(accounts)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(accounts.id, accountUuid(accountId)))
    .returning();
  if (!row) throw new OnboardingError(`no account ${accountId}`);
  return accountView(row);
}

/**
 * Live mode opens once the implementation plan's required items are done, or when the operator
 * forces it, which the account keeps (live_forced_at) so the exception stays visible.
 */
export async function activateLive(db: Executor, accountId: string, opts: { force?: boolean } = {}): Promise<AccountView> {
  const account = await requireAccount(db, accountId);
  if (account.liveEnabled) return accountView(account);
  if (!opts.force) {
    const open = (await integrationPlan(db, account)).items.filter((item) => item.required && item.status === 'open');
    if (open.length > 0) {
      throw new OnboardingError(
        `${accountId} has open required items in its implementation plan: ${open.map((item) => item.id).join(', ')} ` +
          `(see accounts plan ${accountId}); finish them in test mode, or give --force to activate anyway (recorded on the account)`,
      );
    }
  }
  return updateAccount(db, accountId, { liveEnabled: true, ...(opts.force ? { liveForcedAt: new Date() } : {}) });
}
export const suspendAccount = (db: Executor, accountId: string) => updateAccount(db, accountId, { status: 'suspended' });
export const reinstateAccount = (db: Executor, accountId: string) => updateAccount(db, accountId, { status: 'active' });
export const setRateLimit = (db: Executor, accountId: string, budget: { perSecond: number; burst: number } | null) =>
  updateAccount(db, accountId, { rateLimitPerS: budget?.perSecond ?? null, rateLimitBurst: budget?.burst ?? null });

/** Onboarding decides: live-mode payouts on or off; the largest single payout (null: no limit of its own). Unset fields stay. */
export const setPayoutSettings = (db: Executor, accountId: string, settings: { liveEnabled?: boolean; maxAmount?: number | null }) =>
  updateAccount(db, accountId, {
    ...(settings.liveEnabled === undefined ? {} : { payoutsEnabled: settings.liveEnabled }),
    ...(settings.maxAmount === undefined ? {} : { payoutMaxAmount: settings.maxAmount }),
  });

export interface KeyView {
  id: string;
  account: string;
  livemode: boolean;
  redacted: string;
  name: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

function keyView(row: typeof apiKeys.$inferSelect): KeyView {
  return {
    id: toPublicId('key', row.id),
    account: toPublicId('acct', row.accountId),
    livemode: row.livemode,
    redacted: row.redacted,
    name: row.name,
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  };
}

/** Issues a key. The plaintext is in the answer and nowhere else: only its hash is stored. */
export async function issueKey(
  db: Executor,
  accountId: string,
  opts: { livemode: boolean; name?: string; expiresAt?: Date },
): Promise<KeyView & { secret: string }> {
  const account = await requireAccount(db, accountId);
  if (opts.livemode && !account.liveEnabled) {
    throw new OnboardingError(`live mode is not enabled for ${accountId}; activate it first (accounts activate-live)`);
  }
  const secret = newApiKey(opts.livemode);
  const { uuid } = newId('key');
  const keyHash = sha256Hex(secret);
  const expiresAt = opts.expiresAt ?? null;
  // The key and the row authentication finds it by commit together (docs/operations.md#distributing-by-account-citus).
  const row = await db.transaction(async (tx) => {
    const [key] = await tx
      .insert(apiKeys)
      .values({ accountId: account.id, id: uuid, livemode: opts.livemode, keyHash, redacted: redactApiKey(secret), name: opts.name ?? null, expiresAt })
      .returning();
    await tx.insert(apiKeyLookups).values({ keyHash, accountId: account.id, keyId: uuid, livemode: opts.livemode, expiresAt });
    return key!;
  });
  return { ...keyView(row), secret };
}

/** Changes a key's expiry or revocation, and its lookup row alike, in the caller's transaction. */
async function updateKey(tx: Tx, key: { accountId: string; id: string }, values: { expiresAt?: Date | null; revokedAt?: Date | null }) {
  const [row] = await tx
    .update(apiKeys)
    .set(values)
    .where(and(eq(apiKeys.accountId, key.accountId), eq(apiKeys.id, key.id)))
    .returning();
  await tx
    .update(apiKeyLookups)
    .set(values)
    .where(and(eq(apiKeyLookups.accountId, key.accountId), eq(apiKeyLookups.keyId, key.id)));
  return keyView(row!);
}

async function requireKey(db: Executor, keyId: string) {
  const uuid = parseId('key', keyId);
  if (!uuid) throw new OnboardingError(`${keyId} is not a key id (key_…)`);
  const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, uuid));
  if (!row) throw new OnboardingError(`no key ${keyId}`);
  return row;
}

export async function listKeys(db: Executor, accountId: string): Promise<KeyView[]> {
  const rows = await db.select().from(apiKeys).where(eq(apiKeys.accountId, accountUuid(accountId))).orderBy(desc(apiKeys.id));
  return rows.map(keyView);
}

export async function revokeKey(db: Executor, keyId: string, at = new Date()): Promise<KeyView> {
  const key = await requireKey(db, keyId);
  return db.transaction((tx) => updateKey(tx, key, { revokedAt: key.revokedAt ?? at }));
}

/**
 * Issues a replacement key of the same mode; the old one keeps working until `oldValidUntil`.
 * Both changes commit together, so a failure never leaves a new key beside an unchanged old one.
 */
export async function rollKey(db: Db, keyId: string, oldValidUntil: Date): Promise<{ old: KeyView; new: KeyView & { secret: string } }> {
  return db.transaction(async (tx) => {
    const key = await requireKey(tx, keyId);
    if (key.revokedAt) throw new OnboardingError(`${keyId} is revoked; issue a new key instead`);
    const fresh = await issueKey(tx, toPublicId('acct', key.accountId), { livemode: key.livemode, name: key.name ?? undefined });
    const until = key.expiresAt && key.expiresAt < oldValidUntil ? key.expiresAt : oldValidUntil;
    return { old: await updateKey(tx, key, { expiresAt: until }), new: fresh };
  });
}

export interface Principal {
  accountId: string;
  keyId: string;
  livemode: boolean;
  accountStatus: 'active' | 'suspended';
  expiresAt: Date | null;
  revokedAt: Date | null;
  rateLimit: { perSecond: number; burst: number } | null;
}

/**
 * The key and its account by the key's hash, or undefined. Validity is judged by the caller. One
 * indexed read of two reference tables (docs/operations.md#distributing-by-account-citus).
 */
export async function findPrincipal(db: Executor, keyHash: string): Promise<Principal | undefined> {
  const [row] = await db
    .select({
      accountId: apiKeyLookups.accountId,
      keyId: apiKeyLookups.keyId,
      livemode: apiKeyLookups.livemode,
      expiresAt: apiKeyLookups.expiresAt,
      revokedAt: apiKeyLookups.revokedAt,
      accountStatus: accounts.status,
      rateLimitPerS: accounts.rateLimitPerS,
      rateLimitBurst: accounts.rateLimitBurst,
    })
    .from(apiKeyLookups)
    .innerJoin(accounts, eq(accounts.id, apiKeyLookups.accountId))
    .where(eq(apiKeyLookups.keyHash, keyHash));
  if (!row) return undefined;
  return {
    accountId: row.accountId,
    keyId: row.keyId,
    livemode: row.livemode,
    accountStatus: row.accountStatus,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
    rateLimit: row.rateLimitPerS && row.rateLimitBurst ? { perSecond: row.rateLimitPerS, burst: row.rateLimitBurst } : null,
  };
}
