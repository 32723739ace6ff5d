// A void as a money movement (src/movement): sent to the one connector holding its payment's
// authorisation, the void id being the processor's idempotency key. Located before it is sent
// again: the processor's view of the authorisation says whether it was already released (its
// calls: src/connectors/movements/children.ts).
import type { CancelAuthorizationRequest, CancellationReason, CancelState } from '../../connectors/types.js';
import { VOID_CALLS } from '../../connectors/movements/children.js';
import { toPublicId } from '../../kernel/ids.js';
import { parentsConnector, type MovementKind } from '../../movement/kind.js';
import { authorisationReference } from '../payments/authorisation-reference.js';
import { lockRow } from '../../movement/apply.js';
import { payments } from '../../storage/schema.js';
import { PAYMENT_RULES, type PaymentRow } from '../payments/transitions.js';
import { VOID_RULES, type VoidRow, type VoidUpdate } from './transitions.js';

export const voidKind: MovementKind<VoidRow, CancelState, VoidUpdate, CancelAuthorizationRequest> = {
  ...VOID_CALLS,
  object: 'void',
  prefix: 'void',
  createdEvent: null,
  rules: VOID_RULES,
  route: parentsConnector,
  resumeBy: 'sending',
  locatesBeforeSending: true,
  statusRow: async (db, row) => ({ ...row, paymentReference: await authorisationReference(db, row) }),
  waitsWhenUnreached: true,
  // The merchant asked about the payment: the answer is the payment as the void left it.
  answer: {
    status: 200,
    body: async (tx, row) => {
      const payment = await lockRow<PaymentRow>(tx, payments, row.accountId, row.livemode, row.paymentId);
      return PAYMENT_RULES.viewIn!(tx, payment!);
    },
  },
};

/** The void as its connector needs it, with the authorisation as that connector knows it. */
export function voidRequest(row: VoidRow & { paymentReference: string }, payment: { amount: number; currency: string }): CancelAuthorizationRequest {
  return {
    reference: toPublicId('void', row.id),
    // The attempt that holds the authorisation, under its own reference (a cascaded payment's pay_…_n).
    paymentReference: row.paymentReference,
    connectorPaymentReference: row.paymentConnectorReference,
    amount: payment.amount,
    currency: payment.currency,
    reason: row.reason as CancellationReason,
  };
}
