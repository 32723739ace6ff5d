// The one place where a payout's state changes after it was created, whoever learnt the news: the
// submission (worker or right after create), a status check, the bank's webhook, a test helper,
// or the merchant cancelling. Inside the caller's transaction with the payout row locked: the
// payout moves as the transition table allows, the ledger follows (paid: the reserved amount
// leaves; failed or cancelled: it returns to available; returned: it comes back to available), and
// every change writes its event. Late and repeated reports of a settled outcome change nothing.
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { payouts } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import type { RequestContext } from '../../kernel/context.js';
import { lockAvailableBalance, payoutPaid, payoutReturned } from '../../ledger/journal.js';
import { bookReleasedPayout } from '../terms/booking.js';
import type { Attempt } from '../../connectors/router.js';
import { attemptsView, moneyViewHead, viewTail } from '../../movement/kind.js';
import type { PayoutFailureCode } from '../../connectors/types.js';
import type { PayoutView } from './schema.js';
import { payoutStates, type PayoutStatus } from './state.js';
import { booking, moveTo as move, save, withAttempts, type EventfulStatus, type Transitions } from '../../movement/transition.js';
import type { Runtime } from '../../runtime.js';

export type PayoutRow = typeof payouts.$inferSelect;

export function payoutView(row: PayoutRow): PayoutView {
  return {
    ...moneyViewHead('po', 'payout', row),
    beneficiary: toPublicId('ben', row.beneficiaryId),
    reference: row.reference,
    description: row.description,
    connector: row.connector,
    connector_reference: row.connectorReference,
    attempts: attemptsView(row.attempts),
    failure_code: row.failureCode as PayoutFailureCode | null,
    failure_message: row.failureMessage,
    ...viewTail(row),
  };
}

/** What is known about a submitted payout, in our own terms. */
export type PayoutUpdate =
  /** Accepted by the bank and in transit, or sent without an answer (timeout): to be verified. */
  | { kind: 'processing'; connector: string; connectorReference: string | null }
  | { kind: 'paid'; connector: string; connectorReference: string }
  | { kind: 'failed'; connector: string | null; connectorReference: string | null; failureCode: PayoutFailureCode; failureMessage: string }
  | { kind: 'returned'; connector: string; connectorReference: string; failureCode: PayoutFailureCode; failureMessage: string };

/** A payout's transition table with its effects on the ledger. */
const PAYOUT_TRANSITIONS: Transitions<PayoutRow, PayoutStatus, 'payout'> = {
  object: 'payout',
  table: payouts,
  states: payoutStates,
  view: payoutView,
  effects: {
    paid: booking(payoutPaid, 'payout'),
    failed: (tx, _ctx, payout, now) => bookReleasedPayout(tx, payout, now),
    cancelled: (tx, _ctx, payout, now) => bookReleasedPayout(tx, payout, now),
    returned: booking(payoutReturned, 'payout'),
  },
};

function moveTo(tx: Executor, ctx: RequestContext, row: PayoutRow, to: EventfulStatus<'payout', PayoutStatus>, operation: string, now: Date, set: Partial<PayoutRow>): Promise<PayoutRow> {
  return move(tx, PAYOUT_TRANSITIONS, ctx, row, to, operation, now, set);
}

/** pending → processing: the payout is about to be sent; a status check may take over at `leaseUntil`. */
export function markProcessing(tx: Executor, ctx: RequestContext, row: PayoutRow, now: Date, leaseUntil: Date): Promise<PayoutRow> {
  return moveTo(tx, ctx, row, 'processing', 'submit', now, { nextActionAt: leaseUntil });
}

/** pending → cancelled, at the merchant's request: the reserved amount returns to available. */
export function markCancelled(tx: Executor, ctx: RequestContext, row: PayoutRow, now: Date): Promise<PayoutRow> {
  return moveTo(tx, ctx, row, 'cancelled', 'cancel', now, { nextActionAt: null });
}

/** Applies `update` to the locked payout `row`; returns the row as it now stands. */
export async function applyPayoutUpdate(
  tx: Executor,
  ctx: RequestContext,
  row: PayoutRow,
  update: PayoutUpdate,
  attempts: Attempt[],
  rt: Pick<Runtime, 'now' | 'config'>,
): Promise<PayoutRow> {
  const now = rt.now();
  const where = and(eq(payouts.accountId, row.accountId), eq(payouts.id, row.id));
  const recordAttempts = async (current: PayoutRow) =>
    attempts.length ? save(tx, PAYOUT_TRANSITIONS, current, now, { attempts: withAttempts(current, attempts) }) : current;
  // Another connector's payout is not ours to settle.
  if (row.connector !== null && update.connector !== null && row.connector !== update.connector) return row;

  // A bank that reports a payout we hold as paid failed (Adyen books a transfer, then the
  // beneficiary's bank rejects it) sent the money back: returned.
  const sentBack = update.kind === 'returned' || (update.kind === 'failed' && update.connector !== null);
  if (payoutStates.is(row.status, 'paid') && sentBack) {
    return moveTo(tx, ctx, await recordAttempts(row), 'returned', 'return', now, { failureCode: update.failureCode, failureMessage: update.failureMessage });
  }
  // Pending payouts have not been sent (nothing to report about them); final ones keep their outcome.
  if (!payoutStates.is(row.status, 'atBank')) return recordAttempts(row);

  const taken = { connector: update.connector ?? row.connector, connectorReference: update.connectorReference ?? row.connectorReference, attempts: withAttempts(row, attempts) };
  if (update.kind === 'processing') {
    const firstAcceptance = row.connector === null || (row.connectorReference === null && update.connectorReference !== null);
    const [updated] = await tx
      .update(payouts)
      .set({
        ...taken,
        nextActionAt: new Date(now.getTime() + rt.config.statusCheckIntervalMs),
        ...(firstAcceptance || attempts.length ? { version: sql`${payouts.version} + 1`, updatedAt: now } : {}),
      })
      .where(where)
      .returning();
    return updated!;
  }
  if (update.kind === 'failed') {
    return moveTo(tx, ctx, row, 'failed', 'fail', now, { ...taken, nextActionAt: null, failureCode: update.failureCode, failureMessage: update.failureMessage });
  }
  if (update.kind === 'returned') {
    // Paid then returned in one transaction touches reserved, then available. Locking available
    // first keeps the order every payout create and refund uses (available, then reserved), so
    // the two cannot deadlock.
    await lockAvailableBalance(tx, { accountId: row.accountId, livemode: row.livemode, currency: row.currency });
  }
  const paid = await moveTo(tx, ctx, row, 'paid', 'pay', now, { ...taken, nextActionAt: null });
  if (update.kind === 'paid') return paid;
  // Paid and sent back before we heard of the payment: both happened, both are recorded.
  return moveTo(tx, ctx, paid, 'returned', 'return', now, { failureCode: update.failureCode, failureMessage: update.failureMessage });
}
