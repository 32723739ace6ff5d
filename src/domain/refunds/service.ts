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
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { payments, refunds } from '../../storage/schema.js';
import { newId, parseId } from '../../kernel/ids.js';
import { ApiError, invalidState } from '../../kernel/errors.js';
import { setRecoveryPoint } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../../events/service.js';
import { notFound } from '../../kernel/lookup.js';
import { idParam } from '../../kernel/pagination.js';
import { ownRow, type Resource, tenantReads } from '../../kernel/tenant.js';
import { lockAvailableBalance, refundCreated } from '../../ledger/journal.js';
import { drawPending, lockPending } from '../../ledger/settlement.js';
import type { PaymentRow } from '../payments/outcome.js';
import { lockRow } from '../../movement/apply.js';
import type { Runtime } from '../../runtime.js';
import type { CreateRefundBody, ListRefundsQuery } from './schema.js';
import type { RefundStatus } from './state.js';
import { refundView } from './outcome.js';
import { refundKind, refundRequest } from './kind.js';
import { finishRequest } from '../../movement/apply.js';
import { sendAndFinish } from '../../movement/saga.js';
import { planted } from '../../kernel/plants.js';

const RECOVERY_PREFIX = 'refund_created:';

const REFUNDS: Resource<typeof refunds> = { table: refunds, prefix: 'ref', name: 'refund' };

export async function createRefund(db: Db, rt: Runtime, ctx: RequestContext, input: CreateRefundBody): Promise<Outcome> {
  const recovery = ctx.idempotency?.recoveryPoint ?? 'started';
  if (recovery.startsWith(RECOVERY_PREFIX)) return resumeRefund(db, rt, ctx, recovery.slice(RECOVERY_PREFIX.length));
  const now = rt.now();
  const paymentUuid = parseId('pay', input.payment);
  const created = paymentUuid
    ? await db.transaction(async (tx) => {
        // Scoped by mode too, so a request never locks the other mode's row.
        const payment = await lockRow<PaymentRow>(tx, payments, ctx.accountId, ctx.livemode, paymentUuid);
        if (!payment) return undefined;
        if (payment.status !== 'succeeded') throw invalidState('payment', payment.status, ['succeeded'], 'refund');
        const remaining = payment.amount - payment.amountRefunded;
        const amount = input.amount ?? remaining;
        if ((remaining <= 0 || amount > remaining) && !planted('refund-skips-sum-check')) {
          throw new ApiError('amount_above_refundable', {
            param: 'amount',
            message: `The amount (${amount}) is above what remains refundable on ${input.payment}: ${remaining} ${payment.currency} of ${payment.amount}.`,
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
        const { uuid } = newId('ref');
        const [row] = await tx
          .insert(refunds)
          .values({
            accountId: ctx.accountId,
            id: uuid,
            livemode: ctx.livemode,
            paymentId: payment.id,
            status: 'pending',
            amount,
            currency: payment.currency,
            reason: input.reason ?? null,
            connector: payment.connector!,
            metadata: input.metadata ?? {},
            nextStatusCheckAt: new Date(now.getTime() + rt.idempotencyLockTimeoutS * 1000 + rt.config.connectorTimeoutMs + rt.config.statusCheckIntervalMs),
            createdAt: now,
            updatedAt: now,
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
        await recordEvent(tx, ctx, 'refund.created', refundView(row!), now);
        await setRecoveryPoint(tx, ctx, `${RECOVERY_PREFIX}${uuid}`);
        return row!;
      })
    : undefined;
  if (!created) {
    const missing = await notFound(db, ctx, payments, paymentUuid, 'payment', input.payment);
    throw new ApiError('resource_missing', { param: 'payment', message: missing.message });
  }
  rt.crashPoint('refund_created');
  return sendAndFinish(db, rt, refundKind, ctx, created, await refundRequest(db, created));
}

async function resumeRefund(db: Db, rt: Runtime, ctx: RequestContext, uuid: string): Promise<Outcome> {
  const [row] = await db.select().from(refunds).where(ownRow(ctx, REFUNDS, uuid));
  if (!row) throw new Error(`recovery point names refund ${uuid}, which does not exist`);
  // Sent and answered meanwhile (webhook, worker): finish with what is known.
  if (row.status !== 'pending' || row.connectorReference !== null) return finishRequest(db, rt, refundKind, ctx, uuid, { update: undefined });
  return sendAndFinish(db, rt, refundKind, ctx, row, await refundRequest(db, row));
}

export const { retrieve: retrieveRefund, list: listRefunds } = tenantReads(REFUNDS, refundView, (q: ListRefundsQuery) => {
  const paymentUuid = q.payment ? idParam('pay', 'payment', q.payment) : undefined;
  return [q.status ? eq(refunds.status, q.status as RefundStatus) : undefined, paymentUuid ? eq(refunds.paymentId, paymentUuid) : undefined];
});
