// Argument checks for the CLI. Every flag is validated before the database is opened, so a typo
// costs nothing and never touches data.
import { parseId, type IdPrefix } from '../kernel/ids.js';

/** A mistake in how the command was called: printed as `error: ...`, exit code 2. */
export class UsageError extends Error {}

const ID_KINDS: Partial<Record<IdPrefix, string>> = { acct: 'an account id', key: 'a key id' };

export function requireId(prefix: IdPrefix, value: string, what: string): string {
  if (!parseId(prefix, value)) {
    throw new UsageError(`${what} must be ${ID_KINDS[prefix] ?? 'an id'} (${prefix}_ followed by 26 characters), got ${JSON.stringify(value)}`);
  }
  return value;
}

export function requireText(flag: string, value: string, maxLength = 200): string {
  const trimmed = value.trim();
  if (trimmed === '') throw new UsageError(`--${flag} must not be empty`);
  if (trimmed.length > maxLength) throw new UsageError(`--${flag} must be at most ${maxLength} characters, got ${trimmed.length}`);
  // Control characters would end up in JSON output and logs; they are never part of a useful name.
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw new UsageError(`--${flag} must not contain control characters`);
  return trimmed;
}

/** A whole number in [min, max], written in plain decimal digits (no sign, exponent or fraction). */
export function requireInteger(flag: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`--${flag} must be a whole number, got ${JSON.stringify(value)}`);
  const n = Number(value);
  if (n < min || n > max) throw new UsageError(`--${flag} must be between ${min} and ${max}, got ${value}`);
  return n;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/**
 * An RFC 3339 timestamp with an explicit offset (`2026-11-21T10:00:00Z`, `...+02:00`). Out-of-range
 * fields (February 30th, hour 24) are refused rather than rolled over as `Date.parse` would.
 */
export function parseRfc3339(flag: string, value: string): Date {
  const m = RFC3339.exec(value);
  const fail = () =>
    new UsageError(`--${flag} must be an RFC 3339 timestamp with a time zone, such as 2026-11-21T10:00:00Z, got ${JSON.stringify(value)}`);
  if (!m) throw fail();
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const offsetH = m[10] === undefined ? 0 : Number(m[10]);
  const offsetM = m[11] === undefined ? 0 : Number(m[11]);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59 || offsetH > 23 || offsetM > 59) {
    throw fail();
  }
  const date = new Date(value.replace(' ', 'T'));
  if (Number.isNaN(date.getTime())) throw fail();
  return date;
}

export function requireFuture(flag: string, date: Date, now: Date): Date {
  if (date.getTime() <= now.getTime()) {
    throw new UsageError(`--${flag} must be in the future, got ${date.toISOString()} (now is ${now.toISOString()})`);
  }
  return date;
}

/** Where a command that talks to the API sends its requests, and with which key: flags first, then $API_KEY and $API_URL. */
export function apiTarget(values: { 'api-key'?: string; 'api-url'?: string }, env: NodeJS.ProcessEnv): { apiKey: string; apiUrl: string } {
  // The environment first: a key on the command line shows in `ps`.
  const apiKey = env.API_KEY || values['api-key'];
  if (!apiKey) throw new UsageError('set API_KEY to the key to use (sk_test_…), or give --api-key');
  const apiUrl = (values['api-url'] ?? env.API_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
  if (!URL.canParse(apiUrl)) throw new UsageError('--api-url must be a URL');
  return { apiKey, apiUrl };
}
