// Voids of manual payments' authorisations, on the movement engine like captures: (1) lock the
// payment, check it is voidable (requires_capture with nothing captured and no capture on its way,
// or requires_action) and has no void on its way, insert the void `pending` and hold its
// amount_capturable at 0 meanwhile (so no capture can start); (2) call the payment's connector with
// the void id as idempotency key; (3) apply the answer (transitions.ts): the payment canceled, its
// order open again. A processor that confirms later (Adyen) leaves it pending until its
// notification or the worker's check. Three callers: the merchant's POST /v1/payments/{id}/cancel,
// an order's cancel, and the worker's expiry (jobs.ts), the last two without a key of their own.
import { authorisationReference } from '../payments/authorisation-reference.js';
import { and, eq } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { captures, payments, voids } from '../../storage/schema.js';
import { parseId } from '../../kernel/ids.js';
import { ApiError } from '../../kernel/errors.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { notFound } from '../../storage/lookup.js';
import { newOwnedRow } from '../../storage/tenant.js';
import { lockRow } from '../../movement/apply.js';
import { runMovement, type NewMovement } from '../../movement/engine.js';
import { resendCheckAt } from '../../movement/saga.js';
import type { CancelAuthorizationRequest } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import { paymentStates } from '../payments/state.js';
import type { PaymentRow } from '../payments/transitions.js';
import { attemptReference } from '../payments/cascade.js';
import { savePayment } from '../captures/transitions.js';
import { cancelPaymentOrder } from '../payment-orders/service.js';
import { voidKind, voidRequest } from './kind.js';
import type { VoidRow } from './transitions.js';
import type { CancelPaymentBody } from './schema.js';
import type { CancellationReason } from './state.js';

/**
 * POST /v1/payments/{id}/cancel as the engine runs it (runMovement): a void of the payment's
 * authorisation; the answer is the payment (canceled, or still requires_capture while the processor confirms).
 */
export function newVoid(db: Db, rt: Runtime, ctx: RequestContext, id: string, input: CancelPaymentBody): NewMovement<VoidRow, CancelAuthorizationRequest> {
  const paymentUuid = parseId('pay', id);
  return voidOf(db, rt, ctx, paymentUuid, (input.cancellation_reason as CancellationReason | undefined) ?? 'requested_by_customer', async () => {
    const missing = await notFound(db, ctx, payments, paymentUuid, 'payment', id);
    return new ApiError('resource_missing', { param: 'id', message: missing.message });
  });
}

/**
 * Voids a payment's authorisation for a caller with no key of its own (an order's cancel, the
 * worker): its crash between the phases is taken up by the worker's check of pending voids.
 */
export function voidWithoutKey(db: Db, rt: Runtime, ctx: RequestContext, paymentUuid: string, reason: CancellationReason): Promise<Outcome> {
  const keyless: RequestContext = { ...ctx, idempotency: undefined, deferredIdempotency: undefined };
  return runMovement(db, rt, keyless, voidOf(db, rt, keyless, paymentUuid, reason, async () => new Error(`payment ${paymentUuid} vanished before its void`)));
}

function voidOf(
  db: Db,
  rt: Runtime,
  ctx: RequestContext,
  paymentUuid: string | undefined,
  reason: CancellationReason,
  missing: () => Promise<Error>,
): NewMovement<VoidRow, CancelAuthorizationRequest> {
  return {
    kind: voidKind,
    resend: (row) => voidRequestOf(db, row),
    plan: async () => ({
      admit: async (tx, now) => (paymentUuid ? admitVoid(tx, rt, ctx, paymentUuid, reason, now) : undefined),
      missing,
      request: (row) => voidRequestOf(db, row),
    }),
  };
}

/**
 * The admit rule of a void, in phase 1's transaction: the payment locked and voidable, nothing
 * captured or being captured, no void already on its way; typed 422s otherwise, nothing moved.
 */
async function admitVoid(tx: Executor, rt: Runtime, ctx: RequestContext, paymentUuid: string, reason: CancellationReason, now: Date): Promise<VoidRow | undefined> {
  const payment = await lockRow<PaymentRow>(tx, payments, ctx.accountId, ctx.livemode, paymentUuid);
  if (!payment) return undefined;
  paymentStates.require(payment.status, 'voidable', 'cancel');
  const [capturing] = await tx
    .select({ id: captures.id })
    .from(captures)
    .where(and(eq(captures.accountId, ctx.accountId), eq(captures.livemode, ctx.livemode), eq(captures.paymentId, payment.id), eq(captures.status, 'pending')));
  if (payment.amountCaptured > 0 || capturing) {
    throw new ApiError('invalid_state', { message: 'Money was captured from this authorisation (or a capture is on its way): it can no longer be voided; refund it instead.' });
  }
  if (await voidOnItsWay(tx, ctx, payment.id)) throw new ApiError('invalid_state', { message: 'A void of this authorisation is already on its way to the processor.' });
  const [row] = await tx
    .insert(voids)
    .values({
      ...newOwnedRow(ctx, 'void', now),
      paymentId: payment.id,
      status: 'pending',
      reason,
      connector: payment.connector!,
      paymentConnectorReference: payment.connectorReference,
      paymentReference: attemptReference(payment),
      nextStatusCheckAt: resendCheckAt(rt, now),
    })
    .returning();
  if (payment.amountCapturable > 0) await savePayment(tx, payment, now, { amountCapturable: 0 });
  return row!;
}

export async function voidRequestOf(db: Executor, row: VoidRow): Promise<CancelAuthorizationRequest> {
  const [payment] = await db
    .select({ amount: payments.amount, currency: payments.currency })
    .from(payments)
    .where(and(eq(payments.accountId, row.accountId), eq(payments.livemode, row.livemode), eq(payments.id, row.paymentId)));
  return voidRequest({ ...row, paymentReference: await authorisationReference(db, row) }, payment!);
}

/** Whether a void of this payment is on its way (a capture waits for its outcome). */
export async function voidOnItsWay(tx: Executor, ctx: Pick<RequestContext, 'accountId' | 'livemode'>, paymentUuid: string): Promise<boolean> {
  const [row] = await tx
    .select({ id: voids.id })
    .from(voids)
    .where(and(eq(voids.accountId, ctx.accountId), eq(voids.livemode, ctx.livemode), eq(voids.paymentId, paymentUuid), eq(voids.status, 'pending')));
  return row !== undefined;
}

/**
 * An order's cancel (POST /v1/payment-orders/{id}/cancel): a payment of it holding an
 * authorisation is voided first, which opens the order again, and the order is then cancelled.
 * A void the processor confirms later leaves the order processing, and its cancel a typed 422.
 */
export async function cancelOrderVoidingFirst(db: Db, rt: Runtime, ctx: RequestContext, id: string): Promise<Outcome> {
  const orderUuid = parseId('ord', id);
  const [held] = orderUuid
    ? await db
        .select({ id: payments.id })
        .from(payments)
        .where(and(eq(payments.accountId, ctx.accountId), eq(payments.livemode, ctx.livemode), eq(payments.paymentOrderId, orderUuid), eq(payments.status, 'requires_capture')))
    : [];
  if (held) await voidWithoutKey(db, rt, ctx, held.id, 'requested_by_customer');
  return cancelPaymentOrder(db, ctx, id, rt.now());
}
