// A card payment in three statements instead of nineteen: the same phases, rows, events and
// idempotency record as the general path (service.ts), each phase sent as one data-modifying CTE.
//
//   read:    the order, unlocked, to plan the route and compute every value in memory;
//   phase 1: one statement moves the order to `processing` (only if it is still open and at the
//            version read), inserts the payment and both events, and claims the Idempotency-Key
//            with the recovery point already set; each part runs only if the one before did;
//   phase 2: the connector call, no transaction open (service.ts, chargeAndFinish);
//   phase 3: for a success, one statement updates the payment (only if still pending at the
//            version committed), pays the order, posts the journal entry and balances, writes
//            both events and stores the answer on the key. It books the defaults only (no fee,
//            T+0): an account onboarding gave pricing or a settlement delay (any account_terms
//            row) writes nothing here and goes on through the general path, which books both.
//
// Whenever a phase cannot complete in its one statement, the statement writes nothing and the
// request goes on through the general path, which locks rows, answers errors and replays: the
// order changed since it was read (a concurrent payment: the general path answers
// order_not_payable), the key already exists (a retry or a concurrent twin: the insert raises a
// unique violation, which rolls back the whole statement — the twin waits on the index until the
// first commits), the payment was changed by a webhook meanwhile, or the key was taken over.
import type { Db } from '../../storage/db.js';
import { rawQuery, type RawStatement } from '../../storage/raw.js';
import { isDatabaseError, UNIQUE_VIOLATION } from '../../storage/errors.js';
import { newId, parseId } from '../../kernel/ids.js';
import { fastPathKeySql } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import type { Attempt } from '../../connectors/router.js';
import type { CardDetails } from '../../connectors/types.js';
import { balanceChanges, type EntryType, type JournalEntryInput } from '../../ledger/journal.js';
import { journalWrites } from '../../ledger/journal-sql.js';
import { paymentBookingLines } from '../../ledger/settlement.js';
import { bookingUnder, DEFAULT_TERMS, noTermsSql } from '../terms/service.js';
import { sqlStatus, sqlStatusIn } from '../../kernel/state-machine.js';
import { orderPayable, paymentOrderStates, type PaymentOrderStatus } from '../payment-orders/state.js';
import { NEW_PAYMENT_STATUS, paymentStates, type PaymentStatus } from './state.js';
import { statusEvent } from '../../movement/transition.js';
import { paymentOrderEventType, paymentOrderView, type PaymentOrderRow } from '../payment-orders/service.js';
import { onlySimulated, routeReplaysSends, routingFor } from '../routing/targets.js';
import { cardBrand, requireTestCard } from './cards.js';
import { outcomesFor } from '../routing/stats.js';
import type { Runtime } from '../../runtime.js';
import type { CreatePaymentBody } from './schema.js';
import { createdEventOf, recoveryPointOf } from '../../movement/engine.js';
import { paymentKind } from './kind.js';
import { paymentView, type PaymentRow, type PaymentUpdate } from './transitions.js';
import { reportedCardColumns } from './saving.js';
import {
  captureMethodOf,
  cardPaymentMethod,
  newPaymentMethod,
  newPaymentRow,
  planPaymentCascade,
  planPaymentRoute,
  routeAvailable,
  type CommittedPayment,
} from './new-payment.js';

const READ_ORDER: RawStatement = {
  name: 'payment_read_order_v4',
  text: `SELECT account_id, id, livemode, status, amount, amount_paid, currency, reference, customer_email, customer_name, customer_id, description, metadata,
       expires_at, checkout_token, checkout_url, success_url, cancel_url, capture_method, setup_future_usage, version, created_at, updated_at
FROM payment_orders WHERE account_id = $1 AND livemode = $2 AND id = $3`,
};

// The statements' rules are the general path's, rendered into their texts once, at load: the
// conditions and first statuses from the state tables' modules (orderPayable, NEW_PAYMENT_STATUS),
// each move checked against its table (`edge`: a table without it stops this module loading), the
// events named as the general path names them, the ledger lines and the "no terms" condition from
// the booking's own modules. The rendered texts are those of the statements' names
// (test/engine/one-statement.statements.test.ts): a text that changes takes a new name.
//   phase 1: the order, payable, → processing (the general path's admit rule, service.ts);
//   phase 3: the payment, still in its first status, → succeeded; its order, processing, → paid
//            (outcome.ts: moveTo and orderFollows), booked under the default terms.
type JournalSource = NonNullable<JournalEntryInput['source']>['type'];
const ORDER_TAKEN = 'processing' satisfies PaymentOrderStatus;
const PAYMENT_SUCCEEDS = paymentStates.edge(NEW_PAYMENT_STATUS, 'succeeded');
const ORDER_PAID = paymentOrderStates.edge(ORDER_TAKEN, 'paid');
// The finish writes journal lines only: a default booking that held money back (a settlement row) could not be written here.
if (bookingUnder(DEFAULT_TERMS, 1, new Date(0)).availableOn !== null) throw new Error('the one-statement finish books only terms without a settlement delay');

