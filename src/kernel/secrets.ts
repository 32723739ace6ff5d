// Random secrets and their one-way digests.
import crypto from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 string: bytes at or above 248 (= 4 × 62) are rejected so no character is favoured. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function sha256Hex(value: string): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}

export const API_KEY_PATTERN = /^sk_(test|live)_[0-9A-Za-z]{32,128}$/;

export function newApiKey(livemode: boolean): string {
  return `sk_${livemode ? 'live' : 'test'}_${randomBase62(40)}`;
}

/** Enough of a key for a person to recognise it in a list, never enough to use it. */
export function redactApiKey(key: string): string {
  return `${key.slice(0, 8)}…${key.slice(-4)}`;
}
