// Payments: one attempt to pay an order, routed to connectors, run by the movement engine
// (src/movement/engine.ts) in its three phases. This file gives the payment's admit rule (the
// order locked and open, the route fixed, the payment inserted pending and the order moved to
// processing), what is sent (the card lives in memory for the call only, or the mandate as the
// processor knows it) and what a resumed retry sends again; docs/payments.md tells the whole story.
import { resolveThroughTestControl } from '../test-controls.js';
import { eq } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { insertRow } from '../../storage/prepared.js';
import { paymentOrders, payments } from '../../storage/schema.js';
import { parseId, toPublicId } from '../../kernel/ids.js';
import { ApiError, invalidState } from '../../kernel/errors.js';
import { respond } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { notFound } from '../../storage/lookup.js';
import { idParam, type Page } from '../../kernel/pagination.js';
import { listPage, loadOne, type Resource } from '../../storage/tenant.js';
import { lockPaymentOrder, transitionPaymentOrder } from '../payment-orders/service.js';
import { orderPayable, paymentOrderStates } from '../payment-orders/state.js';
import { onlySimulated, routeReplaysSends, routingFor } from '../routing/targets.js';
import { requireTestCard } from './cards.js';
import { tryCreateCardPaymentAtOnce } from './one-statement.js';
import { finishSucceededAtOnce } from './finish-at-once.js';
import type { CardDetails, ChargeRequest, ChargeState } from '../../connectors/types.js';
import { testHelpersOnly } from '../../ledger/balance.js';
import type { Runtime } from '../../runtime.js';
import type { CreatePaymentBody, ListPaymentsQuery, PaymentView } from './schema.js';
import { PAYMENT_RULES, paymentView, type PaymentRow, type PaymentUpdate } from './transitions.js';
import { capturesByPayment } from '../captures/view.js';
import { disputeIdsByPayment } from './disputed.js';
import { viewIn } from '../../movement/transition.js';

type SucceededUpdate = Extract<PaymentUpdate, { kind: 'succeeded' }>;
import type { MandateRow } from '../mandates/transitions.js';
import {
  captureMethodOf,
  cardPaymentMethod,
  chargeRequest,
  debitOf,
  methodOf,
  newPaymentRow,
  planPaymentCascade,
  planPaymentRoute,
  returnUrlOf,
  routeAvailable,
  segmentBrandOf,
} from './new-payment.js';
import { outcomesFor } from '../routing/stats.js';
import { paymentKind } from './kind.js';
import { attemptReference, offSessionReattempt } from './cascade.js';
import { saveRequestOf, sealForSaving } from './saving.js';
import { keepInFlight } from './in-flight.js';
import { offSessionOf, savedCardPaymentMethod, savedCardUseOf, unsealedCharge, usableSavedCard } from './saved-cards.js';
import { applyState } from '../../movement/apply.js';
import { askStatus } from '../../movement/calls.js';
import type { Admission, NewMovement } from '../../movement/engine.js';
import type { MovementRow } from '../../movement/row.js';
import { paymentStates, type PaymentStatus } from './state.js';
import { isMandateMethod, lockMandateForDebit, mandatePaymentMethod } from '../mandates/debits.js';
import { loadMandate } from '../mandates/service.js';


const PAYMENTS: Resource<typeof payments> = { table: payments, prefix: 'pay', name: 'payment' };

/** Before a saved card's first call, on either path: only a saved card may be charged off session, and so count as a reattempt. */
const reattemptCheck = (db: Db, rt: Runtime, ctx: RequestContext) => (row: MovementRow) => offSessionReattempt(db, rt, ctx, row as PaymentRow);

