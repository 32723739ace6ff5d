// The hosted checkout's token: the order's account, then 256 random bits. The customer's browser
// holds nothing else, and the orders are distributed by account (docs/operations.md#distributing-by-account-citus),
// so the token names the account the order is found in; the secret part is what admits the
// browser, and a token whose account part is changed finds nothing. Tokens made before migration
// 0029 are the secret part alone: checkout_token_routes names their accounts.
import { pooledRandomBytes } from '../../kernel/secrets.js';
import { uuidText } from '../../kernel/ids.js';

const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const ACCOUNT_PATTERN = /^[A-Za-z0-9_-]{22}$/;

/** A new token for an order of `accountId` (a UUID). */
export function newCheckoutToken(accountId: string): string {
  const account = Buffer.from(accountId.replace(/-/g, ''), 'hex').toString('base64url');
  return `${account}.${pooledRandomBytes(32).toString('base64url')}`;
}

/**
 * What a token says: the account (a UUID) it names, null for a token made before the account was
 * part of it; undefined for anything that is not a token at all (never looked up).
 */
export function checkoutTokenAccount(token: string): string | null | undefined {
  const dot = token.indexOf('.');
  if (dot < 0) return SECRET_PATTERN.test(token) ? null : undefined;
  const account = token.slice(0, dot);
  if (!ACCOUNT_PATTERN.test(account) || !SECRET_PATTERN.test(token.slice(dot + 1))) return undefined;
  const bytes = Buffer.from(account, 'base64url');
  return bytes.length === 16 ? uuidText(bytes) : undefined;
}
