// A payment's states as the engine applies them (src/movement/report.ts), whoever learnt the
// outcome: the request that created the payment, a refresh, the worker's status check, the
// processor's webhook or a test helper. The payment moves as its transition table allows, its
// order follows (paid, or open again for another attempt), a success is credited to the
// merchant's balance, and each change writes its event; late and repeated reports are harmless.
import { paymentOrderStates } from '../payment-orders/state.js';
import type { Executor } from '../../storage/db.js';
import { payments } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import type { RequestContext } from '../../kernel/context.js';
import { lockPaymentOrder, transitionPaymentOrder } from '../payment-orders/service.js';
import { bookSucceededPayment } from '../terms/booking.js';
import { paymentReversed } from '../../ledger/settlement.js';
import { attemptsView, connectorView, moneyViewHead, viewTail } from '../../movement/kind.js';
import { DEFAULT_CAPTURE_WINDOW_MS } from '../../connectors/types.js';
import type { ChargeUpdate } from '../../connectors/movements/charge.js';
import type { PaymentView } from './schema.js';
import type { CaptureView } from '../captures/schema.js';
import { capturesByPayment } from '../captures/view.js';
import { disputeIdsByPayment } from './disputed.js';
import { paymentStates, type PaymentGroup, type PaymentStatus } from './state.js';
import { ledgerEntry } from '../../movement/transition.js';
import type { ReportRules, ReportRuntime } from '../../movement/report.js';
import { isMandateMethod, recordMandateDebit } from '../mandates/debits.js';
import { eraseUnsavedCard, reportedCardColumns, saveCardOf, savedMethodOf } from './saving.js';
import { learnIssuingCountry } from './saved-cards.js';
import { eraseInFlightCard } from './in-flight.js';
import { explanationView } from '../routing/strategy.js';
import { cardKeyOf, recordDecline } from './reattempts.js';

export type PaymentRow = typeof payments.$inferSelect;