const CREATE_PAYMENT: RawStatement = {
  name: 'payment_create_v3',
  text: `WITH ord AS (
  UPDATE payment_orders SET status = ${sqlStatus(ORDER_TAKEN)}, version = version + 1, updated_at = $5
  WHERE account_id = $1 AND livemode = $2 AND id = $3 AND ${orderPayable.sql.status} AND version = $4 AND ${orderPayable.sql.notExpired('$5')}
  RETURNING 1
), pay AS (
  INSERT INTO payments (account_id, id, livemode, payment_order_id, status, amount, currency, amount_refunded, payment_method, route, connector,
                        connector_reference, attempts, failure_code, failure_message, metadata, next_status_check_at, capture_method, routing, version, created_at, updated_at)
  SELECT $1, $6, $2, $3, ${sqlStatus(NEW_PAYMENT_STATUS)}, $7, $8, 0, $9::jsonb, $10::text[], NULL, NULL, '[]'::jsonb, NULL, NULL, $11::jsonb, $12, $24, $25::jsonb, 1, $5, $5 FROM ord
  RETURNING 1
), ev AS (
  INSERT INTO events (account_id, id, livemode, type, object_id, data, request_id, idempotency_key, created_at)
  SELECT $1, e.id, $2, e.type, e.object_id, e.data, $19, $20, $5
  FROM pay, (VALUES ($13::uuid, '${paymentOrderEventType(ORDER_TAKEN)}', $14::text, $15::jsonb), ($16::uuid, '${createdEventOf(paymentKind)}', $17::text, $18::jsonb)) AS e(id, type, object_id, data)
)
${fastPathKeySql.insertClaimed('pay', { account: '$1', livemode: '$2', key: '$20', fingerprint: '$21', recoveryPoint: '$22', requestId: '$19', retentionS: '$23' })}
RETURNING 1 AS created`,
};

const FINISH_SUCCEEDED: RawStatement = {
  name: 'payment_finish_succeeded_v5',
  text: `WITH pay AS (
  UPDATE payments SET status = ${sqlStatus(PAYMENT_SUCCEEDS.to)}, amount_captured = amount, connector = $5, connector_reference = $6, attempts = $7::jsonb, payment_method = $29::jsonb, failure_code = NULL, failure_message = NULL,
                      next_status_check_at = NULL, version = version + 1, updated_at = $8
  WHERE account_id = $1 AND livemode = $2 AND id = $3 AND ${sqlStatusIn([PAYMENT_SUCCEEDS.from])} AND version = $4
    AND ${noTermsSql('$1')}
  RETURNING 1
), ord AS (
  UPDATE payment_orders SET status = ${sqlStatus(ORDER_PAID.to)}, amount_paid = amount_paid + $11, version = version + 1, updated_at = $8
  FROM pay WHERE account_id = $1 AND livemode = $2 AND id = $9 AND ${sqlStatusIn([ORDER_PAID.from])} AND version = $10
  RETURNING 1
), ${journalWrites({
    account: '$1', livemode: '$2', id: '$12', type: `'${'payment' satisfies EntryType}'`, currency: '$13', sourceType: `'${'payment' satisfies JournalSource}'`, sourceId: '$3',
    description: 'NULL', createdAt: '$8', lineAccounts: '$14', lineAmounts: '$15', balanceAccounts: '$16', balanceSlots: '$17', balanceAmounts: '$18', after: 'ord',
  })}, ev AS (
  INSERT INTO events (account_id, id, livemode, type, object_id, data, request_id, idempotency_key, created_at)
  SELECT $1, e.id, $2, e.type, e.object_id, e.data, $25, $26, $8
  FROM ord, (VALUES ($19::uuid, $20::text, $21::text, $22::jsonb), ($23::uuid, '${statusEvent<'payment', PaymentStatus>('payment', PAYMENT_SUCCEEDS.to)}', $24::text, $27::jsonb)) AS e(id, type, object_id, data)
), answered AS (
  -- entry, lines, balances and ev write whenever ord returned its row (they have no condition of
  -- their own), so counting pay against answered is enough for the guard below.
  ${fastPathKeySql.answer('ord', { account: '$1', livemode: '$2', key: '$26', status: 201, body: '$28', requestId: '$25' })}
  RETURNING 1
)
SELECT CASE WHEN (SELECT count(*) FROM pay) = (SELECT count(*) FROM answered) THEN (SELECT count(*) FROM answered)::int
            ELSE abort_statement('payment_finish_at_once: the order or the idempotency key changed under a pending payment') END AS finished`,
};

