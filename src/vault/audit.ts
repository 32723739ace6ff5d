// The audit log of the vault (`npm run cli -- vault audit`, docs/vault.md): every unsealing, which
// record, for which movement, when. An operator's view across accounts; never served by the API.
import { desc, eq } from 'drizzle-orm';
import { toPublicId } from '../kernel/ids.js';
import type { Db } from '../storage/db.js';
import { vaultUnsealings } from '../storage/schema.js';

export interface Unsealing {
  record: string;
  account: string;
  livemode: boolean;
  movement: { type: string; id: string };
  unsealed_at: string;
}

export const DEFAULT_AUDIT_LIMIT = 100;

/** Unsealings newest first; `recordUuid` narrows them to one record. */
export async function listUnsealings(db: Db, opts: { recordUuid?: string; limit?: number } = {}): Promise<Unsealing[]> {
  const rows = await db
    .select()
    .from(vaultUnsealings)
    .where(opts.recordUuid === undefined ? undefined : eq(vaultUnsealings.recordId, opts.recordUuid))
    .orderBy(desc(vaultUnsealings.id))
    .limit(opts.limit ?? DEFAULT_AUDIT_LIMIT);
  return rows.map((row) => ({
    record: toPublicId('vr', row.recordId),
    account: toPublicId('acct', row.accountId),
    livemode: row.livemode,
    movement: { type: row.movementType, id: row.movementId },
    unsealed_at: row.unsealedAt.toISOString(),
  }));
}
