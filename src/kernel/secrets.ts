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

// Random bytes for per-request ids and tokens, taken from a buffer the CSPRNG refills 4 KiB at a
// time: one call into it per hundred or so draws instead of one per draw, which was a measurable
// share of an order's CPU (its checkout token). Each draw is a fresh copy, never handed out twice.
const POOL = Buffer.allocUnsafe(4096);
let poolAt = POOL.length;

/** `size` (at most 4096) random bytes from the pooled CSPRNG output. */
export function pooledRandomBytes(size: number): Buffer {
  if (poolAt + size > POOL.length) {
    crypto.randomFillSync(POOL);
    poolAt = 0;
  }
  const out = Buffer.from(POOL.subarray(poolAt, poolAt + size));
  poolAt += size;
  return out;
}

// One-shot crypto.hash (Node 20.12+): no Hash object per call, and every request hashes its key.
export function sha256Hex(value: string): string {
  return crypto.hash('sha256', value, 'hex');
}

export const API_KEY_PATTERN = /^sk_(test|live)_[0-9A-Za-z]{32,128}$/;

export function newApiKey(livemode: boolean): string {
  return `sk_${livemode ? 'live' : 'test'}_${randomBase62(40)}`;
}

/** Enough of a key for a person to recognise it in a list, never enough to use it. */
export function redactApiKey(key: string): string {
  return `${key.slice(0, 8)}…${key.slice(-4)}`;
}
