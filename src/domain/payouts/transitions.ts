// A payout's states as the engine applies them (src/movement/report.ts), whoever learnt the news:
// the submission (worker or right after create), a status check, the bank's webhook, a test
// helper, or the merchant cancelling (markCancelled). The payout moves as the transition table allows, the ledger follows (paid: the reserved amount
// leaves; failed or cancelled: it returns to available; returned: it comes back to available), and
// every change writes its event. Late and repeated reports of a settled outcome change nothing.
import type { Executor } from '../../storage/db.js';
import { payouts } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import type { RequestContext } from '../../kernel/context.js';
import { lockAvailableBalance, payoutPaid, payoutReturned } from '../../ledger/journal.js';
import { bookReleasedPayout } from '../terms/booking.js';
import { attemptsView, connectorView, moneyViewHead, viewTail } from '../../movement/kind.js';
import type { PayoutFailureCode } from '../../connectors/types.js';
import type { PayoutView } from './schema.js';
import { payoutStates, type PayoutGroup, type PayoutStatus } from './state.js';
import { booking, moveTo as move, type EventfulStatus } from '../../movement/transition.js';
import type { ReportRules } from '../../movement/report.js';
import type { PayoutUpdate } from '../../connectors/movements/payout.js';

export type PayoutRow = typeof payouts.$inferSelect;

export function payoutView(row: PayoutRow): PayoutView {
  return {
    ...moneyViewHead('po', 'payout', row),
    beneficiary: toPublicId('ben', row.beneficiaryId),
    reference: row.reference,
    description: row.description,
    ...connectorView(row),
    attempts: attemptsView(row.attempts),
    failure_code: row.failureCode as PayoutFailureCode | null,
    failure_message: row.failureMessage,
    ...viewTail(row),
  };
}

/** What is known about a submitted payout, in our own terms. */
export type { PayoutUpdate };

/** A payout's transition table with its effects on the ledger, and how the bank's reports move it. */
export const PAYOUT_RULES: ReportRules<PayoutRow, PayoutStatus, 'payout', PayoutGroup, PayoutUpdate> = {
  object: 'payout',
  table: payouts,
  states: payoutStates,
  view: payoutView,
  // Pending payouts have not been sent (nothing to report about them); final ones keep their outcome.
  open: 'atBank',
  working: 'processing',
  firstWhen: 'either',
  // Its processing event was written when it was sent (markProcessing).
  acceptanceEvent: false,
  check: 'nextActionAt',
  late: { returned: 'paid' },
  // Paid and sent back before we heard of the payment: both happened, both are recorded.
  reaches: { returned: ['paid', 'returned'] },
  // A bank that reports a payout we hold as paid failed (Adyen books a transfer, then the
  // beneficiary's bank rejects it) sent the money back: returned.
  settle: (row, update) => ({
    update:
      payoutStates.is(row.status, 'paid') && update.kind === 'failed' && update.connector !== null
        ? { ...update, kind: 'returned', connector: update.connector, connectorReference: update.connectorReference ?? '' }
        : update,
  }),
  effects: {
    async paid(tx, ctx, payout, now) {
      // Paid (and perhaps returned in the same transaction) touches reserved, then available.
      // Locking available first keeps the order every payout create and refund uses (available,
      // then reserved), so the two cannot deadlock.
      await lockAvailableBalance(tx, { accountId: payout.accountId, livemode: payout.livemode, currency: payout.currency });
      await booking(payoutPaid, 'payout')(tx, ctx, payout, now, payout);
    },
    failed: (tx, _ctx, payout, now) => bookReleasedPayout(tx, payout, now),
    cancelled: (tx, _ctx, payout, now) => bookReleasedPayout(tx, payout, now),
    returned: booking(payoutReturned, 'payout'),
  },
};

function moveTo(tx: Executor, ctx: RequestContext, row: PayoutRow, to: EventfulStatus<'payout', PayoutStatus>, operation: string, now: Date, set: Partial<PayoutRow>): Promise<PayoutRow> {
  return move(tx, PAYOUT_RULES, ctx, row, to, operation, now, set);
}

/** pending → processing: the payout is about to be sent; a status check may take over at `leaseUntil`. */
export function markProcessing(tx: Executor, ctx: RequestContext, row: PayoutRow, now: Date, leaseUntil: Date): Promise<PayoutRow> {
  return moveTo(tx, ctx, row, 'processing', 'submit', now, { nextActionAt: leaseUntil });
}

/** pending → cancelled, at the merchant's request: the reserved amount returns to available. */
export function markCancelled(tx: Executor, ctx: RequestContext, row: PayoutRow, now: Date): Promise<PayoutRow> {
  return moveTo(tx, ctx, row, 'cancelled', 'cancel', now, { nextActionAt: null });
}
