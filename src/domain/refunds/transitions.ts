// A refund's states as the engine applies them (src/movement/report.ts), whoever learnt the news
// (the creating request, the worker, the processor's webhook).
// Succeeded: the reserved amount leaves; failed: it returns to available and the payment's
// amount_refunded gives it back. Final refunds stay as they are.
import { and, eq, sql } from 'drizzle-orm';
import { payments, refunds } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import { refundFailed } from '../../ledger/journal.js';
import { bookSucceededRefund } from '../terms/booking.js';
import type { RefundFailureCode } from '../../connectors/types.js';
import type { RefundView } from './schema.js';
import { connectorView, moneyViewHead, viewTail } from '../../movement/kind.js';
import { refundStates, type RefundStatus } from './state.js';
import { ledgerEntry } from '../../movement/transition.js';
import type { ReportRules } from '../../movement/report.js';
import type { ChildUpdate } from '../../connectors/movements/children.js';

export type RefundRow = typeof refunds.$inferSelect;

export function refundView(row: RefundRow): RefundView {
  return {
    ...moneyViewHead('ref', 'refund', row),
    payment: toPublicId('pay', row.paymentId),
    reason: row.reason as RefundView['reason'],
    ...connectorView(row),
    failure_code: row.failureCode,
    failure_message: row.failureMessage,
    ...viewTail(row),
  };
}

export type RefundUpdate = ChildUpdate<RefundFailureCode>;

/** A refund's transition table with its effects on the ledger and on its payment, and how reports move it. */
export const REFUND_RULES: ReportRules<RefundRow, RefundStatus, 'refund', 'awaiting', RefundUpdate> = {
  object: 'refund',
  table: refunds,
  states: refundStates,
  view: refundView,
  open: 'awaiting',
  working: 'pending',
  // A refund is created with its one connector, its payment's: accepted once it has a reference there.
  firstWhen: 'no_reference',
  acceptanceEvent: true,
  check: 'nextStatusCheckAt',
  effects: {
    succeeded: (tx, _ctx, refund, now) => bookSucceededRefund(tx, refund, now),
    async failed(tx, _ctx, refund, now) {
      // The money never left: the payment may be refunded by that much again.
      await tx
        .update(payments)
        .set({ amountRefunded: sql`${payments.amountRefunded} - ${refund.amount}`, version: sql`${payments.version} + 1`, updatedAt: now })
        .where(and(eq(payments.accountId, refund.accountId), eq(payments.id, refund.paymentId)));
      await refundFailed(tx, ledgerEntry('refund', refund, now));
    },
  },
};
