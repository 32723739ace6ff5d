// The card vault (docs/vault.md): the one way card numbers and expiry dates are kept and read
// back. A card is sealed into a record of one account and mode; it is unsealed only for a movement
// (a payment, a verification), and every unsealing leaves an audit row, written by the very
// statement that reads the sealed card; erasing a record destroys its data key (crypto-shredding).
// Nothing else reads vault_records.
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import { rawQuery, type RawStatement } from '../storage/raw.js';
import type { RequestContext } from '../kernel/context.js';
import type { EncryptionKey } from '../kernel/encryption.js';
import { newId, parseId } from '../kernel/ids.js';
import type { Db, Executor } from '../storage/db.js';
import { vaultRecords, vaultUnsealings } from '../storage/schema.js';
import { createSealing, VaultError, type RecordKey, type VaultCard } from './sealing.js';
import { rotateDataKeys, type RotationOptions, type RotationReport } from './rotate.js';

export { VaultError, type VaultCard, type VaultErrorCode } from './sealing.js';
export type { RotationOptions, RotationReport } from './rotate.js';

export type VaultPurpose = (typeof vaultRecords.purpose.enumValues)[number];
export const VAULT_PURPOSES: readonly VaultPurpose[] = vaultRecords.purpose.enumValues;

/** What a card is unsealed for: the movement whose processor request needs it (e.g. `{ type: 'payment', id: 'pay_…' }`). */
export interface VaultMovement {
  type: string;
  id: string;
}

export type Tenancy = Pick<RequestContext, 'accountId' | 'livemode'>;

export interface Vault {
  /** The id of the VAULT_KEYS key new data keys are wrapped by. */
  readonly activeKeyId: string;
  /** Seals the card's number and expiry (never its CVC) into a new record; answers its id (`vr_…`). */
  seal(tx: Executor, ctx: Tenancy, card: VaultCard, purpose: VaultPurpose): Promise<string>;
  /**
   * The card of a record of this account and mode, recording the unsealing for `movement` in the
   * same statement (inside a caller's transaction, a rollback takes both back). Throws
   * VaultError: record_missing, record_erased, key_unavailable, key_mismatch, input_invalid.
   */
  unseal(tx: Executor, ctx: Tenancy, recordId: string, movement: VaultMovement): Promise<VaultCard>;
  /** Destroys the record's data key and ciphertext; true when it did, false when already erased. Throws record_missing. */
  erase(tx: Executor, ctx: Tenancy, recordId: string): Promise<boolean>;
  /** Re-wraps every data key not under the active key by it, in batches (`vault rotate`). */
  rotate(db: Db, opts?: RotationOptions): Promise<RotationReport>;
}

const MOVEMENT_TYPE = /^[a-z][a-z_]{0,39}$/;
const MOVEMENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

function checkCard(card: VaultCard): void {
  const valid =
    /^\d{12,19}$/.test(card.number) &&
    Number.isInteger(card.expMonth) && card.expMonth >= 1 && card.expMonth <= 12 &&
    Number.isInteger(card.expYear) && card.expYear >= 2000 && card.expYear <= 9999;
  if (!valid) throw new VaultError('input_invalid', 'the vault seals a card number of 12 to 19 digits with exp_month 1-12 and a four-digit exp_year');
}

function recordKey(ctx: Tenancy, recordId: string): RecordKey {
  const id = parseId('vr', recordId);
  if (!id) throw new VaultError('record_missing', `no vault record ${JSON.stringify(recordId.slice(0, 40))} (not a vr_ id)`);
  return { accountId: ctx.accountId, livemode: ctx.livemode, id };
}

/**
 * A record's sealed card and the audit row of its unsealing, in one statement: no sealed card
 * leaves the database without the row naming its movement. An erased record, or one sealed under
 * a key this process does not hold ($6, the configured key ids), gets no row: nothing can open it.
 * The log is append-only: a card that then does not open all the same (another key under the same
 * id, a moved ciphertext) keeps its row, the trace of that attempt.
 */
