// The ledger effects that depend on an account's terms, for the movements' transition tables:
// a succeeded payment's fee and settlement date, the fee a succeeded refund gives back, a failed
// payout's fee coming back. Each reads the terms in the movement's own transaction.
import { and, eq, ne } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { payments, refunds } from '../../storage/schema.js';
import { bookPayment, feeOf, feeReturnedBy } from '../../ledger/settlement.js';
import { payoutReleased, refundSettled } from '../../ledger/journal.js';
import { feeReturnedFor } from '../../ledger/fees.js';
import { ledgerEntry } from '../../movement/transition.js';
import { isMandateMethod } from '../mandates/debits.js';
import { paymentBooking, termsFor } from './service.js';

interface Money {
  accountId: string;
  livemode: boolean;
  currency: string;
  amount: number;
  id: string;
}

/** A payment succeeded: booked with its fee, its net pending until its settlement date (or available at once on T+0). */
export async function bookSucceededPayment(tx: Executor, payment: Money, method: 'card' | 'mandate', now: Date): Promise<void> {
  const booking = await paymentBooking(tx, payment.accountId, method, payment.currency, payment.amount, now);
  await bookPayment(tx, ledgerEntry('payment', payment, now), booking);
}

/**
 * A refund succeeded: the reserved amount leaves and, when the terms return fees, the share of the
 * payment's fee that all its succeeded refunds so far stand for, less what earlier ones gave back.
 */
export async function bookSucceededRefund(tx: Executor, refund: Money & { paymentId: string }, now: Date): Promise<void> {
  await refundSettled(tx, ledgerEntry('refund', refund, now), await feeToReturn(tx, refund));
}

async function feeToReturn(tx: Executor, refund: Money & { paymentId: string }): Promise<number> {
  // Locked: two refunds of one payment succeeding at once must not both give back the same share.
  const [payment] = await tx
    .select({ amount: payments.amount, method: payments.paymentMethod })
    .from(payments)
    .where(and(eq(payments.accountId, refund.accountId), eq(payments.id, refund.paymentId)))
    .for('update');
  if (!payment) return 0;
  const method = isMandateMethod(payment.method) ? 'mandate' : 'card';
  if (!(await termsFor(tx, refund.accountId, method, refund.currency)).refundsReturnFee) return 0;
  const fee = await feeOf(tx, refund.accountId, 'payment', refund.paymentId);
  if (fee === 0) return 0;
  const earlier = await tx
    .select({ id: refunds.id, amount: refunds.amount })
    .from(refunds)
    .where(and(eq(refunds.accountId, refund.accountId), eq(refunds.paymentId, refund.paymentId), eq(refunds.status, 'succeeded'), ne(refunds.id, refund.id)));
  const refundedBefore = earlier.reduce((sum, r) => sum + r.amount, 0);
  const returnedBefore = await feeReturnedBy(
    tx,
    refund.accountId,
    earlier.map((r) => r.id),
  );
  return feeReturnedFor(fee, payment.amount, refundedBefore + refund.amount) - returnedBefore;
}

/** A payout failed or was cancelled: its amount and the fee it was charged return to available. */
export async function bookReleasedPayout(tx: Executor, payout: Money, now: Date): Promise<void> {
  await payoutReleased(tx, ledgerEntry('payout', payout, now), await feeOf(tx, payout.accountId, 'payout', payout.id));
}
