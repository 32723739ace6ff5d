// Captures of a manual payment's authorisation, on the movement engine like refunds: (1) lock the
// payment, check it is authorised, unexpired and holds the amount, insert the capture `pending`
// and take its amount from amount_capturable (so concurrent captures never take more than the
// authorisation holds); (2) call the payment's connector with the capture id as idempotency key;
// (3) apply the answer (transitions.ts). A processor that confirms later (Adyen) leaves it pending
// until its notification or the worker's check.
import { and, eq } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { captures, payments } from '../../storage/schema.js';
import { ApiError } from '../../kernel/errors.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { notFound } from '../../storage/lookup.js';
import { lockRow } from '../../movement/apply.js';
import type { NewMovement } from '../../movement/engine.js';
import { resendCheckAt } from '../../movement/saga.js';
import type { CaptureRequest } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import { routingFor } from '../routing/targets.js';
import { paymentStates } from '../payments/state.js';
import type { PaymentRow } from '../payments/transitions.js';
import { attemptReference } from '../payments/cascade.js';
import { captureKind, captureRequest } from './kind.js';
import { voidOnItsWay } from '../voids/service.js';
import { savePayment } from './transitions.js';
import { captureView, type CaptureRow } from './view.js';
import type { CapturePaymentBody, ListCapturesQuery } from './schema.js';
import type { CaptureStatus } from './state.js';
import { idParam } from '../../kernel/pagination.js';
import { loadOne, newOwnedRow, type Resource, tenantReads } from '../../storage/tenant.js';
import { parseId, toPublicId } from '../../kernel/ids.js';
import { respond } from '../../idempotency/store.js';
import { applyState } from '../../movement/apply.js';
import { testHelpersOnly } from '../../ledger/balance.js';
import { resolveThroughTestControl } from '../test-controls.js';
import { captureStates } from './state.js';

/** POST /v1/payments/{id}/capture as the engine runs it (runMovement): a capture of an authorised payment, its admit rule and what it sends. */
export function newCapture(db: Db, rt: Runtime, ctx: RequestContext, id: string, input: CapturePaymentBody): NewMovement<CaptureRow, CaptureRequest> {
  const paymentUuid = parseId('pay', id);
  return {
    kind: captureKind,
    resend: (row) => captureRequest(db, row),
    plan: async () => {
      const routing = await routingFor(db, rt, ctx);
      const several = (connector: string) => routing.targets.find((t) => t.key === connector)?.capabilities?.multiple_captures === true;
      return {
        admit: async (tx, now) => (paymentUuid ? admitCapture(tx, rt, ctx, paymentUuid, input, several, now) : undefined),
        missing: async () => {
          const missing = await notFound(db, ctx, payments, paymentUuid, 'payment', id);
          return new ApiError('resource_missing', { param: 'id', message: missing.message });
        },
        request: (row) => captureRequest(db, row),
      };
    },
  };
}

/**
 * The admit rule of a capture, in phase 1's transaction: the payment locked and authorised, its
 * authorisation not lapsed, no final capture on its way, the amount within what it holds, a
 * partial capture that is not the last only where the connector takes several.
 */
async function admitCapture(
  tx: Executor,
  rt: Runtime,
  ctx: RequestContext,
  paymentUuid: string,
  input: CapturePaymentBody,
  several: (connector: string) => boolean,
  now: Date,
): Promise<CaptureRow | undefined> {
  const payment = await lockRow<PaymentRow>(tx, payments, ctx.accountId, ctx.livemode, paymentUuid);
  if (!payment) return undefined;
  // Voided by the worker once it lapsed: it is the lapse the merchant needs to hear of.
  const lapsed = payment.status === 'canceled' && payment.cancellationReason === 'expired';
  if (!lapsed) paymentStates.require(payment.status, 'authorized', 'capture');
  if (lapsed || (payment.captureBefore !== null && payment.captureBefore <= now)) {
    throw new ApiError('authorization_expired', { message: `The authorisation lapsed at ${payment.captureBefore!.toISOString()}; nothing can be captured.` });
  }
  if (await voidOnItsWay(tx, ctx, payment.id)) throw new ApiError('invalid_state', { message: 'The authorisation is being voided: nothing can be captured from it.' });
  const [finalOnItsWay] = await tx
    .select({ id: captures.id })
    .from(captures)
    .where(and(eq(captures.accountId, ctx.accountId), eq(captures.livemode, ctx.livemode), eq(captures.paymentId, payment.id), eq(captures.status, 'pending'), eq(captures.finalCapture, true)));
  const capturable = finalOnItsWay ? 0 : payment.amountCapturable;
  const amount = input.amount ?? capturable;
  if (capturable <= 0 || amount > capturable) {
    throw new ApiError('amount_above_capturable', {
      param: 'amount',
      message: `The amount (${amount}) is above what the authorisation still holds: ${capturable} ${payment.currency}.`,
    });
  }
  const finalCapture = input.final_capture ?? true;
  if (!finalCapture && !several(payment.connector!)) {
    throw new ApiError('capture_not_supported', {
      param: 'final_capture',
      message: `${payment.connector} captures an authorisation once: capture with final_capture true (what is left is released).`,
    });
  }
  const [row] = await tx
    .insert(captures)
    .values({
      ...newOwnedRow(ctx, 'cap', now),
      paymentId: payment.id,
      status: 'pending',
      amount,
      currency: payment.currency,
      finalCapture,
      connector: payment.connector!,
      paymentReference: attemptReference(payment),
      metadata: input.metadata ?? {},
      nextStatusCheckAt: resendCheckAt(rt, now),
    })
    .returning();
  await savePayment(tx, payment, now, { amountCapturable: payment.amountCapturable - amount });
  return row!;
}

const CAPTURES: Resource<typeof captures> = { table: captures, prefix: 'cap', name: 'capture' };

/**
 * POST /v1/test-helpers/captures/{id}/resolve: the simulated processor confirms (or refuses) a
 * capture it holds pending, and its answer is applied as a processor's later confirmation is
 * (Adyen's CAPTURE / CAPTURE_FAILED notification, src/movement/inbound.ts): event, ledger, order.
 */
export async function resolveTestCapture(db: Db, rt: Runtime, ctx: RequestContext, id: string, outcome: 'succeeded' | 'failed'): Promise<Outcome> {
  if (ctx.livemode) throw testHelpersOnly();
  const row = await loadOne(db, ctx, CAPTURES, id);
  captureStates.require(row.status, 'awaiting', 'resolve');
  const reference = toPublicId('cap', row.id);
  const state = await resolveThroughTestControl(rt, ctx, row.connector, 'capture', (c, signal) => c.resolvePendingCapture(reference, outcome, signal));
  return db.transaction(async (tx) => {
    const after = await applyState<CaptureRow>(db, rt, captureKind, ctx, row.id, row.connector, state, { tx });
    return respond(tx, ctx, 200, captureView(after ?? row));
  });
}

export const { retrieve: retrieveCapture, list: listCaptures } = tenantReads(CAPTURES, captureView, (q: ListCapturesQuery) => {
  const paymentUuid = q.payment ? idParam('pay', 'payment', q.payment) : undefined;
  return [q.status ? eq(captures.status, q.status as CaptureStatus) : undefined, paymentUuid ? eq(captures.paymentId, paymentUuid) : undefined];
});