const UNSEAL: RawStatement = {
  name: 'vault_unseal_v2',
  text: `WITH record AS (
  SELECT key_id, wrapped_key, sealed_card FROM vault_records WHERE account_id = $1 AND livemode = $2 AND id = $3
), audit AS (
  INSERT INTO vault_unsealings (account_id, livemode, record_id, movement_type, movement_id, unsealed_at)
  SELECT $1, $2, $3, $4::text, $5::text, clock_timestamp() FROM record
  WHERE key_id = ANY($6::text[]) AND wrapped_key IS NOT NULL AND sealed_card IS NOT NULL
)
SELECT key_id, wrapped_key, sealed_card FROM record`,
};

type Unsealed = { key_id: string | null; wrapped_key: string | null; sealed_card: string | null };

const ownRecord = (r: RecordKey) => and(eq(vaultRecords.accountId, r.accountId), eq(vaultRecords.livemode, r.livemode), eq(vaultRecords.id, r.id));

/**
 * Vault.erase without the keys, which erasing does not need: for the outcome of a payment (its
 * transition effects run where no runtime is at hand) that erases its in-flight card.
 */
export async function eraseRecord(tx: Executor, ctx: Tenancy, recordId: string): Promise<boolean> {
  const record = recordKey(ctx, recordId);
  const erased = await tx
    .update(vaultRecords)
    .set({ keyId: null, wrappedKey: null, sealedCard: null, erasedAt: sql`now()` })
    .where(and(ownRecord(record), isNotNull(vaultRecords.wrappedKey)))
    .returning({ id: vaultRecords.id });
  if (erased.length > 0) return true;
  const [exists] = await tx.select({ id: vaultRecords.id }).from(vaultRecords).where(ownRecord(record));
  if (!exists) throw new VaultError('record_missing', `no vault record ${recordId} for this account and mode`);
  return false;
}

export function createVault(keys: readonly EncryptionKey[]): Vault {
  const sealing = createSealing(keys);
  const keyIds = keys.map((k) => k.id);
  return {
    activeKeyId: sealing.activeKeyId,

    async seal(tx, ctx, card, purpose) {
      checkCard(card);
      if (!VAULT_PURPOSES.includes(purpose)) throw new VaultError('input_invalid', `purpose must be one of ${VAULT_PURPOSES.join(', ')}`);
      const { id, uuid } = newId('vr');
      const sealed = sealing.seal({ accountId: ctx.accountId, livemode: ctx.livemode, id: uuid }, card);
      await tx.insert(vaultRecords).values({ accountId: ctx.accountId, livemode: ctx.livemode, id: uuid, purpose, ...sealed });
      return id;
    },

    async unseal(tx, ctx, recordId, movement) {
      if (!MOVEMENT_TYPE.test(movement?.type ?? '') || !MOVEMENT_ID.test(movement?.id ?? '')) {
        throw new VaultError('input_invalid', 'a card is unsealed only for a movement: { type: a lower-case name, id: its public id }');
      }
      const record = recordKey(ctx, recordId);
      const [row] = await rawQuery<Unsealed>(tx, UNSEAL, [record.accountId, record.livemode, record.id, movement.type, movement.id, keyIds]);
      if (!row) throw new VaultError('record_missing', `no vault record ${recordId} for this account and mode`);
      if (row.key_id === null || row.wrapped_key === null || row.sealed_card === null) {
        throw new VaultError('record_erased', `vault record ${recordId} was erased; its card cannot be recovered`);
      }
      // A key not held throws key_unavailable here, and the statement wrote no row for it.
      return sealing.open(record, { keyId: row.key_id, wrappedKey: row.wrapped_key, sealedCard: row.sealed_card });
    },

    erase: eraseRecord,

    rotate: (db, opts) => rotateDataKeys(db, sealing, opts),
  };
}