/** The payment as the API shows it, with its captures (capturesByPayment; none until it is authorised). */
export function paymentView(row: PaymentRow, captures: readonly CaptureView[], disputes: readonly string[] = []): PaymentView {
  return {
    ...moneyViewHead('pay', 'payment', row),
    amount_refunded: row.amountRefunded,
    capture_method: row.captureMethod,
    amount_capturable: row.amountCapturable,
    amount_captured: row.amountCaptured,
    capture_before: row.captureBefore?.toISOString() ?? null,
    cancellation_reason: row.cancellationReason,
    captures: [...captures],
    disputed: row.disputeCount > 0,
    disputes: [...disputes],
    payment_order: toPublicId('ord', row.paymentOrderId),
    payment_method: methodView(row.paymentMethod),
    payment_method_saved: savedMethodOf(row),
    ...connectorView(row),
    attempts: attemptsView(row.attempts),
    routing: explanationView(row.routing, row.attempts),
    failure_code: row.failureCode,
    failure_message: row.failureMessage,
    decline_type: row.declineType,
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

/** What is known about a payment now, in the terms of our own states (read off the connector's answers, src/connectors/movements/charge.ts). */
export type PaymentUpdate = ChargeUpdate;

/**
 * A payment's transition table with its effects and how reports move it (src/movement/report.ts):
 * its order follows, a success is booked, a charge-back of a success reverses the booking.
 */
export const PAYMENT_RULES: ReportRules<PaymentRow, PaymentStatus, 'payment', PaymentGroup, PaymentUpdate> = {
  object: 'payment',
  table: payments,
  states: paymentStates,
  // The view of a payment as it is created (no captures or disputes yet); viewIn lists them once
  // there may be some. Only a manual payment has captures of its own, and only one counted disputed
  // has disputes: any other is spared the query.
  view: (row) => paymentView(row, []),
  viewIn: async (tx, row) =>
    paymentView(
      row,
      row.captureMethod === 'manual' ? ((await capturesByPayment(tx, row, [row.id])).get(row.id) ?? []) : [],
      (await disputeIdsByPayment(tx, row, [row])).get(row.id),
    ),
  open: 'awaiting',
  working: 'pending',
  firstWhen: 'no_connector',
  acceptanceEvent: true,
  check: 'nextStatusCheckAt',
  // A direct debit's money can come back after it succeeded (a late failure, a charge-back).
  late: { reversed: 'captured' },
  // A manual payment authorised holds the money (docs/authorise-and-capture.md): its captures and
  // its void move it on from there, never a report about the charge (requires_capture is not open).
  reaches: { reversed: ['failed'], authorized: ['requires_capture'] },
  events: { requires_capture: 'payment.authorized' },
  settle: (row, reported, now, rt) => {
    const update = asReported(row, reported);
    return { update, set: reportedColumns(update, row, now, rt) };
  },
  // A card kept in flight for the worker's replay (in-flight.ts) is erased as soon as the processor holds the payment.
  effects: {
    requires_action: (tx, _ctx, payment) => eraseInFlightCard(tx, payment),
    async requires_capture(tx, _ctx, payment) {
      await learnIssuingCountry(tx, payment);
      await eraseInFlightCard(tx, payment);
    },
    async succeeded(tx, ctx, payment, now) {
      await eraseInFlightCard(tx, payment);
      await orderFollows(tx, ctx, payment, now, 'paid');
      // No fee and T+0 unless onboarding set terms: then the entry is paymentSucceeded's, to available.
      // A manual payment's captures were booked one by one (src/domain/captures/transitions.ts).
      if (payment.captureMethod === 'automatic') await bookSucceededPayment(tx, payment, isMandateMethod(payment.paymentMethod) ? 'mandate' : 'card', now);
      // A settled direct debit keeps its mandate alive: dormancy counts from the last one.
      if (isMandateMethod(payment.paymentMethod)) await recordMandateDebit(tx, payment.accountId, payment.paymentMethod, now);
      await learnIssuingCountry(tx, payment);
      return saveCardOf(tx, ctx, payment);
    },
    async failed(tx, ctx, payment, now, before) {
      // A succeeded payment whose money came back: its booking is reversed, even if that takes
      // `available` below zero; its order stays paid — it was paid, and the money then left again
      // (docs/processors.md, GoCardless).
      if (paymentStates.is(before.status, 'captured')) await paymentReversed(tx, ledgerEntry('payment', payment, now));
      else await orderFollows(tx, ctx, payment, now, 'open');
      await recordFinalDecline(tx, payment, now);
      await learnIssuingCountry(tx, payment);
      await eraseUnsavedCard(ctx, tx, payment);
      await eraseInFlightCard(tx, payment);
    },
    // Its authorisation voided (src/domain/voids): nothing was taken, the order takes another payment.
    async canceled(tx, ctx, payment, now) {
      await orderFollows(tx, ctx, payment, now, 'open');
      await eraseUnsavedCard(ctx, tx, payment);
      await eraseInFlightCard(tx, payment);
    },
  },
};

/**
 * A card payment ending declined counts for the networks' reattempt limits (reattempts.ts); the
 * declines a cascade sent on were counted when it did, and a reattempt refused was no decline.
 */
async function recordFinalDecline(tx: Executor, payment: PaymentRow, now: Date): Promise<void> {
  const key = cardKeyOf(payment);
  if (!key || payment.declineType === null || payment.failureCode === 'retry_limit_reached' || payment.failureCode === 'authentication_failed') return;
  // The advice the processor passed with the refusal, however it was reported (reportedCardColumns).
  const card = (payment.paymentMethod as { card?: { reported_merchant_advice?: string } }).card;
  await recordDecline(tx, payment, key, payment.id, { declineType: payment.declineType, merchantAdvice: card?.reported_merchant_advice }, now);
}

const ACTION_CLOSED = { customerAction: null, nextActionUrl: null, actionExpiresAt: null };

/** A report as it counts for this payment. */
function asReported(row: PaymentRow, update: PaymentUpdate): PaymentUpdate {
  // Without a return_url nobody can bring the customer back: the payment cannot be completed.
  if (update.kind === 'requires_action' && row.returnUrl === null) return authenticationRequired(update);
  // A processor that does not say it only authorised (a webhook without our capture method) still did.
  if (update.kind === 'succeeded' && row.captureMethod === 'manual') return { ...update, kind: 'authorized', captureBefore: null };
  return update;
}

/** The columns the status a report ends in writes (requires_capture for `authorized`, failed for `reversed`). */
function reportedColumns(update: PaymentUpdate, row: PaymentRow, now: Date, rt: ReportRuntime): Partial<PaymentRow> {
  switch (update.kind) {
    case 'requires_action':
      return {
        customerAction: update.action,
        nextActionUrl: update.action.method === 'GET' ? update.action.url : actionPageUrl(rt.publicUrl(), row),
        actionExpiresAt: new Date(now.getTime() + rt.config.actionTimeoutMs),
        nextStatusCheckAt: new Date(now.getTime() + rt.config.statusCheckIntervalMs),
      };
    // The whole amount capturable until capture_before (the processor's deadline, or the default window); nothing is booked.
    case 'authorized':
      return {
        ...ACTION_CLOSED,
        ...reportedCardColumns(update, row),
        amountCapturable: row.amount,
        captureBefore: update.captureBefore ?? new Date(now.getTime() + DEFAULT_CAPTURE_WINDOW_MS),
      };
    // What a succeeded automatic payment took is captured (refunds draw on captured money).
    case 'succeeded':
      return { ...ACTION_CLOSED, ...(row.captureMethod === 'automatic' ? { amountCaptured: row.amount } : {}), ...reportedCardColumns(update, row) };
    case 'failed':
    case 'reversed':
      return { ...ACTION_CLOSED, declineType: (update.kind === 'failed' && update.declineType) || null, ...reportedCardColumns(update, row) };
    case 'pending':
      return {};
  }
}

/** The order of a payment that reached its outcome: paid, or open again for another attempt. */
async function orderFollows(tx: Executor, ctx: RequestContext, payment: PaymentRow, now: Date, to: 'paid' | 'open'): Promise<void> {
  const order = await lockPaymentOrder(tx, { ...ctx, accountId: payment.accountId, livemode: payment.livemode }, payment.paymentOrderId);
  if (!order || !paymentOrderStates.is(order.status, 'awaitingPayment')) return;
  // Paid with what was captured: all of it for an automatic payment, its captures' sum for a manual one.
  if (to === 'paid') await transitionPaymentOrder(tx, ctx, order, 'paid', 'pay', now, { amountPaid: order.amountPaid + payment.amountCaptured });
  else await transitionPaymentOrder(tx, ctx, order, 'open', 'reopen after a failed or voided payment', now);
}

function authenticationRequired(update: { connector?: string | null; connectorReference?: string | null }): PaymentUpdate {
  return {
    kind: 'failed',
    connector: update.connector ?? null,
    connectorReference: update.connectorReference ?? null,
    failureCode: 'authentication_required',
    declineType: 'authentication_required',
    failureMessage: 'The processor needs the customer to authenticate (3-D Secure), and the payment has no return_url to bring them back to.',
  };
}

/** The failure of a customer action abandoned past ACTION_TIMEOUT_MS (the worker's last status check still found it waiting). */
export const ACTION_EXPIRED: PaymentUpdate = {
  kind: 'failed',
  connector: null,
  connectorReference: null,
  failureCode: 'authentication_failed',
  declineType: 'authentication_required',
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
