// Encryption at rest for values the service must read back (webhook signing secrets, bank account
// numbers; the card vault's data keys under VAULT_KEYS, src/vault): AES-256-GCM with a fresh 96-bit nonce per value and the id of the key that sealed it
// stored beside the ciphertext, so keys can be rotated — the first configured key seals, every
// configured key opens. A context string (e.g. the owning row) is bound as additional
// authenticated data, so a ciphertext copied into another row does not decrypt there.
//
// Sealed form: `v1.<key id>.<nonce>.<ciphertext>.<tag>` (base64url parts).
import crypto from 'node:crypto';

export interface EncryptionKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

/** Why a value did not open: not a sealed value, a key id not configured, or no match (wrong key bytes, tampered, moved). */
export type EncryptionFailure = 'malformed' | 'unknown_key' | 'no_match';

export class EncryptionError extends Error {
  constructor(
    message: string,
    readonly reason: EncryptionFailure = 'malformed',
  ) {
    super(message);
  }
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Used when ENCRYPTION_KEYS is unset, so that `npm start` works out of the box. It is printed in
 * this source file, so it protects nothing: production must configure its own keys.
 */
export const DEVELOPMENT_KEY: EncryptionKey = {
  id: 'dev',
  key: crypto.createHash('sha256').update('payment-orchestrator development key: NOT SECRET, NOT FOR PRODUCTION').digest(),
};

/** The vault's counterpart of DEVELOPMENT_KEY (VAULT_KEYS unset outside production): as public. */
export const DEVELOPMENT_VAULT_KEY: EncryptionKey = {
  id: 'dev-vault',
  key: crypto.createHash('sha256').update('payment-orchestrator development vault key: NOT SECRET, NOT FOR PRODUCTION').digest(),
};

/** Parses `id:base64key,id:base64key,…` (first = active). Throws EncryptionError on anything malformed. */
export function parseEncryptionKeys(raw: string): EncryptionKey[] {
  const keys = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const colon = part.indexOf(':');
      const id = colon === -1 ? '' : part.slice(0, colon);
      if (!KEY_ID.test(id)) throw new EncryptionError('each key must look like <id>:<base64 of 32 bytes>, the id 1-32 of [A-Za-z0-9_-]');
      const key = Buffer.from(part.slice(colon + 1), 'base64');
      if (key.length !== 32) throw new EncryptionError(`key ${id} must be 32 bytes (base64), got ${key.length}`);
      return { id, key };
    });
  if (keys.length === 0) throw new EncryptionError('at least one key is needed');
  if (new Set(keys.map((k) => k.id)).size !== keys.length) throw new EncryptionError('key ids must be unique');
  return keys;
}

export interface Encryptor {
  readonly activeKeyId: string;
  encrypt(plaintext: string, context: string): string;
  decrypt(sealed: string, context: string): string;
}

/** The id of the key a value was sealed with, without opening it (undefined: not a sealed value). */
export function sealedKeyId(sealed: string): string | undefined {
  const [version, keyId] = sealed.split('.');
  return version === 'v1' && keyId ? keyId : undefined;
}

/** `setting` names where the keys come from, for the message when a value's key is not among them. */
export function createEncryptor(keys: readonly EncryptionKey[], setting = 'ENCRYPTION_KEYS'): Encryptor {
  if (keys.length === 0) throw new EncryptionError('at least one key is needed');
  const active = keys[0]!;
  const byId = new Map(keys.map((k) => [k.id, k.key]));
  return {
    activeKeyId: active.id,
    encrypt(plaintext, context) {
      const nonce = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', active.key, nonce);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const parts = [nonce, ciphertext, cipher.getAuthTag()].map((b) => b.toString('base64url'));
      return ['v1', active.id, ...parts].join('.');
    },
    decrypt(sealed, context) {
      const [version, keyId, nonce, ciphertext, tag, ...rest] = sealed.split('.');
      if (version !== 'v1' || keyId === undefined || tag === undefined || rest.length) throw new EncryptionError('not a sealed value');
      const key = byId.get(keyId);
      if (!key) throw new EncryptionError(`sealed with key ${keyId}, which is not configured (${setting})`, 'unknown_key');
      try {
        const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(nonce!, 'base64url'));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext!, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new EncryptionError('the value does not decrypt with its key and context (tampered, or moved from another row)', 'no_match');
      }
    },
  };
}
