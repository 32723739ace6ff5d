// A void's states as the engine applies them (src/movement/report.ts), whoever learnt the outcome:
// the request that created it, the worker's check, or the processor's notification (Adyen's
// CANCELLATION). A succeeded void cancels its payment (event payment.canceled, its order open
// again); a failed one leaves the authorisation as it was, capturable again. The void itself is
// internal: it writes no event of its own, the payment's says it all.
import type { Executor } from '../../storage/db.js';
import { payments, voids } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import { moveTo } from '../../movement/transition.js';
import { SENT_TO_PARENTS_CONNECTOR, type ReportRules } from '../../movement/report.js';
import { lockRow } from '../../movement/apply.js';
import type { CancelFailureCode } from '../../connectors/types.js';
import { PAYMENT_RULES, type PaymentRow } from '../payments/transitions.js';
import { paymentStates } from '../payments/state.js';
import { savePayment } from '../captures/transitions.js';
import { voidStates, type VoidStatus } from './state.js';
import type { ChildUpdate } from '../../connectors/movements/children.js';

export type VoidRow = typeof voids.$inferSelect;

export type VoidUpdate = ChildUpdate<CancelFailureCode>;

/** The void as logs and tests read it (it is no API object). */
export function voidView(row: VoidRow) {
  return { id: toPublicId('void', row.id), payment: toPublicId('pay', row.paymentId), status: row.status, reason: row.reason, failure_code: row.failureCode };
}

// Its object is the payment's: a void writes none of the payment's events itself (events: null), its payment's move does.
export const VOID_RULES: ReportRules<VoidRow, VoidStatus, 'payment', 'awaiting' | 'final', VoidUpdate> = {
  object: 'payment',
  table: voids,
  states: voidStates,
  view: voidView,
  // Created with its one connector, the payment's: accepted once it has a reference there.
  ...SENT_TO_PARENTS_CONNECTOR,
  effects: {
    async succeeded(tx, ctx, voided, now) {
      const payment = await lockPayment(tx, voided);
      // Settled meanwhile otherwise (the customer's 3-D Secure failed, the worker gave up on it): it stays where it is.
      if (!paymentStates.is(payment.status, 'voidable')) return;
      await moveTo(tx, PAYMENT_RULES, ctx, payment, 'canceled', 'void', now, {
        cancellationReason: voided.reason,
        amountCapturable: 0,
        nextStatusCheckAt: null,
        customerAction: null,
        nextActionUrl: null,
        actionExpiresAt: null,
      });
    },
    async failed(tx, _ctx, voided, now) {
      // Nothing was released: the authorisation holds what it held before the void was admitted.
      const payment = await lockPayment(tx, voided);
      if (paymentStates.is(payment.status, 'authorized')) await savePayment(tx, payment, now, { amountCapturable: payment.amount - payment.amountCaptured });
    },
  },
};

async function lockPayment(tx: Executor, voided: VoidRow): Promise<PaymentRow> {
  const payment = await lockRow<PaymentRow>(tx, payments, voided.accountId, voided.livemode, voided.paymentId);
  if (!payment) throw new Error(`void ${voided.id} names a payment that does not exist`);
  return payment;
}
