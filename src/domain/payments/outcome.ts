// The one place where a payment's outcome is applied, whoever learnt it: the request that created
// the payment (second phase), a refresh, the worker's status check, the processor's webhook or a
// test helper. Inside the caller's transaction, with the payment row locked: the payment moves
// (as the transition table allows), its order follows (paid, or open again for another attempt),
// a success is credited to the merchant's balance, and each change writes its event. A payment
// that is already final stays as it is, so late and repeated reports are harmless.
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { payments } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import type { RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../events/service.js';
import { lockPaymentOrder, transitionPaymentOrder } from '../payment-orders/service.js';
import { paymentSucceeded } from '../../ledger/journal.js';
import type { Attempt } from '../../connectors/router.js';
import { attemptsView } from '../../movement/kind.js';
import type { ChargeState, PaymentFailureCode } from '../../connectors/types.js';
import type { PaymentView } from './schema.js';
import { paymentStates } from './state.js';
import { isMandateMethod, recordMandateDebit } from '../mandates/debits.js';

export type PaymentRow = typeof payments.$inferSelect;

export function paymentView(row: PaymentRow): PaymentView {
  return {
    id: toPublicId('pay', row.id),
    object: 'payment',
    livemode: row.livemode,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    amount_refunded: row.amountRefunded,
    payment_order: toPublicId('ord', row.paymentOrderId),
    payment_method: methodView(row.paymentMethod),
    connector: row.connector,
    connector_reference: row.connectorReference,
    attempts: attemptsView(row.attempts),
    failure_code: row.failureCode,
    failure_message: row.failureMessage,
    metadata: row.metadata,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

// jsonb keeps keys in its own order; views list them in the documented one.
function methodView(stored: Record<string, unknown>): PaymentView['payment_method'] {
  if (isMandateMethod(stored)) return { type: 'mandate', mandate: stored.mandate, scheme: stored.scheme, last4: stored.last4 };
  const card = (stored as { card: Extract<PaymentView['payment_method'], { type: 'card' }>['card'] }).card;
  return {
    type: 'card',
    card: { brand: card.brand, last4: card.last4, exp_month: card.exp_month, exp_year: card.exp_year, fingerprint: card.fingerprint },
  };
}

export async function lockPayment(tx: Executor, accountId: string, livemode: boolean, uuid: string): Promise<PaymentRow | undefined> {
  const [row] = await tx
    .select()
    .from(payments)
    .where(and(eq(payments.accountId, accountId), eq(payments.livemode, livemode), eq(payments.id, uuid)))
    .for('update');
  return row;
}

/** What is known about a payment now, in the terms of our own states. */
export type PaymentUpdate =
  | { kind: 'succeeded'; connector: string; connectorReference: string }
  /** Accepted and awaiting an asynchronous outcome, or sent without an answer (timeout): to be verified. */
  | { kind: 'pending'; connector: string; connectorReference: string | null }
  | { kind: 'failed'; connector: string | null; connectorReference: string | null; failureCode: PaymentFailureCode; failureMessage: string };

export function updateFromState(connector: string, state: ChargeState): PaymentUpdate {
  switch (state.kind) {
    case 'succeeded':
      return { kind: 'succeeded', connector, connectorReference: state.connectorReference };
    case 'pending':
      return { kind: 'pending', connector, connectorReference: state.connectorReference };
    case 'declined':
      return { kind: 'failed', connector, connectorReference: state.connectorReference, failureCode: state.failureCode, failureMessage: state.message };
    default:
      return state satisfies never;
  }
}

export interface ApplyOptions {
  now: Date;
  statusCheckIntervalMs: number;
}

/** Applies `update` to the locked payment `row`; returns the row as it now stands. */
export async function applyPaymentUpdate(
  tx: Executor,
  ctx: RequestContext,
  row: PaymentRow,
  update: PaymentUpdate,
  attempts: Attempt[],
  opts: ApplyOptions,
): Promise<PaymentRow> {
  const { now } = opts;
  const where = and(eq(payments.accountId, row.accountId), eq(payments.livemode, row.livemode), eq(payments.id, row.id));
  const withAttempts = attempts.length ? [...row.attempts, ...(attempts as unknown as Record<string, unknown>[])] : row.attempts;

  if (row.status !== 'pending') {
    // Final already (a webhook or the worker got there first): keep the outcome, record the calls.
    if (!attempts.length) return row;
    const [kept] = await tx
      .update(payments)
      .set({ attempts: withAttempts, version: sql`${payments.version} + 1`, updatedAt: now })
      .where(where)
      .returning();
    return kept!;
  }

  if (update.kind === 'pending') {
    const firstAcceptance = row.connector === null;
    const referenceKnown = update.connectorReference === null || update.connectorReference === row.connectorReference;
    if (!firstAcceptance && !attempts.length && referenceKnown) return row;
    const [updated] = await tx
      .update(payments)
      .set({
        connector: update.connector,
        connectorReference: update.connectorReference ?? row.connectorReference,
        attempts: withAttempts,
        nextStatusCheckAt: new Date(now.getTime() + opts.statusCheckIntervalMs),
        version: sql`${payments.version} + 1`,
        updatedAt: now,
      })
      .where(where)
      .returning();
    if (firstAcceptance) await recordEvent(tx, ctx, 'payment.pending', paymentView(updated!), now);
    return updated!;
  }

  paymentStates.assert(row.status, update.kind, update.kind === 'succeeded' ? 'succeed' : 'fail');
  const [updated] = await tx
    .update(payments)
    .set({
      status: update.kind,
      connector: update.connector ?? row.connector,
      connectorReference: update.connectorReference ?? row.connectorReference,
      failureCode: update.kind === 'failed' ? update.failureCode : null,
      failureMessage: update.kind === 'failed' ? update.failureMessage : null,
      attempts: withAttempts,
      nextStatusCheckAt: null,
      version: sql`${payments.version} + 1`,
      updatedAt: now,
    })
    .where(where)
    .returning();
  const payment = updated!;
  const view = paymentView(payment);

  const order = await lockPaymentOrder(tx, { ...ctx, accountId: row.accountId, livemode: row.livemode }, row.paymentOrderId);
  if (order?.status === 'processing') {
    if (update.kind === 'succeeded') {
      await transitionPaymentOrder(tx, ctx, order, 'paid', 'pay', now, { amountPaid: order.amountPaid + payment.amount });
    } else {
      await transitionPaymentOrder(tx, ctx, order, 'open', 'reopen after a failed payment', now);
    }
  }
  if (update.kind === 'succeeded') {
    await paymentSucceeded(tx, {
      accountId: payment.accountId,
      livemode: payment.livemode,
      currency: payment.currency,
      amount: payment.amount,
      source: { type: 'payment', id: payment.id },
      createdAt: now,
    });
    // A settled direct debit keeps its mandate alive: dormancy counts from the last one.
    if (isMandateMethod(payment.paymentMethod)) await recordMandateDebit(tx, payment.accountId, payment.paymentMethod, now);
  }
  await recordEvent(tx, ctx, `payment.${update.kind}`, view, now);
  return payment;
}
