// Dashboard sessions: who a browser is signed in as (one account, one mode). A session begins
// either with a secret key posted to the sign-in form, or with a one-time code the CLI printed
// (`dashboard session ACCT --mode test|live`). The browser holds a random token in a cookie; only
// its SHA-256 is stored, as for API keys, and the code's likewise. A key-made session lasts no
// longer than its key: the key's revocation or expiry ends it at the next request.
import crypto from 'node:crypto';
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { accounts, apiKeyLookups, dashboardSessions } from '../../storage/schema.js';
import { parseId } from '../../kernel/ids.js';
import { sha256Hex } from '../../kernel/secrets.js';
import { getAccount, OnboardingError, type Principal } from '../accounts/service.js';

/** A signed-in session, as each dashboard request needs it. */
export interface DashboardSession {
  accountId: string;
  livemode: boolean;
  accountName: string;
}

export const SESSION_TTL_MS = 12 * 3600 * 1000;
export const CODE_TTL_MS = 15 * 60 * 1000;
const CODE_PATTERN = /^dsc_[A-Za-z0-9_-]{43}$/;

const randomToken = () => crypto.randomBytes(32).toString('base64url');

export interface SignInCode {
  account: string;
  mode: 'test' | 'live';
  /** Shown once: the only copy is the CLI's output. */
  code: string;
  code_expires_at: string;
}

/** The CLI's side: a session waiting for its one-time code (refused for live mode until it is activated). */
export async function createSignInCode(db: Db, account: string, livemode: boolean, now = new Date()): Promise<SignInCode> {
  const view = await getAccount(db, account);
  if (livemode && !view.live_enabled) throw new OnboardingError(`live mode is not enabled for ${account}; activate it first (accounts activate-live)`);
  if (view.status !== 'active') throw new OnboardingError(`${account} is suspended`);
  const code = `dsc_${randomToken()}`;
  const codeExpiresAt = new Date(now.getTime() + CODE_TTL_MS);
  await db.insert(dashboardSessions).values({
    // getAccount has checked the id.
    accountId: parseId('acct', view.id)!,
    id: crypto.randomUUID(),
    livemode,
    codeHash: sha256Hex(code),
    codeExpiresAt,
    createdAt: now,
    expiresAt: new Date(codeExpiresAt.getTime() + SESSION_TTL_MS),
  });
  return { account: view.id, mode: livemode ? 'live' : 'test', code, code_expires_at: codeExpiresAt.toISOString() };
}

/** Uses a one-time code: the session it names starts now, and the code can never be used again. */
export async function signInWithCode(db: Db, code: string, now = new Date()): Promise<string | undefined> {
  if (!CODE_PATTERN.test(code)) return undefined;
  const token = randomToken();
  // One statement: of two browsers racing with the same code, one gets the session.
  const [row] = await db
    .update(dashboardSessions)
    .set({ codeHash: null, codeExpiresAt: null, tokenHash: sha256Hex(token), expiresAt: new Date(now.getTime() + SESSION_TTL_MS) })
    .where(and(eq(dashboardSessions.codeHash, sha256Hex(code)), gt(dashboardSessions.codeExpiresAt, now), isNull(dashboardSessions.tokenHash)))
    .returning({ id: dashboardSessions.id });
  return row ? token : undefined;
}

/** A session for the key's account and mode (the key has been authenticated by the caller). */
export async function signInWithKey(db: Db, principal: Principal, now = new Date()): Promise<string> {
  const token = randomToken();
  await db.insert(dashboardSessions).values({
    accountId: principal.accountId,
    id: crypto.randomUUID(),
    livemode: principal.livemode,
    keyId: principal.keyId,
    tokenHash: sha256Hex(token),
    createdAt: now,
    expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
  });
  return token;
}

/** The live session behind a cookie's token, or undefined (unknown, expired, signed out, key gone, account suspended). */
export async function findSession(db: Db, token: string, now = new Date()): Promise<DashboardSession | undefined> {
  if (token.length < 40 || token.length > 64) return undefined;
  const [row] = await db
    .select({
      accountId: dashboardSessions.accountId,
      livemode: dashboardSessions.livemode,
      expiresAt: dashboardSessions.expiresAt,
      signedOutAt: dashboardSessions.signedOutAt,
      keyId: dashboardSessions.keyId,
      keyRevokedAt: apiKeyLookups.revokedAt,
      keyExpiresAt: apiKeyLookups.expiresAt,
      keyLivemode: apiKeyLookups.livemode,
      accountName: accounts.name,
      accountStatus: accounts.status,
    })
    .from(dashboardSessions)
    .innerJoin(accounts, eq(accounts.id, dashboardSessions.accountId))
    // Sessions, keys' lookup rows and accounts are all reference tables: one read, on any node.
    .leftJoin(apiKeyLookups, and(eq(apiKeyLookups.accountId, dashboardSessions.accountId), eq(apiKeyLookups.keyId, dashboardSessions.keyId)))
    .where(eq(dashboardSessions.tokenHash, sha256Hex(token)));
  if (!row || row.signedOutAt || row.expiresAt <= now || row.accountStatus !== 'active') return undefined;
  if (row.keyId !== null) {
    if (row.keyLivemode === null || row.keyRevokedAt || (row.keyExpiresAt && row.keyExpiresAt <= now)) return undefined;
  }
  return { accountId: row.accountId, livemode: row.livemode, accountName: row.accountName };
}

export async function signOut(db: Db, token: string, now = new Date()): Promise<void> {
  await db.update(dashboardSessions).set({ signedOutAt: now }).where(eq(dashboardSessions.tokenHash, sha256Hex(token)));
}
