// A refund as a money movement (src/movement): sent to the one connector holding its payment,
// the refund id being the processor's idempotency key, so sending again is always safe (its calls:
// src/connectors/movements/children.ts).
import { and, eq } from 'drizzle-orm';
import { toPublicId } from '../../kernel/ids.js';
import type { Executor } from '../../storage/db.js';
import type { RefundRequest, RefundState } from '../../connectors/types.js';
import { REFUND_CALLS } from '../../connectors/movements/children.js';
import { attemptReferenceOf, parentsConnector, type MovementKind } from '../../movement/kind.js';
import { payments } from '../../storage/schema.js';
import { REFUND_RULES, type RefundRow, type RefundUpdate } from './transitions.js';

export const refundKind: MovementKind<RefundRow, RefundState, RefundUpdate, RefundRequest> = {
  ...REFUND_CALLS,
  object: 'refund',
  prefix: 'ref',
  rules: REFUND_RULES,
  route: parentsConnector,
  resumeBy: 'sending',
  waitsWhenUnreached: true,
  // Refunds keep no attempt records: they have one connector, the payment's.
};

/**
 * The refund as its connector needs it, with the payment as that connector knows it (its
 * reference there): a processor without a search by our id (Adyen) can refund only by it.
 */
export async function refundRequest(db: Executor, row: RefundRow): Promise<RefundRequest> {
  const [payment] = await db
    .select({ connectorReference: payments.connectorReference, attemptNumber: payments.attemptNumber })
    .from(payments)
    .where(and(eq(payments.accountId, row.accountId), eq(payments.livemode, row.livemode), eq(payments.id, row.paymentId)));
  return {
    reference: toPublicId('ref', row.id),
    // The attempt that took the payment, under its own reference (a cascaded payment's pay_…_n).
    paymentReference: attemptReferenceOf(toPublicId('pay', row.paymentId), payment?.attemptNumber ?? 1),
    connectorPaymentReference: payment?.connectorReference ?? null,
    amount: row.amount,
    currency: row.currency,
  };
}
