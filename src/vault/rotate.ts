// Key rotation (`npm run cli -- vault rotate`, docs/vault.md): every data key not wrapped by the
// first VAULT_KEYS key is unwrapped and wrapped again by it; card ciphertexts stay as they are.
// Each batch is its own transaction, so an interrupted rotation keeps what it committed and the
// next run picks up the rows still under an older key (those already moved are not selected).
// SKIP LOCKED lets two runs share the work instead of waiting on each other.
import { and, eq, isNotNull, ne, sql } from 'drizzle-orm';
import { toPublicId } from '../kernel/ids.js';
import type { Db } from '../storage/db.js';
import { vaultRecords } from '../storage/schema.js';
import { VaultError, type Sealing } from './sealing.js';

export interface RotationOptions {
  /** Records re-wrapped per transaction (default 500). */
  batchSize?: number;
  /** Stop after this many batches (default: until none is left); run again to continue. */
  maxBatches?: number;
}

export interface RotationReport {
  /** The key every re-wrapped data key is now under. */
  active_key: string;
  rewrapped: number;
  batches: number;
  /** Records whose data key is still under another key (0 when the rotation is complete). */
  remaining: number;
  complete: boolean;
}

export const DEFAULT_ROTATION_BATCH = 500;

const underOlderKey = (active: string) => and(isNotNull(vaultRecords.wrappedKey), ne(vaultRecords.keyId, active));

async function rotateBatch(db: Db, sealing: Sealing, batchSize: number): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = await tx
      .select({ accountId: vaultRecords.accountId, livemode: vaultRecords.livemode, id: vaultRecords.id, keyId: vaultRecords.keyId, wrappedKey: vaultRecords.wrappedKey })
      .from(vaultRecords)
      .where(underOlderKey(sealing.activeKeyId))
      .limit(batchSize)
      .for('update', { skipLocked: true });
    for (const row of rows) {
      let rewrapped;
      try {
        rewrapped = sealing.rewrap(row, { keyId: row.keyId!, wrappedKey: row.wrappedKey! });
      } catch (err) {
        if (!(err instanceof VaultError)) throw err;
        const record = toPublicId('vr', row.id);
        throw new VaultError(err.code, `vault record ${record} (data key under key ${row.keyId}) cannot be re-wrapped: ${err.message}; keep that key in VAULT_KEYS until rotation completes`);
      }
      await tx
        .update(vaultRecords)
        .set({ ...rewrapped, rewrappedAt: sql`now()` })
        .where(and(eq(vaultRecords.accountId, row.accountId), eq(vaultRecords.livemode, row.livemode), eq(vaultRecords.id, row.id), eq(vaultRecords.keyId, row.keyId!)));
    }
    return rows.length;
  });
}

export async function rotateDataKeys(db: Db, sealing: Sealing, opts: RotationOptions = {}): Promise<RotationReport> {
  const batchSize = opts.batchSize ?? DEFAULT_ROTATION_BATCH;
  const maxBatches = opts.maxBatches ?? Number.POSITIVE_INFINITY;
  let rewrapped = 0;
  let batches = 0;
  while (batches < maxBatches) {
    const moved = await rotateBatch(db, sealing, batchSize);
    if (moved === 0) break;
    rewrapped += moved;
    batches++;
    if (moved < batchSize) break;
  }
  const [left] = await db.select({ n: sql<number>`count(*)::int` }).from(vaultRecords).where(underOlderKey(sealing.activeKeyId));
  const remaining = left?.n ?? 0;
  return { active_key: sealing.activeKeyId, rewrapped, batches, remaining, complete: remaining === 0 };
}
