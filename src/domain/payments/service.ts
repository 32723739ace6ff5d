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
import { and, eq, type SQL } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { paymentOrders, payments } from '../../storage/schema.js';
import { newId, parseId, toPublicId } from '../../kernel/ids.js';
import { ApiError, invalidState } from '../../kernel/errors.js';
import { respond, setRecoveryPoint } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../events/service.js';
import { notFound } from '../../kernel/lookup.js';
import { planPage, toPage, type Page } from '../../kernel/pagination.js';
import { lockPaymentOrder, transitionPaymentOrder, type PaymentOrderRow } from '../payment-orders/service.js';
import { routingRules, usableConnectors } from '../routing/service.js';
import { attemptOf, callConnector, planRoute, routeCharge, type Attempt, type ChargeExecution, type RoutingRule } from '../../connectors/router.js';
import { finishSucceededAtOnce } from './at-once.js';
import { inJsonbOrder } from '../../storage/jsonb.js';
import type { CardDetails, ChargeRequest, ChargeState } from '../../connectors/types.js';
import { summarizeCard, validateCard } from './cards.js';
import { testHelpersOnly } from '../../ledger/balance.js';
import type { PaymentsRuntime } from './runtime.js';
import type { CreatePaymentBody, ListPaymentsQuery, PaymentView } from './schema.js';
import {
  applyPaymentUpdate,
  lockPayment,
  paymentView,
  updateFromExecution,
  updateFromState,
  type PaymentRow,
  type PaymentUpdate,
} from './outcome.js';
import { paymentStates, type PaymentStatus } from './state.js';
import { isMandateMethod, lockMandateForDebit, mandatePaymentMethod, type MandateRow } from '../mandates/debits.js';
import { loadMandate } from '../mandates/service.js';

const RECOVERY_PREFIX = 'payment_created:';

type OrderRow = PaymentOrderRow;

/** A payment and its order as its first phase committed them. */
export interface CommittedPayment {
  payment: PaymentRow;
  order: OrderRow;
}

function byId(ctx: RequestContext, uuid: string): SQL {
  return and(eq(payments.accountId, ctx.accountId), eq(payments.livemode, ctx.livemode), eq(payments.id, uuid))!;
}

/**
 * How long after its creation a payment that no connector has taken is presumed abandoned by a
 * crashed request: past the charge deadline of a resumed retry (chargeDeadlineMs) and the time
 * its whole route could then take, plus a safety margin of one more route time and status-check
 * interval.
 *
 * Failing a payment as abandoned is irreversible (its order reopens and a later capture's webhook
 * is ignored), while waiting longer only delays it. Without the margin, the gap between the last
 * moment a retry may start charging and the abandonment is exactly the route time, which assumes
 * the worker's clock equals the API's (created_at is written by the API) and that a processor
 * books a charge before our call's deadline fires; a worker clock ahead by more than that, or a
 * processor booking late, would let the worker fail a payment that is then captured.
 */
export function abandonAfterMs(rt: PaymentsRuntime, routeLength: number): number {
  const routeMs = routeLength * rt.config.connectorTimeoutMs;
  const margin = routeMs + rt.config.statusCheckIntervalMs;
  return rt.idempotencyLockTimeoutS * 1000 + routeMs + rt.config.statusCheckIntervalMs + margin;
}

/** The payment method as given: a card (checked, in memory only) or a mandate's id. */
export type MethodInput = { type: 'card'; card: CardDetails } | { type: 'mandate'; id: string };

/** What the connector is sent besides the amount: the card, or the mandate as the processor knows it. */
export type ChargeMethod = Pick<ChargeRequest, 'card' | 'mandate'>;

function methodOf(input: CreatePaymentBody, livemode: boolean, now: Date, resuming: boolean): MethodInput {
  const method = input.payment_method;
  const other = method.type === 'mandate' ? 'card' : 'mandate';
  if (method[other] !== undefined) {
    throw new ApiError('parameter_invalid', {
      param: `payment_method.${other}`,
      message: `payment_method.${other} does not belong to a payment method of type ${method.type}.`,
    });
  }
  if (method.type === 'mandate') {
    if (method.mandate === undefined) throw new ApiError('parameter_missing', { param: 'payment_method.mandate', message: 'Missing required parameter: payment_method.mandate.' });
    return { type: 'mandate', id: method.mandate };
  }
  const given = method.card;
  if (given === undefined) throw new ApiError('parameter_missing', { param: 'payment_method.card', message: 'Missing required parameter: payment_method.card.' });
  const card = { number: given.number, expMonth: given.exp_month, expYear: given.exp_year, cvc: given.cvc };
  validateCard(card, livemode, now, { resuming });
  return { type: 'card', card };
}