/** The statements' texts, for the benchmark's pgbench script (bench/payments.ts). */
export const AT_ONCE_STATEMENTS = { readOrder: READ_ORDER.text, createPayment: CREATE_PAYMENT.text, finishSucceeded: FINISH_SUCCEEDED.text };
/** The statements as prepared, by name (test/engine/one-statement.statements.test.ts holds each name to its text). */
export const AT_ONCE_PREPARED: readonly RawStatement[] = [READ_ORDER, CREATE_PAYMENT, FINISH_SUCCEEDED];

const ABORT_REASON = 'payment_finish_at_once:';

async function readOrder(db: Db, ctx: RequestContext, uuid: string): Promise<PaymentOrderRow | undefined> {
  const [r] = await rawQuery<Record<string, unknown>>(db, READ_ORDER, [ctx.accountId, ctx.livemode, uuid]);
  if (!r) return undefined;
  return {
    accountId: r.account_id as string,
    id: r.id as string,
    livemode: r.livemode as boolean,
    status: r.status as PaymentOrderRow['status'],
    amount: Number(r.amount),
    amountPaid: Number(r.amount_paid),
    currency: r.currency as string,
    reference: r.reference as string,
    customerEmail: r.customer_email as string,
    customerName: r.customer_name as string | null,
    customerId: r.customer_id as string | null,
    description: r.description as string | null,
    metadata: r.metadata as Record<string, string>,
    expiresAt: new Date(r.expires_at as string | Date),
    checkoutToken: r.checkout_token as string | null,
    checkoutUrl: r.checkout_url as string | null,
    successUrl: r.success_url as string | null,
    cancelUrl: r.cancel_url as string | null,
    captureMethod: r.capture_method as PaymentOrderRow['captureMethod'],
    setupFutureUsage: r.setup_future_usage as PaymentOrderRow['setupFutureUsage'],
    version: r.version as number,
    createdAt: new Date(r.created_at as string | Date),
    updatedAt: new Date(r.updated_at as string | Date),
  };
}

/**
 * Phase 1 of a card payment in one statement, when the request's key was deferred to it: the
 * committed payment and the card for phase 2. Undefined when nothing was written: the caller
 * claims the key the general way and takes the general path, which answers whatever stopped this
 * one (bad card, unknown or unpayable order, no route).
 */
/** Whether the body holds only what a plain card payment takes (saving a card, off-session fields: the general path checks and answers them). */
const onlyCardFields = (input: CreatePaymentBody) =>
  input.customer === undefined && input.setup_future_usage === undefined && input.off_session === undefined && input.off_session_reason === undefined;

export async function tryCreateCardPaymentAtOnce(
  db: Db,
  rt: Runtime,
  ctx: RequestContext,
  input: CreatePaymentBody,
): Promise<{ created: CommittedPayment; card: CardDetails } | undefined> {
  const deferred = ctx.deferredIdempotency;
  // A payment that may need its customer back keeps to the general path, which stores its return_url.
  if (!deferred || input.payment_method.type !== 'card' || input.return_url !== undefined || !onlyCardFields(input)) return undefined;
  const now = rt.now();
  let card: CardDetails;
  try {
    const method = newPaymentMethod(input, ctx, now);
    if (method.type !== 'card') return undefined;
    card = method.card;
  } catch {
    return undefined; // the general path answers (and records) the card's error
  }
  const orderUuid = parseId('ord', input.payment_order);
  if (!orderUuid) return undefined;
  const order = await readOrder(db, ctx, orderUuid);
  if (!order || !orderPayable.test(order, now)) return undefined;
  const routing = await routingFor(db, rt, ctx);
  const planned = planPaymentRoute(rt, routing, order, 'card', { brand: cardBrand(card.number), country: null }, await outcomesFor(db, rt, ctx, routing));
  const { route } = planned;
  // A route the worker may send the payment again on keeps its card in the vault (in-flight.ts): the general path seals it.
  if (route.length === 0 || !routeAvailable(rt, route) || routeReplaysSends(routing, route)) return undefined;
  // A payment that may cascade keeps its rule's cascade on its row (cascade.ts): the general path writes it.
  if (planPaymentCascade(routing, order, 'card') !== null) return undefined;
  try {
    requireTestCard(card, ctx.livemode, onlySimulated(routing, route));
  } catch {
    return undefined; // the general path answers (and records) the card's error
  }

  const payment = newPaymentRow(rt, ctx, order, captureMethodOf(input, order), cardPaymentMethod(rt, ctx, card), planned, input.metadata ?? {}, now);
  const processing: PaymentOrderRow = { ...order, status: ORDER_TAKEN, version: order.version + 1, updatedAt: now };
  const orderView = paymentOrderView(processing);
  const view = paymentView(payment, []);
  const recoveryPoint = recoveryPointOf(paymentKind, payment.id);
  try {
    const rows = await rawQuery(db, CREATE_PAYMENT, [
      ctx.accountId,
      ctx.livemode,
      order.id,
      order.version,
      now.toISOString(),
      payment.id,
      payment.amount,
      payment.currency,
      JSON.stringify(payment.paymentMethod),
      payment.route,
      JSON.stringify(payment.metadata),
      payment.nextStatusCheckAt!.toISOString(),
      newId('evt').uuid,
      orderView.id,
      JSON.stringify({ object: orderView }),
      newId('evt').uuid,
      view.id,
      JSON.stringify({ object: view }),
      ctx.requestId || null,
      deferred.key,
      deferred.fingerprint,
      recoveryPoint,
      deferred.retentionS,
      payment.captureMethod,
      JSON.stringify(payment.routing),
    ]);
    if (rows.length === 0) return undefined;
  } catch (err) {
    if (isDatabaseError(err, UNIQUE_VIOLATION, 'idempotency_keys')) return undefined;
    throw err;
  }
  ctx.deferredIdempotency = undefined;
  ctx.idempotency = { key: deferred.key, recoveryPoint };
  return { created: { payment, order: processing }, card };
}

