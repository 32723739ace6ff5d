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
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { payments, refunds } from '../../storage/schema.js';
import { newId, parseId, toPublicId } from '../../kernel/ids.js';
import { ApiError, invalidState } from '../../kernel/errors.js';
import { respond, setRecoveryPoint } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../events/service.js';
import { notFound } from '../../kernel/lookup.js';
import { planPage, toPage, type Page } from '../../kernel/pagination.js';
import { lockAvailableBalance, refundCreated, refundFailed, refundSettled } from '../../ledger/journal.js';
import { callConnector } from '../../connectors/router.js';
import { isRetryable, type RefundFailureCode, type RefundResult, type RefundState } from '../../connectors/types.js';
import { lockPayment } from '../payments/outcome.js';
import type { Runtime } from '../../runtime.js';
import type { CreateRefundBody, ListRefundsQuery, RefundView } from './schema.js';
import { refundStates, type RefundStatus } from './state.js';

export type RefundRow = typeof refunds.$inferSelect;
const RECOVERY_PREFIX = 'refund_created:';

export function refundView(row: RefundRow): RefundView {
  return {
    id: toPublicId('ref', row.id),
    object: 'refund',
    livemode: row.livemode,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    payment: toPublicId('pay', row.paymentId),
    reason: row.reason as RefundView['reason'],
    connector: row.connector,
    connector_reference: row.connectorReference,
    failure_code: row.failureCode,
    failure_message: row.failureMessage,
    metadata: row.metadata,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function byId(ctx: RequestContext, uuid: string): SQL {
  return and(eq(refunds.accountId, ctx.accountId), eq(refunds.livemode, ctx.livemode), eq(refunds.id, uuid))!;
}

export async function lockRefund(tx: Executor, accountId: string, livemode: boolean, uuid: string): Promise<RefundRow | undefined> {
  const [row] = await tx
    .select()
    .from(refunds)
    .where(and(eq(refunds.accountId, accountId), eq(refunds.livemode, livemode), eq(refunds.id, uuid)))
    .for('update');
  return row;
}

export type RefundUpdate =
  | { kind: 'succeeded'; connectorReference: string }
  | { kind: 'pending'; connectorReference: string | null }
  | { kind: 'failed'; connectorReference: string | null; failureCode: RefundFailureCode; failureMessage: string };

export function updateFromRefundState(state: RefundState): RefundUpdate {
  switch (state.kind) {
    case 'succeeded':
    case 'pending':
      return { kind: state.kind, connectorReference: state.connectorReference };
    case 'failed':
      return { kind: 'failed', connectorReference: state.connectorReference, failureCode: state.failureCode, failureMessage: state.message };
    default:
      return state satisfies never;
  }
}

export function updateFromRefundResult(result: RefundResult): RefundUpdate {
  if (result.kind !== 'error') return updateFromRefundState(result);
  if (isRetryable(result) || result.code === 'request_rejected') {
    return { kind: 'failed', connectorReference: null, failureCode: 'processing_error', failureMessage: `The connector could not process the refund (${result.code}).` };
  }
  return { kind: 'pending', connectorReference: null };
}

/** Applies an update to a locked refund; the single place refunds change state. */
export async function applyRefundUpdate(
  tx: Executor,
  ctx: RequestContext,
  row: RefundRow,
  update: RefundUpdate,
  opts: { now: Date; statusCheckIntervalMs: number },
): Promise<RefundRow> {
  const { now } = opts;
  if (row.status !== 'pending') return row;
  const where = and(eq(refunds.accountId, row.accountId), eq(refunds.id, row.id));
  const movement = {
    accountId: row.accountId,
    livemode: row.livemode,
    currency: row.currency,
    amount: row.amount,
    source: { type: 'refund' as const, id: row.id },
    createdAt: now,
  };
  if (update.kind === 'pending') {
    const accepted = row.connectorReference === null && update.connectorReference !== null;
    const [updated] = await tx
      .update(refunds)
      .set({
        connectorReference: update.connectorReference ?? row.connectorReference,
        nextStatusCheckAt: new Date(now.getTime() + opts.statusCheckIntervalMs),
        ...(accepted ? { version: sql`${refunds.version} + 1`, updatedAt: now } : {}),
      })
      .where(where)
      .returning();
    if (accepted) await recordEvent(tx, ctx, 'refund.pending', refundView(updated!), now);
    return updated!;
  }
  refundStates.assert(row.status, update.kind, update.kind === 'succeeded' ? 'succeed' : 'fail');
  const [updated] = await tx
    .update(refunds)
    .set({
      status: update.kind,
      connectorReference: update.connectorReference ?? row.connectorReference,
      failureCode: update.kind === 'failed' ? update.failureCode : null,
      failureMessage: update.kind === 'failed' ? update.failureMessage : null,
      nextStatusCheckAt: null,
      version: sql`${refunds.version} + 1`,
      updatedAt: now,
    })
    .where(where)
    .returning();
  if (update.kind === 'succeeded') {
    await refundSettled(tx, movement);
  } else {
    // The money never left: the payment may be refunded by that much again.
    await tx
      .update(payments)
      .set({ amountRefunded: sql`${payments.amountRefunded} - ${row.amount}`, version: sql`${payments.version} + 1`, updatedAt: now })
      .where(and(eq(payments.accountId, row.accountId), eq(payments.id, row.paymentId)));
    await refundFailed(tx, movement);
  }
  await recordEvent(tx, ctx, `refund.${update.kind}`, refundView(updated!), now);
  return updated!;
}

function applyOptions(rt: Runtime) {
  return { now: rt.now(), statusCheckIntervalMs: rt.config.statusCheckIntervalMs };
}

export async function createRefund(db: Db, rt: Runtime, ctx: RequestContext, input: CreateRefundBody): Promise<Outcome> {
  const recovery = ctx.idempotency?.recoveryPoint ?? 'started';
  if (recovery.startsWith(RECOVERY_PREFIX)) return resumeRefund(db, rt, ctx, recovery.slice(RECOVERY_PREFIX.length));
  const now = rt.now();
  const paymentUuid = parseId('pay', input.payment);
  const created = paymentUuid
    ? await db.transaction(async (tx) => {
        // Scoped by mode too, so a request never locks the other mode's row.
        const payment = await lockPayment(tx, ctx.accountId, ctx.livemode, paymentUuid);
        if (!payment) return undefined;
        if (payment.status !== 'succeeded') throw invalidState('payment', payment.status, ['succeeded'], 'refund');
        const remaining = payment.amount - payment.amountRefunded;
        const amount = input.amount ?? remaining;
        if (remaining <= 0 || amount > remaining) {
          throw new ApiError('amount_above_refundable', {
            param: 'amount',
            message: `The amount (${amount}) is above what remains refundable on ${input.payment}: ${remaining} ${payment.currency} of ${payment.amount}.`,
          });
        }
        // The refund is paid out of the available balance: money a payout has reserved meanwhile
        // is not there to refund with, so the balance is locked and checked like a payout's.
        const balance = await lockAvailableBalance(tx, { accountId: ctx.accountId, livemode: ctx.livemode, currency: payment.currency });
        if (balance.debitSlot === undefined || balance.available < amount) {
          throw new ApiError('insufficient_balance', {
            param: 'amount',
            message: `The available ${payment.currency} balance (${Math.max(0, balance.available)}) does not cover the refund amount ${amount}.`,
          });
        }
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
        }, balance.debitSlot);
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
  return sendAndFinish(db, rt, ctx, created);
}

/** Phases 2 and 3; the refund id is the processor's idempotency key, so sending again is safe. */
export async function sendRefund(rt: Runtime, row: RefundRow): Promise<RefundUpdate> {
  const guarded = await callConnector(rt.call, row.connector, (c, signal) =>
    c.refund(
      {
        reference: toPublicId('ref', row.id),
        paymentReference: toPublicId('pay', row.paymentId),
        connectorPaymentReference: null,
        amount: row.amount,
        currency: row.currency,
      },
      signal,
    ),
  );
  // A connector skipped for its open circuit has not been asked: leave the refund for the worker.
  if ('skipped' in guarded) return { kind: 'pending', connectorReference: null };
  return updateFromRefundResult(guarded.result);
}

async function sendAndFinish(db: Db, rt: Runtime, ctx: RequestContext, row: RefundRow): Promise<Outcome> {
  const update = await sendRefund(rt, row);
  return finish(db, rt, ctx, row.id, update);
}

async function finish(db: Db, rt: Runtime, ctx: RequestContext, uuid: string, update: RefundUpdate | undefined): Promise<Outcome> {
  return db.transaction(async (tx) => {
    const row = await lockRefund(tx, ctx.accountId, ctx.livemode, uuid);
    if (!row) throw new Error(`refund ${uuid} vanished between phases`);
    const after = update ? await applyRefundUpdate(tx, ctx, row, update, applyOptions(rt)) : row;
    return respond(tx, ctx, 201, refundView(after));
  });
}

async function resumeRefund(db: Db, rt: Runtime, ctx: RequestContext, uuid: string): Promise<Outcome> {
  const [row] = await db.select().from(refunds).where(byId(ctx, uuid));
  if (!row) throw new Error(`recovery point names refund ${uuid}, which does not exist`);
  if (row.status !== 'pending' || row.connectorReference !== null) return finish(db, rt, ctx, uuid, undefined);
  return sendAndFinish(db, rt, ctx, row);
}

/** Applies a processor's report about a refund in its own transaction (worker, webhook). */
export async function applyRefundState(db: Db, rt: Runtime, ctx: RequestContext, accountId: string, uuid: string, update: RefundUpdate, tx?: Executor) {
  const run = async (t: Executor) => {
    const row = await lockRefund(t, accountId, ctx.livemode, uuid);
    return row ? applyRefundUpdate(t, ctx, row, update, applyOptions(rt)) : undefined;
  };
  return tx ? run(tx) : db.transaction(run);
}

export async function retrieveRefund(db: Db, ctx: RequestContext, id: string): Promise<RefundView> {
  const uuid = parseId('ref', id);
  if (uuid) {
    const [row] = await db.select().from(refunds).where(byId(ctx, uuid));
    if (row) return refundView(row);
  }
  throw await notFound(db, ctx, refunds, uuid, 'refund', id);
}

export async function listRefunds(db: Db, ctx: RequestContext, params: ListRefundsQuery): Promise<Page<RefundView>> {
  let paymentUuid: string | undefined;
  if (params.payment) {
    paymentUuid = parseId('pay', params.payment);
    if (!paymentUuid) throw new ApiError('parameter_invalid', { param: 'payment', message: 'payment must be an id starting with pay_.' });
  }
  const plan = planPage('ref', refunds.id, refunds.createdAt, params);
  const rows = await db
    .select()
    .from(refunds)
    .where(
      and(
        eq(refunds.accountId, ctx.accountId),
        eq(refunds.livemode, ctx.livemode),
        params.status ? eq(refunds.status, params.status as RefundStatus) : undefined,
        paymentUuid ? eq(refunds.paymentId, paymentUuid) : undefined,
        plan.where,
      ),
    )
    .orderBy(plan.orderBy)
    .limit(plan.fetch);
  return toPage(rows, plan, refundView);
}
