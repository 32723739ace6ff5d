// Where detaching a payment method erases its card data. The vault (sealed card records with their
// own data keys, docs/customers.md) is not part of the service yet: this is the one call point it
// fills in, so that every detach (one method, or all of a deleted customer's) already goes through
// it, inside the transaction that marks the method detached.
import type { Executor } from '../../storage/db.js';
import type { RequestContext } from '../../kernel/context.js';

/**
 * Erases the vault record holding a saved card (crypto-shredding: its data key is destroyed).
 * Until the vault lands nothing stores card data under such a record, so there is nothing to erase;
 * the caller clears the method's vault_record_id either way.
 */
export async function eraseCardData(_tx: Executor, _ctx: Pick<RequestContext, 'accountId' | 'livemode'>, _vaultRecordId: string): Promise<void> {}
