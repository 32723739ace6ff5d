// A capture's states as the engine applies them (src/movement/report.ts), whoever learnt the
// outcome: the request that created it, the worker's status check, or the processor's
// notification (Adyen's CAPTURE / CAPTURE_FAILED). A succeeded capture is money taken: the
// payment's amount_captured grows, the amount is booked as a payment's is, and the final capture
// succeeds the payment (its order paid with what was captured). A failed one gives its amount back
// to amount_capturable. Final captures stay as they are.
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { captures, payments } from '../../storage/schema.js';
import type { RequestContext } from '../../kernel/context.js';
import { moveTo } from '../../movement/transition.js';
import type { ReportRules } from '../../movement/report.js';
import { lockRow } from '../../movement/apply.js';
import { bookSucceededPayment } from '../terms/booking.js';
import { PAYMENT_RULES, type PaymentRow } from '../payments/transitions.js';
import type { CaptureFailureCode } from '../../connectors/types.js';
import { captureView, type CaptureRow } from './view.js';
import { captureStates, type CaptureStatus } from './state.js';
import type { ChildUpdate } from '../../connectors/movements/children.js';


export type CaptureUpdate = ChildUpdate<CaptureFailureCode>;

/** A capture's transition table with its effects on its payment, its order and the ledger. */
export const CAPTURE_RULES: ReportRules<CaptureRow, CaptureStatus, 'capture', 'awaiting' | 'final', CaptureUpdate> = {
  object: 'capture',
  table: captures,
  states: captureStates,
  view: captureView,
  open: 'awaiting',
  working: 'pending',
  // Created with its one connector, the payment's: accepted once it has a reference there.
  firstWhen: 'no_reference',
  // No capture.pending in the catalogue: a capture is pending from its creation.
  acceptanceEvent: false,
  check: 'nextStatusCheckAt',
  effects: {
    async succeeded(tx, ctx, capture, now) {
      const payment = await lockPayment(tx, capture);
      const captured = payment.amountCaptured + capture.amount;
      // The final capture releases what the authorisation still held.
      const set = { amountCaptured: captured, ...(capture.finalCapture ? { amountCapturable: 0 } : {}) };
      await bookSucceededPayment(tx, { ...payment, amount: capture.amount }, 'card', now);
      // The final capture succeeds the payment: its order is paid with what was captured. One change
      // of the payment, so one version, the one its payment.succeeded shows.
      if (capture.finalCapture) await moveTo(tx, PAYMENT_RULES, ctx, payment, 'succeeded', 'capture', now, set);
      else await savePayment(tx, payment, now, set);
    },
    async failed(tx, _ctx, capture, now) {
      // Nothing was taken: the authorisation holds the amount again.
      const payment = await lockPayment(tx, capture);
      await savePayment(tx, payment, now, { amountCapturable: payment.amountCapturable + capture.amount });
    },
  },
};

async function lockPayment(tx: Executor, capture: CaptureRow): Promise<PaymentRow> {
  const payment = await lockRow<PaymentRow>(tx, payments, capture.accountId, capture.livemode, capture.paymentId);
  if (!payment) throw new Error(`capture ${capture.id} names a payment that does not exist`);
  return payment;
}

/**
 * Changes the payment's amounts (no status change, no event of its own: the capture's says it, or
 * for a void the payment.canceled to come). The version still goes up: it counts the changes an
 * integrator can read on the payment, and events may skip versions (docs/events.md).
 */
export async function savePayment(tx: Executor, payment: PaymentRow, now: Date, set: Partial<PaymentRow>): Promise<PaymentRow> {
  const [updated] = await tx
    .update(payments)
    .set({ ...set, version: sql`${payments.version} + 1`, updatedAt: now })
    .where(and(eq(payments.accountId, payment.accountId), eq(payments.id, payment.id)))
    .returning();
  return updated!;
}