/**
 * Phase 3 of a succeeded card payment in one statement, when the payment and its order are still
 * exactly as phase 1 committed them. Undefined when they are not (nothing was written): the caller
 * applies the outcome the general way.
 */
export async function finishSucceededAtOnce(
  db: Db,
  ctx: RequestContext,
  created: CommittedPayment,
  update: Extract<PaymentUpdate, { kind: 'succeeded' }>,
  attempts: Attempt[],
  now: Date,
): Promise<Outcome | undefined> {
  const { payment, order } = created;
  if (!ctx.idempotency || payment.attempts.length > 0) return undefined;
  const paid: PaymentRow = {
    ...payment,
    status: PAYMENT_SUCCEEDS.to,
    connector: update.connector,
    connectorReference: update.connectorReference,
    attempts: attempts as unknown as PaymentRow['attempts'],
    failureCode: null,
    failureMessage: null,
    nextStatusCheckAt: null,
    // An automatic payment's success captures it all (the statement writes the same).
    amountCaptured: payment.amount,
    // What the processor reported of the card (its issuing country), as the general path records it.
    ...reportedCardColumns(update, payment),
    version: payment.version + 1,
    updatedAt: now,
  };
  const paidOrder: PaymentOrderRow = { ...order, status: ORDER_PAID.to, amountPaid: order.amountPaid + payment.amount, version: order.version + 1, updatedAt: now };
  // Paid at once: an automatic payment, which has no captures.
  const view = paymentView(paid, []);
  const orderView = paymentOrderView(paidOrder);
  const body = JSON.stringify(view);
  const lines = paymentBookingLines(payment.amount, bookingUnder(DEFAULT_TERMS, payment.amount, now));
  const balances = balanceChanges(lines);
  try {
    const [row] = await rawQuery<{ finished: number }>(db, FINISH_SUCCEEDED, [
      ctx.accountId,
      ctx.livemode,
      payment.id,
      payment.version,
      paid.connector,
      paid.connectorReference,
      JSON.stringify(paid.attempts),
      now.toISOString(),
      order.id,
      order.version,
      payment.amount,
      newId('txn').uuid,
      payment.currency,
      lines.map((l) => l.ledgerAccount),
      lines.map((l) => l.amount),
      balances.map((b) => b.ledgerAccount),
      balances.map((b) => b.slot),
      balances.map((b) => b.amount),
      newId('evt').uuid,
      paymentOrderEventType(ORDER_PAID.to),
      orderView.id,
      JSON.stringify({ object: orderView }),
      newId('evt').uuid,
      view.id,
      ctx.requestId || null,
      ctx.idempotency.key,
      JSON.stringify({ object: view }),
      body,
      JSON.stringify(paid.paymentMethod),
    ]);
    if (!row || Number(row.finished) !== 1) return undefined;
  } catch (err) {
    // Only our own guard: any other error (a trigger's included) is a real failure.
    if (isDatabaseError(err, 'P0001') && (err as Error).message.startsWith(ABORT_REASON)) return undefined;
    throw err;
  }
  return { status: 201, body };
}
