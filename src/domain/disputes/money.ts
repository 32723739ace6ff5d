// A dispute's money. When the processor withdraws the disputed funds, the amount and the account's
// dispute fee leave the merchant's balance (the payment's own pending money first, then available,
// which may go negative: the money is gone whatever the balance says). When it gives them back (a
// won dispute), the amount returns to available, and the fee too where the processor gives its own
// back (DISPUTE_FEE_RETURNED_BY). A lost or accepted dispute leaves them out.
import type { Executor } from '../../storage/db.js';
import type { RequestContext } from '../../kernel/context.js';
import { isAccountKey } from '../../connectors/router.js';
import { processorOfAccount } from '../../connectors/account-credentials.js';
import { disputeReinstated } from '../../ledger/journal.js';
import { takenBack } from '../../ledger/settlement.js';
import type { Runtime } from '../../runtime.js';
import { termsFor } from '../terms/service.js';
import { saveDispute, type DisputeRow } from './transitions.js';

function entry(row: DisputeRow, now: Date) {
  return { accountId: row.accountId, livemode: row.livemode, currency: row.currency, amount: row.amount, source: { type: 'dispute' as const, id: row.id }, createdAt: now };
}

/** Whether the processor behind the dispute's route key gives its dispute fee back when the merchant wins. */
async function returnsFeeWhenWon(tx: Executor, rt: Runtime, row: DisputeRow): Promise<boolean> {
  const name = isAccountKey(row.connector) ? await processorOfAccount(tx, row.connector, row) : row.connector;
  if (name === undefined) return false;
  const processor = name.startsWith('simulator') ? 'simulator' : name;
  return rt.config.disputeFeeReturnedBy.includes(processor);
}

/**
 * Brings the balance in line with what the processor reported: its funds out while it has taken
 * them more often than it gave them back, in otherwise. `withdrawals` and `reinstatements` are the
 * most either report said, so the same reports in any order end in the same bookings.
 */
export async function settleFunds(tx: Executor, rt: Runtime, ctx: RequestContext, row: DisputeRow, reported: { withdrawals: number; reinstatements: number }, now: Date): Promise<DisputeRow> {
  const withdrawals = Math.max(row.withdrawals, reported.withdrawals);
  const reinstatements = Math.max(row.reinstatements, reported.reinstatements);
  const out = withdrawals > reinstatements;
  const counts = { withdrawals, reinstatements };
  if (out && !row.fundsBooked) {
    // The fee is charged once per dispute, at its first withdrawal.
    const fee = row.withdrawals === 0 && row.fee === 0 ? (await termsFor(tx, row.accountId, 'card', row.currency)).disputeFee : 0;
    await takenBack(tx, entry(row, now), row.paymentId, 'dispute_withdrawal', { returned: 0, charged: fee });
    return saveDispute(tx, ctx, row, { ...counts, fundsBooked: true, fee: row.fee + fee }, 'dispute.funds_withdrawn', now);
  }
  if (!out && row.fundsBooked) {
    const feeBack = row.fee > 0 && !row.feeReturned && (await returnsFeeWhenWon(tx, rt, row)) ? row.fee : 0;
    await disputeReinstated(tx, entry(row, now), feeBack);
    return saveDispute(tx, ctx, row, { ...counts, fundsBooked: false, feeReturned: row.feeReturned || feeBack > 0 }, 'dispute.funds_reinstated', now);
  }
  if (withdrawals === row.withdrawals && reinstatements === row.reinstatements) return row;
  return saveDispute(tx, ctx, row, counts, null, now);
}
