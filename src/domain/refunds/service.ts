// Refunds, in the same atomic phases as payments: (1) lock the payment, check what remains
// refundable, insert the refund `pending`, count it in the payment's amount_refunded, reserve its
// amount in the ledger (available → reserved) and set the recovery point; (2) call the payment's
// connector with the refund id as idempotency key; (3) apply the answer — succeeded: the reserved
// amount leaves; failed: it returns to available and amount_refunded gives it back.
//
// The payment row lock serialises concurrent refunds of one payment, so their sum can never pass
// the payment's amount. A refund whose answer is unknown stays pending for the worker to verify;
// one abandoned by a crashed request is sent again by the worker (no card data is needed, and the
// processor dedupes by our id).
import { paymentStates } from '../payments/state.js';
import { and, eq, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { payments, refunds } from '../../storage/schema.js';
import { parseId } from '../../kernel/ids.js';
import { ApiError, invalidState } from '../../kernel/errors.js';
import type { RequestContext } from '../../kernel/context.js';
import { notFound } from '../../storage/lookup.js';
import { idParam } from '../../kernel/pagination.js';
import { newOwnedRow, type Resource, tenantReads } from '../../storage/tenant.js';
import { lockAvailableBalance, refundCreated } from '../../ledger/journal.js';
import { drawPending, lockPending } from '../../ledger/settlement.js';
import type { PaymentRow } from '../payments/transitions.js';
import { lockRow } from '../../movement/apply.js';
import type { Runtime } from '../../runtime.js';
import type { CreateRefundBody, ListRefundsQuery } from './schema.js';
import type { RefundStatus } from './state.js';
import { refundView } from './transitions.js';
import { refundKind, refundRequest } from './kind.js';
import type { RefundRow } from './transitions.js';
import type { RefundRequest } from '../../connectors/types.js';
import type { NewMovement } from '../../movement/engine.js';
import { resendCheckAt } from '../../movement/saga.js';
import { planted } from '../../kernel/plants.js';
import { assertNotDisputed } from '../disputes/service.js';

const REFUNDS: Resource<typeof refunds> = { table: refunds, prefix: 'ref', name: 'refund' };

/** POST /v1/refunds as the engine runs it (runMovement): a refund of a captured payment, its admit rule and what it sends. */
export function newRefund(db: Db, rt: Runtime, ctx: RequestContext, input: CreateRefundBody): NewMovement<RefundRow, RefundRequest> {
  return {
    kind: refundKind,
    resend: (row) => refundRequest(db, row),
    plan: async () => {
      const paymentUuid = parseId('pay', input.payment);
      return {
        admit: async (tx, now) => (paymentUuid ? admitRefund(tx, rt, ctx, input, paymentUuid, now) : undefined),
        missing: async () => {
          const missing = await notFound(db, ctx, payments, paymentUuid, 'payment', input.payment);
          return new ApiError('resource_missing', { param: 'payment', message: missing.message });
        },
        request: (row) => refundRequest(db, row),
      };
    },
  };
}

/**
 * The admit rule of a refund, in phase 1's transaction: the payment locked and succeeded, the
 * amount within what remains refundable and covered by the balance; the refund inserted, counted
 * in amount_refunded and reserved in the ledger. Undefined when the payment does not exist.
 */
async function admitRefund(tx: Executor, rt: Runtime, ctx: RequestContext, input: CreateRefundBody, paymentUuid: string, now: Date): Promise<RefundRow | undefined> {
  // Scoped by mode too, so a request never locks the other mode's row.
  const payment = await lockRow<PaymentRow>(tx, payments, ctx.accountId, ctx.livemode, paymentUuid);
  if (!payment) return undefined;
  paymentStates.require(payment.status, 'captured', 'refund');
  await assertNotDisputed(tx, payment);
  // Refunds draw on captured money only: all of an automatic payment, a manual one's captures.
  const remaining = payment.amountCaptured - payment.amountRefunded;
  const amount = input.amount ?? remaining;
  if ((remaining <= 0 || amount > remaining) && !planted('refund-skips-sum-check')) {
    throw new ApiError('amount_above_refundable', {
      param: 'amount',
      message: `The amount (${amount}) is above what remains refundable on ${input.payment}: ${remaining} ${payment.currency} of ${payment.amountCaptured} captured.`,
    });
  }
  // The refund is paid out of pending money first, then out of the available balance: money
  // a payout has reserved meanwhile is not there to refund with, so both are locked (pending
  // first, the order every writer keeps) and checked like a payout's.
  const key = { accountId: ctx.accountId, livemode: ctx.livemode, currency: payment.currency };
  const pending = await lockPending(tx, key, payment.id);
  const balance = await lockAvailableBalance(tx, key);
  const fromPending = Math.min(pending.total, amount);
  if (fromPending < amount && (balance.debitSlot === undefined || balance.available < amount - fromPending)) {
    throw new ApiError('insufficient_balance', {
      param: 'amount',
      message: `The ${payment.currency} balance (${pending.total} pending and ${Math.max(0, balance.available)} available) does not cover the refund amount ${amount}.`,
    });
  }
  await drawPending(tx, pending.rows, fromPending);
  const owned = newOwnedRow(ctx, 'ref', now);
  const uuid = owned.id;
  const [row] = await tx
    .insert(refunds)
    .values({
      ...owned,
      paymentId: payment.id,
      status: 'pending',
      amount,
      currency: payment.currency,
      reason: input.reason ?? null,
      connector: payment.connector!,
      metadata: input.metadata ?? {},
      nextStatusCheckAt: resendCheckAt(rt, now),
    })
    .returning();
  await tx
    .update(payments)
    .set({ amountRefunded: sql`${payments.amountRefunded} + ${amount}`, version: sql`${payments.version} + 1`, updatedAt: now })
    .where(and(eq(payments.accountId, payment.accountId), eq(payments.id, payment.id)));
  await refundCreated(tx, {
    accountId: ctx.accountId,
    livemode: ctx.livemode,
    currency: payment.currency,
    amount,
    source: { type: 'refund', id: uuid },
    createdAt: now,
  }, balance.debitSlot ?? 0, fromPending);
  return row!;
}

export const { retrieve: retrieveRefund, list: listRefunds } = tenantReads(REFUNDS, refundView, (q: ListRefundsQuery) => {
  const paymentUuid = q.payment ? idParam('pay', 'payment', q.payment) : undefined;
  return [q.status ? eq(refunds.status, q.status as RefundStatus) : undefined, paymentUuid ? eq(refunds.paymentId, paymentUuid) : undefined];
});
