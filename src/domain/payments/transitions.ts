// The one place where a payment's outcome is applied, whoever learnt it: the request that created
// the payment (second phase), a refresh, the worker's status check, the processor's webhook or a
// test helper. Inside the caller's transaction, with the payment row locked: the payment moves
// (as the transition table allows), its order follows (paid, or open again for another attempt),
// a success is credited to the merchant's balance, and each change writes its event. A payment
// that is already final stays as it is, so late and repeated reports are harmless.
import { paymentOrderStates } from '../payment-orders/state.js';
import type { Executor } from '../../storage/db.js';
import { payments } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import type { RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../../events/service.js';
import { lockPaymentOrder, transitionPaymentOrder } from '../payment-orders/service.js';
import { bookSucceededPayment } from '../terms/booking.js';
import { paymentReversed } from '../../ledger/settlement.js';
import type { Attempt } from '../../connectors/router.js';
import { attemptsView, moneyViewHead, viewTail } from '../../movement/kind.js';
import { DEFAULT_CAPTURE_WINDOW_MS, type CustomerAction, type PaymentFailureCode } from '../../connectors/types.js';
import type { PaymentView } from './schema.js';
import { paymentStates, type PaymentStatus } from './state.js';
import { ledgerEntry, moveTo, save, withAttempts, type Transitions } from '../../movement/transition.js';
import type { Runtime } from '../../runtime.js';
import { isMandateMethod, recordMandateDebit } from '../mandates/debits.js';

export type PaymentRow = typeof payments.$inferSelect;

export function paymentView(row: PaymentRow): PaymentView {
  return {
    ...moneyViewHead('pay', 'payment', row),
    amount_refunded: row.amountRefunded,
    payment_order: toPublicId('ord', row.paymentOrderId),
    payment_method: methodView(row.paymentMethod),
    connector: row.connector,
    connector_reference: row.connectorReference,
    attempts: attemptsView(row.attempts),
    failure_code: row.failureCode,
    failure_message: row.failureMessage,
    next_action: paymentStates.is(row.status, 'withCustomer') ? { type: 'redirect_to_url', url: row.nextActionUrl!, return_url: row.returnUrl! } : null,
    return_url: row.returnUrl,
    ...viewTail(row),
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

/** What is known about a payment now, in the terms of our own states. */
export type PaymentUpdate =
  | { kind: 'succeeded'; connector: string; connectorReference: string }
  /** Accepted and awaiting an asynchronous outcome, or sent without an answer (timeout): to be verified. */
  | { kind: 'pending'; connector: string; connectorReference: string | null }
  /** Manual capture: the processor holds the money (captureBefore: its own deadline, if it said one). */
  | { kind: 'authorized'; connector: string; connectorReference: string; captureBefore: Date | null }
  /** The processor needs the customer (3-D Secure, a redirect) before it decides. */
  | { kind: 'requires_action'; connector: string; connectorReference: string; action: CustomerAction }
  | { kind: 'failed'; connector: string | null; connectorReference: string | null; failureCode: PaymentFailureCode; failureMessage: string }
  /** A direct debit's money came back (late failure, charge-back): failed whatever it reached, a success's booking reversed. */
  | { kind: 'reversed'; connector: string; connectorReference: string | null; failureCode: PaymentFailureCode; failureMessage: string };

/** A payment's transition table with its effects: its order follows, a success is booked. */
const PAYMENT_TRANSITIONS: Transitions<PaymentRow, PaymentStatus, 'payment'> = {
  object: 'payment',
  table: payments,
  states: paymentStates,
  view: paymentView,
  effects: {
    async succeeded(tx, ctx, payment, now) {
      await orderFollows(tx, ctx, payment, now, 'paid');
      // No fee and T+0 unless onboarding set terms: then the entry is paymentSucceeded's, to available.
      await bookSucceededPayment(tx, payment, isMandateMethod(payment.paymentMethod) ? 'mandate' : 'card', now);
      // A settled direct debit keeps its mandate alive: dormancy counts from the last one.
      if (isMandateMethod(payment.paymentMethod)) await recordMandateDebit(tx, payment.accountId, payment.paymentMethod, now);
    },
    failed: (tx, ctx, payment, now) => orderFollows(tx, ctx, payment, now, 'open'),
  },
};

/** The order of a payment that reached its outcome: paid, or open again for another attempt. */
async function orderFollows(tx: Executor, ctx: RequestContext, payment: PaymentRow, now: Date, to: 'paid' | 'open'): Promise<void> {
  const order = await lockPaymentOrder(tx, { ...ctx, accountId: payment.accountId, livemode: payment.livemode }, payment.paymentOrderId);
  if (!order || !paymentOrderStates.is(order.status, 'awaitingPayment')) return;
  if (to === 'paid') await transitionPaymentOrder(tx, ctx, order, 'paid', 'pay', now, { amountPaid: order.amountPaid + payment.amount });
  else await transitionPaymentOrder(tx, ctx, order, 'open', 'reopen after a failed payment', now);
}

/** Applies `update` to the locked payment `row`; returns the row as it now stands. */
export async function applyPaymentUpdate(
  tx: Executor,
  ctx: RequestContext,
  row: PaymentRow,
  update: PaymentUpdate,
  attempts: Attempt[],
  rt: Pick<Runtime, 'now' | 'config' | 'publicUrl'>,
): Promise<PaymentRow> {
  const now = rt.now();
  const t = PAYMENT_TRANSITIONS;
  const keep = () => (attempts.length ? save(tx, t, row, now, { attempts: withAttempts(row, attempts) }) : Promise.resolve(row));
  if (update.kind === 'reversed') {
    if (!paymentStates.is(row.status, 'captured')) return applyPaymentUpdate(tx, ctx, row, { ...update, kind: 'failed' }, attempts, rt);
    return reversePayment(tx, ctx, row, update, now);
  }
  // Final already (a webhook or the worker got there first): keep the outcome, record the calls.
  if (paymentStates.is(row.status, 'final')) return keep();
  // Waiting for the customer: a report that it still waits (or is processing) says nothing new.
  if (paymentStates.is(row.status, 'withCustomer') && (update.kind === 'pending' || update.kind === 'requires_action')) return keep();

  // Authorised: its captures and its void move it on from here, never a report about the charge.
  if (paymentStates.is(row.status, 'authorized')) return keep();
  if (update.kind === 'authorized') return authorize(tx, ctx, row, update, attempts, now);

  if (update.kind === 'requires_action') {
    // Without a return_url nobody can bring the customer back: the payment cannot be completed.
    if (row.returnUrl === null) return applyPaymentUpdate(tx, ctx, row, authenticationRequired(update), attempts, rt);
    return moveTo(tx, t, ctx, row, 'requires_action', 'require action', now, {
      connector: update.connector,
      connectorReference: update.connectorReference,
      customerAction: update.action,
      nextActionUrl: update.action.method === 'GET' ? update.action.url : actionPageUrl(rt.publicUrl(), row),
      actionExpiresAt: new Date(now.getTime() + rt.config.actionTimeoutMs),
      attempts: withAttempts(row, attempts),
      nextStatusCheckAt: new Date(now.getTime() + rt.config.statusCheckIntervalMs),
    });
  }

  if (update.kind === 'pending') {
    const firstAcceptance = row.connector === null;
    const referenceKnown = update.connectorReference === null || update.connectorReference === row.connectorReference;
    if (!firstAcceptance && !attempts.length && referenceKnown) return row;
    const updated = await save(tx, t, row, now, {
      connector: update.connector,
      connectorReference: update.connectorReference ?? row.connectorReference,
      attempts: withAttempts(row, attempts),
      nextStatusCheckAt: new Date(now.getTime() + rt.config.statusCheckIntervalMs),
    });
    if (firstAcceptance) await recordEvent(tx, ctx, 'payment.pending', paymentView(updated), now);
    return updated;
  }

  return moveTo(tx, t, ctx, row, update.kind, update.kind === 'succeeded' ? 'succeed' : 'fail', now, {
    // What a succeeded automatic payment took is captured (refunds draw on captured money).
    ...(update.kind === 'succeeded' && row.captureMethod === 'automatic' ? { amountCaptured: row.amount } : {}),
    connector: update.connector ?? row.connector,
    connectorReference: update.connectorReference ?? row.connectorReference,
    failureCode: update.kind === 'failed' ? update.failureCode : null,
    failureMessage: update.kind === 'failed' ? update.failureMessage : null,
    attempts: withAttempts(row, attempts),
    nextStatusCheckAt: null,
    customerAction: null,
    nextActionUrl: null,
    actionExpiresAt: null,
  });
}

/**
 * A manual payment authorised: requires_capture, the whole amount capturable until capture_before
 * (the processor's deadline, or the documented default window). Nothing is booked: money is booked
 * when captured. Its order stays processing.
 */
async function authorize(tx: Executor, ctx: RequestContext, row: PaymentRow, update: PaymentUpdate & { kind: 'authorized' }, attempts: Attempt[], now: Date): Promise<PaymentRow> {
  paymentStates.assert(row.status, 'requires_capture', 'authorize');
  const updated = await save(tx, PAYMENT_TRANSITIONS, row, now, {
    status: 'requires_capture',
    connector: update.connector,
    connectorReference: update.connectorReference,
    amountCapturable: row.amount,
    captureBefore: update.captureBefore ?? new Date(now.getTime() + DEFAULT_CAPTURE_WINDOW_MS),
    attempts: withAttempts(row, attempts),
    nextStatusCheckAt: null,
    customerAction: null,
    nextActionUrl: null,
    actionExpiresAt: null,
  });
  await recordEvent(tx, ctx, 'payment.authorized', paymentView(updated), now);
  return updated;
}

/**
 * A succeeded direct debit whose money came back: the payment fails (its event says why), and its
 * booking is reversed in the same transaction, even if that takes `available` below zero. Its
 * order stays paid: it was paid, and the money then left again (docs/processors.md, GoCardless).
 */
async function reversePayment(tx: Executor, ctx: RequestContext, row: PaymentRow, update: PaymentUpdate & { kind: 'reversed' }, now: Date): Promise<PaymentRow> {
  const after = await moveTo(tx, PAYMENT_TRANSITIONS, ctx, row, 'failed', 'reverse', now, {
    failureCode: update.failureCode,
    failureMessage: update.failureMessage,
    connectorReference: update.connectorReference ?? row.connectorReference,
    nextStatusCheckAt: null,
  });
  await paymentReversed(tx, ledgerEntry('payment', row, now));
  return after;
}

function authenticationRequired(update: { connector: string; connectorReference: string }): PaymentUpdate {
  return {
    kind: 'failed',
    connector: update.connector,
    connectorReference: update.connectorReference,
    failureCode: 'authentication_required',
    failureMessage: 'The processor needs the customer to authenticate (3-D Secure), and the payment has no return_url to bring them back to.',
  };
}

/** The failure of a customer action abandoned past ACTION_TIMEOUT_MS (the worker's last status check still found it waiting). */
export const ACTION_EXPIRED: PaymentUpdate = {
  kind: 'failed',
  connector: null,
  connectorReference: null,
  failureCode: 'authentication_failed',
  failureMessage: 'The customer did not complete the action (3-D Secure, redirect) in time.',
};

/** Our page that posts a POST action's form to the processor (src/http/routes/payment-actions.ts). */
export function actionPageUrl(base: string, row: Pick<PaymentRow, 'id' | 'actionToken'>): string {
  return `${base}/v1/payments/${toPublicId('pay', row.id)}/action/${row.actionToken}`;
}

/** Our return endpoint for this payment, given to the processor as its return URL (ChargeRequest.returnUrl). */
export function returnEndpointUrl(base: string, row: Pick<PaymentRow, 'id' | 'actionToken'>): string {
  return `${base}/v1/payments/${toPublicId('pay', row.id)}/return/${row.actionToken}`;
}
