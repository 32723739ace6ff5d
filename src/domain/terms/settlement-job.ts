// The worker's settlement job: pending money whose available_on has come moves to available, in
// one journal entry per payment, with its balance.available event. Each row is claimed, moved and
// closed in one transaction (FOR UPDATE SKIP LOCKED): a worker that dies before committing leaves
// the row as it was for the next pass, and concurrent workers never take the same row, so each
// payment's money moves exactly once.
import type { Db } from '../../storage/db.js';
import { claimDueSettlement, settle } from '../../ledger/settlement.js';
import { transactionView } from '../../ledger/balance.js';
import { recordEvent, systemContext } from '../../events/service.js';

/** Settles up to `batch` due rows; answers how many moved money. */
export async function runSettlements(db: Db, now: Date, batch = 200): Promise<number> {
  let moved = 0;
  for (let claimed = 0; claimed < batch; claimed++) {
    const done = await db.transaction(async (tx) => {
      const row = await claimDueSettlement(tx, now);
      if (!row) return 'none' as const;
      const entryId = await settle(tx, row, now);
      if (entryId === null) return 'closed' as const;
      const view = transactionView(
        { accountId: row.accountId, id: entryId, livemode: row.livemode, type: 'settlement', currency: row.currency, sourceType: 'payment', sourceId: row.paymentId, description: null, createdAt: now },
        [
          { ledgerAccount: 'merchant_pending', amount: row.amount },
          { ledgerAccount: 'merchant_available', amount: -row.amount },
        ],
      );
      await recordEvent(tx, systemContext(row.accountId, row.livemode), 'balance.available', view, now);
      return 'moved' as const;
    });
    if (done === 'none') break;
    if (done === 'moved') moved++;
  }
  return moved;
}
