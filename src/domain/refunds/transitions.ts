// The one place a refund's state changes, whoever learnt the news (the creating request, the
// worker, the processor's webhook): inside the caller's transaction with the refund row locked.
// Succeeded: the reserved amount leaves; failed: it returns to available and the payment's
// amount_refunded gives it back. Final refunds stay as they are.
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { payments, refunds } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import type { RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../../events/service.js';
import { refundFailed } from '../../ledger/journal.js';
import { bookSucceededRefund } from '../terms/booking.js';
import type { RefundFailureCode } from '../../connectors/types.js';
import type { RefundView } from './schema.js';
import { moneyViewHead, viewTail } from '../../movement/kind.js';
import { refundStates, type RefundStatus } from './state.js';
import { ledgerEntry, moveTo, save, type Transitions } from '../../movement/transition.js';
import type { Runtime } from '../../runtime.js';

export type RefundRow = typeof refunds.$inferSelect;

export function refundView(row: RefundRow): RefundView {
  return {
    ...moneyViewHead('ref', 'refund', row),
    payment: toPublicId('pay', row.paymentId),
    reason: row.reason as RefundView['reason'],
    connector: row.connector,
    connector_reference: row.connectorReference,
    failure_code: row.failureCode,
    failure_message: row.failureMessage,
    ...viewTail(row),
  };
}

export type RefundUpdate =
  | { kind: 'succeeded'; connectorReference: string }
  | { kind: 'pending'; connectorReference: string | null }
  | { kind: 'failed'; connectorReference: string | null; failureCode: RefundFailureCode; failureMessage: string };

/** A refund's transition table with its effects on the ledger and on its payment. */
const REFUND_TRANSITIONS: Transitions<RefundRow, RefundStatus, 'refund'> = {
  object: 'refund',
  table: refunds,
  states: refundStates,
  view: refundView,
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

/** Applies an update to a locked refund; the single place refunds change state. */
export async function applyRefundUpdate(
  tx: Executor,
  ctx: RequestContext,
  row: RefundRow,
  update: RefundUpdate,
  _attempts: unknown,
  rt: Pick<Runtime, 'now' | 'config'>,
): Promise<RefundRow> {
  const now = rt.now();
  if (!refundStates.is(row.status, 'awaiting')) return row;
  if (update.kind === 'pending') {
    const set = {
      connectorReference: update.connectorReference ?? row.connectorReference,
      nextStatusCheckAt: new Date(now.getTime() + rt.config.statusCheckIntervalMs),
    };
    const accepted = row.connectorReference === null && update.connectorReference !== null;
    if (accepted) {
      const updated = await save(tx, REFUND_TRANSITIONS, row, now, set);
      await recordEvent(tx, ctx, 'refund.pending', refundView(updated), now);
      return updated;
    }
    // Only the next check moves: no new fact, so no new version.
    const [updated] = await tx.update(refunds).set(set).where(and(eq(refunds.accountId, row.accountId), eq(refunds.id, row.id))).returning();
    return updated!;
  }
  return moveTo(tx, REFUND_TRANSITIONS, ctx, row, update.kind, update.kind === 'succeeded' ? 'succeed' : 'fail', now, {
    connectorReference: update.connectorReference ?? row.connectorReference,
    failureCode: update.kind === 'failed' ? update.failureCode : null,
    failureMessage: update.kind === 'failed' ? update.failureMessage : null,
    nextStatusCheckAt: null,
  });
}
