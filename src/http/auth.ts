// Bearer API-key authentication. Keys are looked up by their SHA-256; lookups are cached for at
// most API_KEY_CACHE_TTL_MS, which bounds how long a revoked key or a suspension takes to bite.
// Expiry is judged against the cached expiry time at every request, so a rolled key stops
// exactly on time.
import type { Db } from '../storage/db.js';
import { findPrincipal, type Principal } from '../domain/accounts/service.js';
import { API_KEY_PATTERN, sha256Hex } from '../kernel/secrets.js';
import { ApiError } from '../kernel/errors.js';

export interface Authenticator {
  lookup(keyHash: string): Promise<Principal | undefined>;
}

export function createAuthenticator(db: Db, ttlMs: number, nowMs: () => number = Date.now): Authenticator {
  const cache = new Map<string, { principal: Principal; fetchedAtMs: number }>();
  return {
    async lookup(keyHash) {
      const hit = cache.get(keyHash);
      if (hit && nowMs() - hit.fetchedAtMs < ttlMs) return hit.principal;
      const principal = await findPrincipal(db, keyHash);
      if (principal && ttlMs > 0) {
        if (cache.size >= 10_000) cache.clear();
        cache.set(keyHash, { principal, fetchedAtMs: nowMs() });
      } else {
        cache.delete(keyHash);
      }
      return principal;
    },
  };
}

export async function authenticate(authenticator: Authenticator, header: string | undefined, now = new Date()): Promise<Principal> {
  if (!header) throw new ApiError('api_key_missing');
  // The Bearer scheme with no credential counts as missing; anything after it that is not exactly
  // one well-formed key ("Bearer sk_test_… extra") is a malformed key, not a wrong scheme.
  const match = /^Bearer(?:\s+(.*?))?\s*$/i.exec(header);
  if (!match) {
    throw new ApiError('api_key_missing', { message: 'The Authorization header must use the Bearer scheme: "Authorization: Bearer <key>".' });
  }
  if (!match[1]) throw new ApiError('api_key_missing');
  const key = match[1];
  if (!API_KEY_PATTERN.test(key)) throw new ApiError('api_key_invalid', { message: 'The API key is malformed.' });
  const principal = await authenticator.lookup(sha256Hex(key));
  if (!principal || principal.revokedAt || (principal.expiresAt && principal.expiresAt <= now)) {
    throw new ApiError('api_key_invalid');
  }
  if (principal.accountStatus === 'suspended') throw new ApiError('account_suspended');
  return principal;
}