/** POST /v1/payments as the engine runs it (runMovement): a payment of an open order, its admit rule and what it sends. */
export function newPayment(db: Db, rt: Runtime, ctx: RequestContext, input: CreatePaymentBody): NewMovement<PaymentRow, ChargeRequest> {
  return {
    kind: paymentKind,
    oneStatement: async () => {
      const atOnce = await tryCreateCardPaymentAtOnce(db, rt, ctx, input);
      if (!atOnce) return undefined;
      const { created, charged } = atOnce;
      const row = created.payment;
      const saved = 'saved' in charged;
      return {
        row,
        request: chargeRequest(row, saved ? await unsealedCharge(db, rt, ctx, row, charged.cvc) : { card: charged.card }, rt.publicUrl()),
        before: saved ? reattemptCheck(db, rt, ctx) : undefined,
        finish: async (update, attempts) =>
          update.kind === 'succeeded' ? finishSucceededAtOnce(db, ctx, created, update as SucceededUpdate, attempts, rt.now()) : undefined,
      };
    },
    // A resumed debit is sent as it was planned: the mandate was eligible when the payment was
    // created, and the processor refuses it if it no longer holds the mandate.
    // A cascaded attempt (n > 1) resumed after a crash is sent without a CVC (docs/declines.md).
    resend: async (row) => {
      const method = methodOf(input, ctx.livemode, rt.now(), true);
      const cvc = row.attemptNumber > 1 ? undefined : (method as { cvc?: string; card?: CardDetails }).cvc ?? (method as { card?: CardDetails }).card?.cvc;
      const charged = isMandateMethod(row.paymentMethod)
        ? debitOf(await loadMandate(db, ctx, row.paymentMethod.mandate))
        : savedCardUseOf(row)
        ? await unsealedCharge(db, rt, ctx, row, cvc)
        : { card: { ...(method as { card: CardDetails }).card, cvc: cvc ?? '' } };
      return chargeRequest(row, charged, rt.publicUrl());
    },
    plan: () => planPayment(db, rt, ctx, input),
  };
}

/** The fresh path of a payment: its method and return URL checked, routing read, then its admit rule. */
async function planPayment(db: Db, rt: Runtime, ctx: RequestContext, input: CreatePaymentBody): Promise<Admission<PaymentRow, ChargeRequest>> {
  const method = methodOf(input, ctx.livemode, rt.now(), false);
  const save = saveRequestOf(input);
  const offSession = offSessionOf(input);
  const saved = method.type === 'saved_card' ? await usableSavedCard(db, ctx, method.id, offSession) : undefined;
  const returnUrl = returnUrlOf(input, ctx.livemode);
  const orderUuid = parseId('ord', input.payment_order);
  const routing = await routingFor(db, rt, ctx);
  const outcomes = await outcomesFor(db, rt, ctx, routing);
  // Unknown, foreign or other-mode mandates answer 404 like any id; eligibility is checked locked, below.
  const mandate = method.type === 'mandate' ? await loadMandate(db, ctx, method.id, 'payment_method.mandate') : undefined;
  let debited: MandateRow | undefined;
  return {
    admit: async (tx, now) => {
      if (!orderUuid) return undefined;
      const order = await lockPaymentOrder(tx, ctx, orderUuid);
      if (!order) return undefined;
      if (!orderPayable.test(order, now)) {
        const status = paymentOrderStates.is(order.status, 'payable') ? 'past its expires_at' : order.status;
        throw new ApiError('order_not_payable', { param: 'payment_order', message: `The payment order ${input.payment_order} is ${status}; only an open order can be paid.` });
      }
      if (mandate) debited = await lockMandateForDebit(tx, mandate, order);
      const captureMethod = captureMethodOf(input, order);
      // A direct debit is collected, never held: there is nothing to capture later.
      if (debited && captureMethod === 'manual') {
        throw new ApiError('capture_not_supported', { param: 'capture_method', message: 'A mandate debit is collected when it is confirmed; it cannot be authorised and captured later.' });
      }
      const planned = planPaymentRoute(rt, routing, order, method.type, { brand: segmentBrandOf(method, saved), country: saved?.cardIssuingCountry ?? null }, outcomes);
      let route = planned.route;
      // A mandate lives at one processor: its debits can go nowhere else, so there is no fallback.
      if (debited) {
        const holder = debited.connector!;
        if (!route.includes(holder)) {
          throw new ApiError('routing_no_match', {
            message: `The routing rule matching this debit does not list ${holder}, the connector holding the mandate; see GET /v1/routing.`,
          });
        }
        route = [holder];
      }
      const ranked = { route, explanation: { ...planned.explanation, chosen: route[0] ?? null } };
      if (route.length === 0) throw new ApiError('routing_no_match');
      if (method.type === 'card') requireTestCard(method.card, ctx.livemode, onlySimulated(routing, route));
      if (!routeAvailable(rt, route)) {
        throw new ApiError('processor_unavailable', { message: `Every connector of the route (${route.join(', ')}) is failing; nothing was created. Retry later.` });
      }
      const cascade = debited ? null : planPaymentCascade(routing, order, method.type);
      if (saved) {
        const row = await insertRow(tx, payments, newPaymentRow(rt, ctx, order, captureMethod, savedCardPaymentMethod(saved, offSession), ranked, input.metadata ?? {}, now, returnUrl, cascade), true);
        await transitionPaymentOrder(tx, ctx, order, 'processing', 'pay', now);
        return row!;
      }
      const card = (method as { card: CardDetails }).card;
      const paymentMethod = debited ? { ...mandatePaymentMethod(debited) } : cardPaymentMethod(rt, ctx, card);
      if (save) paymentMethod.setup = await sealForSaving(tx, rt, ctx, save, card);
      // Kept for the worker's replay where it may send again; a card being saved is kept already.
      else if (!debited && routeReplaysSends(routing, route)) Object.assign(paymentMethod, await keepInFlight(tx, rt, ctx, card));
      const row = await insertRow(tx, payments, newPaymentRow(rt, ctx, order, captureMethod, paymentMethod, ranked, input.metadata ?? {}, now, returnUrl, cascade), true);
      await transitionPaymentOrder(tx, ctx, order, 'processing', 'pay', now);
      return row!;
    },
    missing: async () => {
      const missing = await notFound(db, ctx, paymentOrders, orderUuid, 'payment order', input.payment_order);
      return new ApiError('resource_missing', { param: 'payment_order', message: missing.message });
    },
    request: async (row) =>
      chargeRequest(row, debited ? debitOf(debited) : saved ? await unsealedCharge(db, rt, ctx, row, (method as { cvc?: string }).cvc) : { card: (method as { card: CardDetails }).card }, rt.publicUrl()),
    beforeSending: saved ? reattemptCheck(db, rt, ctx) : undefined,
  };
}

