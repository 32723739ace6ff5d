// Public identifiers are TypeIDs (`ord_01h...`); the database stores the UUIDv7 inside, which keeps
// keys 16 bytes wide and time-ordered, so "newest first" is an index scan on the id.
import { fromString, toUUID } from 'typeid-js';
import { pooledRandomBytes } from './secrets.js';

export const ID_PREFIXES = {
  paymentOrder: 'ord',
  payment: 'pay',
  refund: 'ref',
  capture: 'cap',
  dispute: 'dp',
  disputeResponse: 'dpr',
  payout: 'po',
  beneficiary: 'ben',
  mandate: 'mdt',
  customer: 'cus',
  paymentMethod: 'pm',
  event: 'evt',
  webhookEndpoint: 'we',
  connectorAccount: 'ca',
  balanceTransaction: 'txn',
  webhookDeliveryAttempt: 'wda',
  webhookTestObject: 'wht',
  account: 'acct',
  apiKey: 'key',
  request: 'req',
  vaultRecord: 'vr',
  void: 'void',
  reconciliationRun: 'rec',
} as const;

export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];

// UUIDv7 (RFC 9562, method 1 of section 6.2): 48 bits of Unix milliseconds, then a 31-bit counter
// that starts at random each millisecond and counts up within it (so ids made by one process are
// strictly increasing), then random bits. Made here rather than through typeid-js, which checks
// its own output by decoding it and leaves the UUID text to decode once more: every request makes
// a few ids, and that was a measurable share of a request's CPU.
let lastMs = 0;
let counter = 0;

function uuidV7Bytes(): Buffer {
  const b = pooledRandomBytes(16);
  const now = Date.now();
  // A clock that stands still or steps back keeps counting on the last millisecond seen.
  if (now > lastMs) {
    lastMs = now;
    counter = b.readUInt32BE(6) & 0x3fffffff;
  } else if (++counter > 0x7fffffff) {
    lastMs++;
    counter = b.readUInt32BE(6) & 0x3fffffff;
  }
  b.writeUIntBE(lastMs, 0, 6);
  b[6] = 0x70 | ((counter >>> 27) & 0x0f);
  b[7] = (counter >>> 19) & 0xff;
  b[8] = 0x80 | ((counter >>> 13) & 0x3f);
  b[9] = (counter >>> 5) & 0xff;
  b[10] = ((counter << 3) & 0xf8) | (b[10]! & 0x07);
  return b;
}

/** 16 bytes as UUID text. */
export function uuidText(b: Buffer): string {
  const x = b.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** A new id's UUID alone, for rows whose public id is never shown when made (no TypeID to encode). */
export function newUuid(): string {
  return uuidText(uuidV7Bytes());
}

// A TypeID's suffix: the 128 bits in Crockford's base32 (lower case), 26 characters, the first
// holding the top 3 bits. Encoded here rather than by typeid-js, which builds an array of 26
// one-character strings and joins it: every answer encodes several ids. Ten bits at a time, from a
// table of every pair of characters. typeid-js still decodes (parseId), and
// test/api/ids.units.test.ts checks the two agree.
const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';
const BASE32_PAIRS = Array.from({ length: 1024 }, (_, v) => BASE32[v >> 5]! + BASE32[v & 31]!);

function typeIdSuffix(b: Uint8Array): string {
  // The first byte is the top 3 bits and the next 5: one pair. Then three groups of 5 bytes.
  let s = BASE32_PAIRS[b[0]!]!;
  for (let i = 1; i < 16; i += 5) {
    const hi = b[i]!;
    const lo = ((b[i + 1]! << 24) | (b[i + 2]! << 16) | (b[i + 3]! << 8) | b[i + 4]!) >>> 0;
    s += BASE32_PAIRS[(hi << 2) | (lo >>> 30)]! + BASE32_PAIRS[(lo >>> 20) & 1023]! + BASE32_PAIRS[(lo >>> 10) & 1023]! + BASE32_PAIRS[lo & 1023]!;
  }
  return s;
}

const NIBBLE = new Uint8Array(128);
for (const [i, c] of [...'0123456789abcdef'].entries()) NIBBLE[c.charCodeAt(0)] = NIBBLE[c.toUpperCase().charCodeAt(0)] = i;
const uuidBytes = new Uint8Array(16);

/** A UUID's 16 bytes, from its text as the database gives it (never a caller's input), into one reused array. */
function bytesOfUuid(uuid: string): Uint8Array {
  for (let k = 0, j = 0; k < 16; k++, j += 2) {
    if (uuid.charCodeAt(j) === 45) j++;
    uuidBytes[k] = (NIBBLE[uuid.charCodeAt(j)]! << 4) | NIBBLE[uuid.charCodeAt(j + 1)]!;
  }
  return uuidBytes;
}

export function newId(prefix: IdPrefix): { id: string; uuid: string } {
  const bytes = uuidV7Bytes();
  return { id: `${prefix}_${typeIdSuffix(bytes)}`, uuid: uuidText(bytes) };
}

export function toPublicId(prefix: IdPrefix, uuid: string): string {
  return `${prefix}_${typeIdSuffix(bytesOfUuid(uuid))}`;
}

/** The UUID inside `id`, or undefined when it is malformed or carries another prefix. */
export function parseId(prefix: IdPrefix, id: string): string | undefined {
  if (!id.startsWith(`${prefix}_`)) return undefined;
  try {
    return toUUID(fromString(id, prefix));
  } catch {
    return undefined;
  }
}

/** The fields every API object opens with, in the documented order: its public id, its type, its mode. */
export function objectHead<O extends string>(prefix: IdPrefix, object: O, row: { id: string; livemode: boolean }) {
  return { id: toPublicId(prefix, row.id), object, livemode: row.livemode };
}
