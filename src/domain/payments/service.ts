// Payments: one attempt to pay an order, routed to connectors, in atomic phases (API.md §4):
//
//   1. one transaction: lock the order, check it is open, fix the route, insert the payment
//      `pending`, move the order to `processing`, write the events and the recovery point
//      `payment_created:<id>` on the idempotency key;
//   2. no transaction open: call the route's connectors with the payment id as the processor's
//      idempotency key;
//   3. one transaction: apply the outcome (outcome.ts) and store the response on the key.
//
// A retry of the same request after a crash between 1 and 3 finds the recovery point and resumes:
// it first asks every connector of the fixed route whether it already holds a charge for this
// payment (adopting it if so), and only charges when none does — so a resumed request never
// charges twice, not even on another connector. Card data lives in memory for the call only.
import { settleThroughTestControl } from '../test-controls.js';
import { eq } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { paymentOrders, payments } from '../../storage/schema.js';
import { parseId, toPublicId } from '../../kernel/ids.js';
import { ApiError, invalidState } from '../../kernel/errors.js';
import { claimDeferred, respond, setRecoveryPoint } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../../events/service.js';
import { notFound } from '../../kernel/lookup.js';
import { idParam } from '../../kernel/pagination.js';
import { loadOne, ownRow, type Resource, tenantReads } from '../../kernel/tenant.js';
import { lockPaymentOrder, transitionPaymentOrder } from '../payment-orders/service.js';
import { onlySimulated, routingFor } from '../routing/targets.js';
import { requireTestCard } from './cards.js';
import { finishSucceededAtOnce, tryCreateCardPaymentAtOnce } from './at-once.js';
import type { CardDetails, ChargeState } from '../../connectors/types.js';
import { testHelpersOnly } from '../../ledger/balance.js';
import type { Runtime } from '../../runtime.js';
import type { CreatePaymentBody, ListPaymentsQuery, PaymentView } from './schema.js';
import { paymentView, type PaymentRow, type PaymentUpdate } from './outcome.js';
import type { MandateRow } from '../mandates/outcome.js';
import {
  cardPaymentMethod,
  chargeRequest,
  debitOf,
  methodOf,
  newPaymentRow,
  planPaymentRoute,
  RECOVERY_PREFIX,
  returnUrlOf,
  routeAvailable,
  type ChargeMethod,
  type CommittedPayment,
  type MethodInput,
} from './plan.js';
import { ABANDONED, paymentKind } from './kind.js';
import { applyState, finishRequest } from '../../movement/apply.js';
import { askStatus, fromExecution, routeCall } from '../../movement/calls.js';
import { resume } from '../../movement/saga.js';
import { paymentStates, type PaymentStatus } from './state.js';
import { isMandateMethod, lockMandateForDebit, mandatePaymentMethod } from '../mandates/debits.js';
import { loadMandate } from '../mandates/service.js';


const PAYMENTS: Resource<typeof payments> = { table: payments, prefix: 'pay', name: 'payment' };

export async function createPayment(db: Db, rt: Runtime, ctx: RequestContext, input: CreatePaymentBody): Promise<Outcome> {
  // A card payment whose key was deferred first tries the one-statement path (at-once.ts).
  const atOnce = await tryCreateCardPaymentAtOnce(db, rt, ctx, input);
  if (atOnce) return chargeAndFinish(db, rt, ctx, atOnce.created, { card: atOnce.card }, { atOnce: true });
  const replay = await claimDeferred(ctx);
  if (replay) return replay;
  const now = rt.now();
  const recovery = ctx.idempotency?.recoveryPoint ?? 'started';
  const resuming = recovery.startsWith(RECOVERY_PREFIX);
  const method = methodOf(input, ctx.livemode, now, resuming);
  const returnUrl = returnUrlOf(input, ctx.livemode);
  if (resuming) return resumePayment(db, rt, ctx, recovery.slice(RECOVERY_PREFIX.length), method);

  const orderUuid = parseId('ord', input.payment_order);
  const routing = await routingFor(db, rt, ctx);
  // Unknown, foreign or other-mode mandates answer 404 like any id; eligibility is checked locked, below.
  const mandate = method.type === 'mandate' ? await loadMandate(db, ctx, method.id, 'payment_method.mandate') : undefined;
  let debited: MandateRow | undefined;
  const created = orderUuid
    ? await db.transaction(async (tx) => {
        const order = await lockPaymentOrder(tx, ctx, orderUuid);
        if (!order) return undefined;
        if (order.status !== 'open' || order.expiresAt <= now) {
          const status = order.status === 'open' ? 'past its expires_at' : order.status;
          throw new ApiError('order_not_payable', { param: 'payment_order', message: `The payment order ${input.payment_order} is ${status}; only an open order can be paid.` });
        }
        if (mandate) debited = await lockMandateForDebit(tx, mandate, order);
        let route = planPaymentRoute(rt, routing, order, method.type);
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
        if (route.length === 0) throw new ApiError('routing_no_match');
        if (method.type === 'card') requireTestCard(method.card, ctx.livemode, onlySimulated(routing, route));
        if (!routeAvailable(rt, route)) {
          throw new ApiError('processor_unavailable', { message: `Every connector of the route (${route.join(', ')}) is failing; nothing was created. Retry later.` });
        }
        const paymentMethod = debited ? { ...mandatePaymentMethod(debited) } : cardPaymentMethod(rt, ctx, (method as { card: CardDetails }).card);
        const [row] = await tx.insert(payments).values(newPaymentRow(rt, ctx, order, paymentMethod, route, input.metadata ?? {}, now, returnUrl)).returning();
        const processing = await transitionPaymentOrder(tx, ctx, order, 'processing', 'pay', now);
        await recordEvent(tx, ctx, 'payment.created', paymentView(row!), now);
        await setRecoveryPoint(tx, ctx, `${RECOVERY_PREFIX}${row!.id}`);
        return { payment: row!, order: processing };
      })
    : undefined;
  if (!created) {
    const missing = await notFound(db, ctx, paymentOrders, orderUuid, 'payment order', input.payment_order);
    throw new ApiError('resource_missing', { param: 'payment_order', message: missing.message });
  }
  return chargeAndFinish(db, rt, ctx, created, debited ? debitOf(debited) : { card: (method as { card: CardDetails }).card }, { atOnce: false });
}


