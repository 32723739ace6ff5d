// Where detaching a payment method erases its card data, inside the transaction that marks the
// method detached (one method, or all of a deleted customer's): the vault destroys the record's
// data key (crypto-shredding, docs/vault.md), so the card can never be unsealed again.
import type { Executor } from '../../storage/db.js';
import type { Tenancy, Vault } from '../../vault/vault.js';

/**
 * Erases the vault record holding a saved card. A record already erased (a payment that failed
 * erased its in-flight card) is no error; a record of another account or mode is (record_missing).
 */
export async function eraseCardData(tx: Executor, vault: Vault, ctx: Tenancy, vaultRecordId: string): Promise<void> {
  await vault.erase(tx, ctx, vaultRecordId);
}
