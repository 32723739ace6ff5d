// The vault's cryptography (docs/vault.md), two layers of AES-256-GCM through the one sealing
// scheme of src/kernel/encryption.ts: the card under a data key of its own, and that data key
// wrapped by a key-encryption key of VAULT_KEYS. Rotating VAULT_KEYS therefore re-wraps 32-byte
// keys and never touches card data, and destroying one wrapped key makes its card unreadable.
// Both layers bind the record (account, mode, id) as additional data, so a ciphertext or a
// wrapped key copied onto another record does not open there.
import crypto from 'node:crypto';
import { createEncryptor, EncryptionError, type EncryptionKey } from '../kernel/encryption.js';

/** What the vault keeps of a card: never the CVC. */
export interface VaultCard {
  number: string;
  expMonth: number;
  expYear: number;
}

export type VaultErrorCode =
  /** No such record for this account and mode (or a malformed id). */
  | 'record_missing'
  /** The record was erased: its data key is gone, the card cannot be recovered. */
  | 'record_erased'
  /** The record's data key is wrapped by a key VAULT_KEYS no longer names. */
  | 'key_unavailable'
  /** The configured key of that id does not open the data key (a different key under a reused id), or the row was tampered with. */
  | 'key_mismatch'
  /** What was handed to the vault is not a card number and expiry, or not a movement. */
  | 'input_invalid';

/** Everything the vault refuses, typed; messages never carry card data. */
export class VaultError extends Error {
  constructor(
    readonly code: VaultErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'VaultError';
  }
}

/** The record a ciphertext belongs to, as additional authenticated data. */
export interface RecordKey {
  accountId: string;
  livemode: boolean;
  /** The record's UUID. */
  id: string;
}

export interface WrappedKey {
  keyId: string;
  wrappedKey: string;
}

const bound = (layer: 'key' | 'card', r: RecordKey) => `vault-${layer}:${r.accountId}:${r.livemode ? 'live' : 'test'}:${r.id}`;
// The data key's own sealing id: it names no configured key, only the layer.
const DATA_KEY_ID = 'dek';

function translated<T>(work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (!(err instanceof EncryptionError)) throw err;
    if (err.reason === 'unknown_key') throw new VaultError('key_unavailable', err.message);
    throw new VaultError('key_mismatch', `a vault record does not open: ${err.message}`);
  }
}

export interface Sealing {
  /** The id of the first VAULT_KEYS key: new data keys are wrapped by it, rotation moves the others to it. */
  readonly activeKeyId: string;
  /** A new data key for `record`, sealing `card` under it: what a new row stores. */
  seal(record: RecordKey, card: VaultCard): WrappedKey & { sealedCard: string };
  open(record: RecordKey, stored: WrappedKey & { sealedCard: string }): VaultCard;
  /** The same data key, wrapped by the active key instead. */
  rewrap(record: RecordKey, stored: WrappedKey): WrappedKey;
}

export function createSealing(keys: readonly EncryptionKey[]): Sealing {
  const kek = createEncryptor(keys, 'VAULT_KEYS');
  const unwrap = (record: RecordKey, stored: WrappedKey) => translated(() => Buffer.from(kek.decrypt(stored.wrappedKey, bound('key', record)), 'base64'));
  const wrap = (record: RecordKey, dataKey: Buffer): WrappedKey => ({ keyId: kek.activeKeyId, wrappedKey: kek.encrypt(dataKey.toString('base64'), bound('key', record)) });
  const underDataKey = (dataKey: Buffer) => createEncryptor([{ id: DATA_KEY_ID, key: dataKey }], 'the record');
  return {
    activeKeyId: kek.activeKeyId,
    seal(record, card) {
      const dataKey = crypto.randomBytes(32);
      // Only these three fields, whatever else the caller's object carries (a CVC).
      const plaintext = JSON.stringify({ number: card.number, exp_month: card.expMonth, exp_year: card.expYear });
      try {
        return { ...wrap(record, dataKey), sealedCard: underDataKey(dataKey).encrypt(plaintext, bound('card', record)) };
      } finally {
        dataKey.fill(0);
      }
    },
    open(record, stored) {
      const dataKey = unwrap(record, stored);
      try {
        const opened = JSON.parse(translated(() => underDataKey(dataKey).decrypt(stored.sealedCard, bound('card', record))));
        return { number: opened.number, expMonth: opened.exp_month, expYear: opened.exp_year };
      } finally {
        dataKey.fill(0);
      }
    },
    rewrap(record, stored) {
      const dataKey = unwrap(record, stored);
      try {
        return wrap(record, dataKey);
      } finally {
        dataKey.fill(0);
      }
    },
  };
}