/**
 * Phases 2 and 3 of a payment whose first phase has just committed (`created`: the payment and its
 * order as they were committed). With `atOnce` (the one-statement path of at-once.ts), a success
 * is first tried as one statement; the general path always applies the outcome the general way,
 * so that each path stays whole and the two can be compared.
 */
export async function chargeAndFinish(
  db: Db,
  rt: Runtime,
  ctx: RequestContext,
  created: CommittedPayment,
  method: ChargeMethod,
  opts: { atOnce: boolean },
): Promise<Outcome> {
  rt.crashPoint('payment_created');
  const execution = await routeCall<ChargeState>(rt.callsFor(ctx), paymentKind, created.payment.route, chargeRequest(created.payment, method, rt.publicUrl()));
  rt.crashPoint('payment_connector_answered');
  const update = fromExecution<PaymentUpdate>(paymentKind, execution);
  if (opts.atOnce && update.kind === 'succeeded' && !isMandateMethod(created.payment.paymentMethod)) {
    const done = await finishSucceededAtOnce(db, ctx, created, update, execution.attempts, rt.now());
    if (done) {
      // The one status change that bypasses the movement core's apply step (apply.ts counts the rest).
      rt.metrics.movement('payment', 'succeeded', update.connector);
      return done;
    }
  }
  return finishRequest(db, rt, paymentKind, ctx, created.payment.id, { update, attempts: execution.attempts });
}


async function resumePayment(db: Db, rt: Runtime, ctx: RequestContext, uuid: string, method: MethodInput): Promise<Outcome> {
  const [row] = await db.select().from(payments).where(ownRow(ctx, PAYMENTS, uuid));
  return resume(db, rt, paymentKind, ctx, row, {
    abandoned: ABANDONED,
    // A resumed debit is sent as it was planned: the mandate was eligible when the payment was
    // created, and the processor refuses it if it no longer holds the mandate.
    request: async () =>
      chargeRequest(
        row!,
        isMandateMethod(row!.paymentMethod) ? debitOf(await loadMandate(db, ctx, row!.paymentMethod.mandate)) : { card: (method as { card: CardDetails }).card },
        rt.publicUrl(),
      ),
  });
}

/** Asks the payment's connector for the current state of a pending payment and applies it. */
async function refresh(db: Db, rt: Runtime, ctx: RequestContext, row: PaymentRow): Promise<PaymentRow> {
  if ((row.status !== 'pending' && row.status !== 'requires_action') || row.connector === null) return row;
  const asked = await askStatus<ChargeState>(rt.callsFor(ctx), paymentKind, row.connector, row);
  if (!asked || asked.report.kind === 'not_found') return row;
  return (await applyState<PaymentRow>(db, rt, paymentKind, ctx, row.id, row.connector, asked.report)) ?? row;
}

export async function retrievePayment(db: Db, rt: Runtime, ctx: RequestContext, id: string, opts: { refresh?: boolean } = {}): Promise<PaymentView> {
  const row = await loadOne(db, ctx, PAYMENTS, id);
  return paymentView(opts.refresh ? await refresh(db, rt, ctx, row) : row);
}

export const { list: listPayments } = tenantReads(PAYMENTS, paymentView, (q: ListPaymentsQuery) => {
  const orderUuid = q.payment_order ? idParam('ord', 'payment_order', q.payment_order) : undefined;
  return [q.status ? eq(payments.status, q.status as PaymentStatus) : undefined, orderUuid ? eq(payments.paymentOrderId, orderUuid) : undefined];
});

/**
 * Test helper: tells the simulated processor to settle the pending charge, then applies what the
 * processor reports (its webhook, arriving too, finds the work done). A charge the processor had
 * already settled (the timeout card) reports its true outcome whatever was asked.
 */
export async function resolveTestPayment(db: Db, rt: Runtime, ctx: RequestContext, id: string, outcome: 'succeeded' | 'failed'): Promise<Outcome> {
  if (ctx.livemode) throw testHelpersOnly();
  const row = await loadOne(db, ctx, PAYMENTS, id);
  // Only a processor's reversal moves a succeeded payment (a direct debit's money coming back).
  if (row.status === 'succeeded') throw invalidState('payment', row.status, ['pending', 'requires_action'], 'resolve');
  paymentStates.assert(row.status, outcome, 'resolve');
  if (row.connector === null) {
    throw invalidState('payment', 'pending (no connector has taken it yet)', ['pending at a connector'], 'resolve');
  }
  const connector = row.connector;
  const reference = toPublicId('pay', row.id);
  const state = await settleThroughTestControl(rt, ctx, connector, 'charge', (c, signal) => c.resolvePendingCharge(reference, outcome, signal));
  return db.transaction(async (tx) => {
    const after = await applyState<PaymentRow>(db, rt, paymentKind, ctx, row.id, connector, state, { tx });
    return respond(tx, ctx, 200, paymentView(after ?? row));
  });
}
