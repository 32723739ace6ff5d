// Helps the vault tests (lifecycle/vault, operations/cli.vault): key-encryption keys, a tenancy
// from a test tenant, and reading the stored rows as the database holds them.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { parseId } from '../../src/kernel/ids.js';
import type { EncryptionKey } from '../../src/kernel/encryption.js';
import type { Tenancy } from '../../src/vault/vault.js';
import type { DatabaseFixture } from './fixtures.js';

export const kek = (id: string): EncryptionKey => ({ id, key: crypto.randomBytes(32) });
export const asSetting = (keys: EncryptionKey[]) => keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(',');

export const CARD = { number: '4242424242424242', expMonth: 12, expYear: 2034, cvc: '737' };

export async function tenancy(h: DatabaseFixture, livemode = false): Promise<Tenancy> {
  const tenant = await h.createTenant();
  return { accountId: parseId('acct', tenant.accountId)!, livemode };
}

/** The stored row of a record, every column as text. */
export async function storedRecord(h: DatabaseFixture, recordId: string): Promise<Record<string, string | null>> {
  const [row] = await h.query(sql`SELECT v.*, row_to_json(v)::text AS everything FROM vault_records v WHERE id = ${parseId('vr', recordId)!}`);
  return row as Record<string, string | null>;
}