/** Asks the payment's connector for the current state of a pending payment and applies it. */
async function refresh(db: Db, rt: Runtime, ctx: RequestContext, row: PaymentRow): Promise<PaymentRow> {
  if (!paymentStates.is(row.status, 'awaiting') || row.connector === null) return row;
  const asked = await askStatus<ChargeState>(rt.callsFor(ctx), paymentKind, row.connector, row, db);
  if (!asked || asked.report.kind === 'not_found') return row;
  return (await applyState<PaymentRow>(db, rt, paymentKind, ctx, row.id, row.connector, asked.report)) ?? row;
}

export async function retrievePayment(db: Db, rt: Runtime, ctx: RequestContext, id: string, opts: { refresh?: boolean } = {}): Promise<PaymentView> {
  const row = await loadOne(db, ctx, PAYMENTS, id);
  return viewIn(db, PAYMENT_RULES, opts.refresh ? await refresh(db, rt, ctx, row) : row) as Promise<PaymentView>;
}

/** A page of payments, each with its captures (read for the page at once). */
export async function listPayments(db: Db, ctx: RequestContext, q: ListPaymentsQuery): Promise<Page<PaymentView>> {
  const orderUuid = q.payment_order ? idParam('ord', 'payment_order', q.payment_order) : undefined;
  const filters = [q.status ? eq(payments.status, q.status as PaymentStatus) : undefined, orderUuid ? eq(payments.paymentOrderId, orderUuid) : undefined];
  const page = await listPage(db, ctx, PAYMENTS, q, filters, (row) => row);
  const captures = await capturesByPayment(db, ctx, page.data.filter((p) => p.captureMethod === 'manual').map((p) => p.id));
  const disputes = await disputeIdsByPayment(db, ctx, page.data);
  return { ...page, data: page.data.map((row) => paymentView(row, captures.get(row.id) ?? [], disputes.get(row.id))) };
}

/**
 * Test helper: tells the simulated processor to settle the pending charge, then applies what the
 * processor reports (its webhook, arriving too, finds the work done). A charge the processor had
 * already settled (the timeout card) reports its true outcome whatever was asked.
 */
export async function resolveTestPayment(db: Db, rt: Runtime, ctx: RequestContext, id: string, outcome: 'succeeded' | 'failed'): Promise<Outcome> {
  if (ctx.livemode) throw testHelpersOnly();
  const row = await loadOne(db, ctx, PAYMENTS, id);
  // Only a processor's reversal moves a succeeded payment (a direct debit's money coming back), and
  // only its captures or its void an authorised one.
  if (paymentStates.is(row.status, 'captured') || paymentStates.is(row.status, 'authorized')) paymentStates.require(row.status, 'awaiting', 'resolve');
  paymentStates.assert(row.status, outcome, 'resolve');
  if (row.connector === null) {
    throw invalidState('payment', 'pending (no connector has taken it yet)', ['pending at a connector'], 'resolve');
  }
  const connector = row.connector;
  const reference = attemptReference(row);
  const state = await resolveThroughTestControl(rt, ctx, connector, 'charge', (c, signal) => c.resolvePendingCharge(reference, outcome, signal));
  return db.transaction(async (tx) => {
    const after = await applyState<PaymentRow>(db, rt, paymentKind, ctx, row.id, connector, state, { tx });
    return respond(tx, ctx, 200, await viewIn(tx, PAYMENT_RULES, after ?? row));
  });
}