function debitOf(mandate: MandateRow): ChargeMethod {
  return { mandate: { connectorReference: mandate.connectorReference!, scheme: mandate.scheme } };
}

/** The route for a payment of `order`: the first matching rule's connectors usable in this mode. */
export function planPaymentRoute(rt: PaymentsRuntime, rules: RoutingRule[], ctx: RequestContext, order: OrderRow, methodType: MethodInput['type']): string[] {
  const usable = new Set(usableConnectors(rt, ctx.livemode));
  return (planRoute(rules, { currency: order.currency, amount: order.amount, paymentMethodType: methodType }, rt.random) ?? []).filter((n) => usable.has(n));
}

/** Whether some connector of the route may be tried now (its circuit is not open). */
export function routeAvailable(rt: PaymentsRuntime, route: readonly string[]): boolean {
  return route.some((name) => rt.connectors.breaker.isAvailable(name));
}

/** A new payment of `order`, pending and not yet taken by any connector. */
export function newPaymentRow(
  rt: PaymentsRuntime,
  ctx: RequestContext,
  order: OrderRow,
  paymentMethod: Record<string, unknown>,
  route: string[],
  metadata: Record<string, string>,
  now: Date,
): PaymentRow {
  return {
    accountId: ctx.accountId,
    id: newId('pay').uuid,
    livemode: ctx.livemode,
    paymentOrderId: order.id,
    status: 'pending',
    amount: order.amount,
    currency: order.currency,
    amountRefunded: 0,
    paymentMethod,
    route,
    connector: null,
    connectorReference: null,
    attempts: [],
    failureCode: null,
    failureMessage: null,
    metadata: inJsonbOrder(metadata),
    // Only a payment abandoned by a crashed request is still without a connector by then.
    nextStatusCheckAt: new Date(now.getTime() + abandonAfterMs(rt, route.length)),
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/** What a card payment keeps of its card: brand, last4, expiry and the keyed fingerprint. */
export function cardPaymentMethod(rt: PaymentsRuntime, ctx: RequestContext, card: CardDetails): Record<string, unknown> {
  return { type: 'card', card: summarizeCard(card, rt.config.cardFingerprintKey, ctx.accountId) };
}

/**
 * Validates the payment method of a new (not resumed) request; throws the typed 400 of the first
 * problem found.
 */
export function newPaymentMethod(input: CreatePaymentBody, ctx: RequestContext, now: Date): MethodInput {
  return methodOf(input, ctx.livemode, now, false);
}

export async function createPayment(db: Db, rt: PaymentsRuntime, ctx: RequestContext, input: CreatePaymentBody): Promise<Outcome> {
  const now = rt.now();
  const recovery = ctx.idempotency?.recoveryPoint ?? 'started';
  const resuming = recovery.startsWith(RECOVERY_PREFIX);
  const method = methodOf(input, ctx.livemode, now, resuming);
  if (resuming) return resumePayment(db, rt, ctx, recovery.slice(RECOVERY_PREFIX.length), method);

  const orderUuid = parseId('ord', input.payment_order);
  const rules = await routingRules(db, rt, ctx);
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
        let route = planPaymentRoute(rt, rules, ctx, order, method.type);
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
        if (!routeAvailable(rt, route)) {
          throw new ApiError('processor_unavailable', { message: `Every connector of the route (${route.join(', ')}) is failing; nothing was created. Retry later.` });
        }
        const paymentMethod = debited ? { ...mandatePaymentMethod(debited) } : cardPaymentMethod(rt, ctx, (method as { card: CardDetails }).card);
        const [row] = await tx.insert(payments).values(newPaymentRow(rt, ctx, order, paymentMethod, route, input.metadata ?? {}, now)).returning();
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

/** The recovery point of a payment whose first phase has committed. */
export const createdRecoveryPoint = (paymentUuid: string) => `${RECOVERY_PREFIX}${paymentUuid}`;

/**
 * Phases 2 and 3 of a payment whose first phase has just committed (`created`: the payment and its
 * order as they were committed). With `atOnce` (the one-statement path of at-once.ts), a success
 * is first tried as one statement; the general path always applies the outcome the general way,
 * so that each path stays whole and the two can be compared.
 */
export async function chargeAndFinish(
  db: Db,
  rt: PaymentsRuntime,
  ctx: RequestContext,
  created: CommittedPayment,
  method: ChargeMethod,
  opts: { atOnce: boolean },
): Promise<Outcome> {
  rt.crashPoint('payment_created');
  const execution = await routeCharge(rt.call, created.payment.route, chargeRequest(created.payment, method));
  rt.crashPoint('payment_connector_answered');
  const update = updateFromExecution(execution);
  if (opts.atOnce && update.kind === 'succeeded' && !isMandateMethod(created.payment.paymentMethod)) {
    const done = await finishSucceededAtOnce(db, ctx, created, update, execution.attempts, rt.now());
    if (done) return done;
  }
  return finish(db, rt, ctx, created.payment.id, update, execution.attempts);
}

function chargeRequest(row: PaymentRow, method: ChargeMethod): ChargeRequest {
  return { reference: toPublicId('pay', row.id), amount: row.amount, currency: row.currency, ...method };
}

/** Phase 3: the outcome and the stored response, in one transaction. */
async function finish(db: Db, rt: PaymentsRuntime, ctx: RequestContext, uuid: string, update: PaymentUpdate | undefined, attempts: Attempt[]) {
  return db.transaction(async (tx) => {
    const row = await lockPayment(tx, ctx.accountId, ctx.livemode, uuid);
    if (!row) throw new Error(`payment ${uuid} vanished between phases`);
    const after = update ? await applyPaymentUpdate(tx, ctx, row, update, attempts, applyOptions(rt)) : row;
    return respond(tx, ctx, 201, paymentView(after));
  });
}

function applyOptions(rt: PaymentsRuntime) {
  return { now: rt.now(), statusCheckIntervalMs: rt.config.statusCheckIntervalMs };
}

export type LocatedCharge = { found: true; connector: string; state: ChargeState; attempt: Attempt } | { found: false; certain: boolean };

/**
 * Asks every connector of the route whether it holds a charge for the payment. `certain: false`
 * when some connector could not answer: then nobody may charge until it can.
 */
export async function locateCharge(rt: PaymentsRuntime, row: PaymentRow): Promise<LocatedCharge> {
  let certain = true;
  const reference = toPublicId('pay', row.id);
  for (const name of row.route) {
    const guarded = await callConnector(rt.call, name, (c, signal) => c.chargeStatus({ reference, connectorReference: null }, signal));
    if ('skipped' in guarded || guarded.result.kind === 'error') {
      certain = false;
      continue;
    }
    if (guarded.result.kind !== 'not_found') return { found: true, connector: name, state: guarded.result, attempt: attemptOf(name, guarded) };
  }
  return { found: false, certain };
}

async function resumePayment(db: Db, rt: PaymentsRuntime, ctx: RequestContext, uuid: string, method: MethodInput): Promise<Outcome> {
  const [row] = await db.select().from(payments).where(byId(ctx, uuid));
  if (!row) throw new Error(`recovery point names payment ${uuid}, which does not exist`);
  if (row.status !== 'pending' || row.connector !== null) {
    // A connector's answer was recorded meanwhile (webhook, worker): finish with what is known.
    return finish(db, rt, ctx, uuid, undefined, []);
  }
  const located = await locateCharge(rt, row);
  // The status check that found the charge made by the crashed request stands for its lost attempt.
  if (located.found) return finish(db, rt, ctx, uuid, updateFromState(located.connector, located.state), [located.attempt]);
  if (!located.certain) {
    throw new ApiError('service_unavailable', {
      message: 'A connector of this payment cannot tell whether it already holds the charge; retry later with the same Idempotency-Key.',
      headers: { 'retry-after': '5' },
    });
  }
  if (rt.now().getTime() - row.createdAt.getTime() >= chargeDeadlineMs(rt)) {
    // Too late to start charging: the worker may be declaring this payment abandoned right now.
    return finish(db, rt, ctx, uuid, ABANDONED, []);
  }
  // A resumed debit is sent as it was planned: the mandate was eligible when the payment was
  // created, and the processor refuses it if it no longer holds the mandate.
  const charge: ChargeMethod = isMandateMethod(row.paymentMethod)
    ? debitOf(await loadMandate(db, ctx, row.paymentMethod.mandate))
    : { card: (method as { card: CardDetails }).card };
  const execution: ChargeExecution = await routeCharge(rt.call, row.route, chargeRequest(row, charge));
  return finish(db, rt, ctx, uuid, updateFromExecution(execution), execution.attempts);
}

/** A resumed request may start charging only this long after the payment was created. */
function chargeDeadlineMs(rt: PaymentsRuntime): number {
  return rt.idempotencyLockTimeoutS * 1000 + rt.config.statusCheckIntervalMs;
}

export const ABANDONED: PaymentUpdate = {
  kind: 'failed',
  connector: null,
  connectorReference: null,
  failureCode: 'processing_error',
  failureMessage: 'The request that created the payment ended before any connector took it; nothing was charged.',
};

/** Applies a connector's report to a payment in its own transaction (refresh, worker, webhook, helper). */
export async function applyChargeState(
  db: Db,
  rt: PaymentsRuntime,
  ctx: RequestContext,
  accountId: string,
  uuid: string,
  connector: string,
  state: ChargeState,
  tx?: Executor,
): Promise<PaymentRow | undefined> {
  const run = async (t: Executor) => {
    const row = await lockPayment(t, accountId, ctx.livemode, uuid);
    if (!row) return undefined;
    if (row.connector !== null && row.connector !== connector) return row; // another connector's charge: not ours to settle
    return applyPaymentUpdate(t, ctx, row, updateFromState(connector, state), [], applyOptions(rt));
  };
  return tx ? run(tx) : db.transaction(run);
}

async function loadPayment(db: Db, ctx: RequestContext, id: string): Promise<PaymentRow> {
  const uuid = parseId('pay', id);
  if (uuid) {
    const [row] = await db.select().from(payments).where(byId(ctx, uuid));
    if (row) return row;
  }
  throw await notFound(db, ctx, payments, uuid, 'payment', id);
}

/** Asks the payment's connector for the current state of a pending payment and applies it. */
async function refresh(db: Db, rt: PaymentsRuntime, ctx: RequestContext, row: PaymentRow): Promise<PaymentRow> {
  if (row.status !== 'pending' || row.connector === null) return row;
  const connector = row.connector;
  const reference = toPublicId('pay', row.id);
  const guarded = await callConnector(rt.call, connector, (c, signal) =>
    c.chargeStatus({ reference, connectorReference: row.connectorReference }, signal),
  );
  if ('skipped' in guarded || guarded.result.kind === 'error' || guarded.result.kind === 'not_found') return row;
  return (await applyChargeState(db, rt, ctx, row.accountId, row.id, connector, guarded.result)) ?? row;
}

export async function retrievePayment(db: Db, rt: PaymentsRuntime, ctx: RequestContext, id: string, opts: { refresh?: boolean } = {}): Promise<PaymentView> {
  const row = await loadPayment(db, ctx, id);
  return paymentView(opts.refresh ? await refresh(db, rt, ctx, row) : row);
}

export async function listPayments(db: Db, ctx: RequestContext, params: ListPaymentsQuery): Promise<Page<PaymentView>> {
  let orderUuid: string | undefined;
  if (params.payment_order) {
    orderUuid = parseId('ord', params.payment_order);
    if (!orderUuid) throw new ApiError('parameter_invalid', { param: 'payment_order', message: 'payment_order must be an id starting with ord_.' });
  }
  const plan = planPage('pay', payments.id, payments.createdAt, params);
  const rows = await db
    .select()
    .from(payments)
    .where(
      and(
        eq(payments.accountId, ctx.accountId),
        eq(payments.livemode, ctx.livemode),
        params.status ? eq(payments.status, params.status as PaymentStatus) : undefined,
        orderUuid ? eq(payments.paymentOrderId, orderUuid) : undefined,
        plan.where,
      ),
    )
    .orderBy(plan.orderBy)
    .limit(plan.fetch);
  return toPage(rows, plan, paymentView);
}

/**
 * Test helper: tells the simulated processor to settle the pending charge, then applies what the
 * processor reports (its webhook, arriving too, finds the work done). A charge the processor had
 * already settled (the timeout card) reports its true outcome whatever was asked.
 */
export async function resolveTestPayment(db: Db, rt: PaymentsRuntime, ctx: RequestContext, id: string, outcome: 'succeeded' | 'failed'): Promise<Outcome> {
  if (ctx.livemode) throw testHelpersOnly();
  const row = await loadPayment(db, ctx, id);
  paymentStates.assert(row.status, outcome, 'resolve');
  if (row.connector === null) {
    throw invalidState('payment', 'pending (no connector has taken it yet)', ['pending at a connector'], 'resolve');
  }
  const connector = row.connector;
  const reference = toPublicId('pay', row.id);
  const state = await settleThroughTestControl(rt, connector, 'charge', (c, signal) => c.resolvePendingCharge(reference, outcome, signal));
  return db.transaction(async (tx) => {
    const after = await applyChargeState(db, rt, ctx, row.accountId, row.id, connector, state, tx);
    return respond(tx, ctx, 200, paymentView(after ?? row));
  });
}
