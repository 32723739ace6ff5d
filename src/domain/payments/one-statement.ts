// A card payment in three statements instead of nineteen: the same phases, rows, events and
// idempotency record as the general path (service.ts), each phase sent as one data-modifying CTE.
//
//   read:    the order, unlocked, to plan the route and compute every value in memory;
//   phase 1: one statement moves the order to `processing` (only if it is still open and at the
//            version read), inserts the payment and both events, and claims the Idempotency-Key
//            with the recovery point already set; each part runs only if the one before did;
//   phase 2: the connector call, no transaction open (service.ts, chargeAndFinish);
//   phase 3: for a success, one statement updates the payment, pays the order, posts the journal
//            entry and balances, writes both events and stores the answer (finish-at-once.ts).
// Under load, the phase 1 and phase 3 statements of concurrent payments are each shared, one
// commit for many payments (src/storage/batched.ts): they take their values as arrays, one element
// per payment, and each payment's parts are chained by its own ids, so that one payment's row that
// cannot move writes nothing for that payment alone.
//
// Whenever a phase cannot complete in its one statement, the statement writes nothing for that
// payment and the request goes on through the general path, which locks rows, answers errors and
// replays: the order changed since it was read (a concurrent payment: the general path answers
// order_not_payable), the key already exists (a retry: its call skips it; a concurrent twin not
// yet committed: the insert waits on the index until the first commits, then raises a unique
// violation, which rolls back the batch, whose calls go again one by one), the payment was changed
// by a webhook meanwhile, or the key was taken over.
import type { Db } from '../../storage/db.js';
import type { RawStatement } from '../../storage/raw.js';
import { batchedStatement, keysReturned, perTenantKey, requestColumns, unnestColumns } from '../../storage/batched.js';
import { isDatabaseError, UNIQUE_VIOLATION } from '../../storage/errors.js';
import { newId, parseId } from '../../kernel/ids.js';
import { fastPathKeySql } from '../../idempotency/store.js';
import type { RequestContext } from '../../kernel/context.js';
import { sqlStatus } from '../../kernel/state-machine.js';
import { orderPayable } from '../payment-orders/state.js';
import { NEW_PAYMENT_STATUS } from './state.js';
import { paymentView } from './transitions.js';
import { FINISH_SUCCEEDED, ORDER_TAKEN } from './finish-at-once.js';
import type { CardDetails } from '../../connectors/types.js';
import { paymentOrderEventType, paymentOrderView, type PaymentOrderRow } from '../payment-orders/service.js';
import { onlySimulated, routeReplaysSends, routingFor } from '../routing/targets.js';
import { cardBrand, requireTestCard } from './cards.js';
import { outcomesFor } from '../routing/stats.js';
import type { Runtime } from '../../runtime.js';
import type { CreatePaymentBody } from './schema.js';
import { createdEventOf, recoveryPointOf } from '../../movement/engine.js';
import { paymentKind } from './kind.js';
import {
  captureMethodOf,
  cardPaymentMethod,
  newPaymentMethod,
  newPaymentRow,
  planPaymentCascade,
  planPaymentRoute,
  routeAvailable,
  segmentBrandOf,
  type CommittedPayment,
} from './new-payment.js';
import { offSessionOf, savedCardPaymentMethod, usableSavedCard } from './saved-cards.js';
import { ApiError } from '../../kernel/errors.js';
import type { paymentMethods } from '../../storage/schema.js';

type PaymentMethodRow = typeof paymentMethods.$inferSelect;

// The reads of concurrent requests go together too: one round trip, and one write to the socket,
// for many (src/storage/batched.ts).
const READ_COLUMNS = [
  ['account_id', 'uuid'],
  ['livemode', 'boolean'],
  ['id', 'uuid'],
] as const;

const READ_ORDER: RawStatement = {
  name: 'payment_read_orders_v5',
  text: `SELECT o.account_id, o.id, o.livemode, o.status, o.amount, o.amount_paid, o.currency, o.reference, o.customer_email, o.customer_name, o.customer_id,
       o.description, o.metadata, o.expires_at, o.checkout_token, o.checkout_url, o.success_url, o.cancel_url, o.capture_method, o.setup_future_usage,
       o.version, o.created_at, o.updated_at
FROM ${unnestColumns(READ_COLUMNS, 'i')}
JOIN payment_orders o ON o.account_id = i.account_id AND o.livemode = i.livemode AND o.id = i.id`,
};

// A read has no conflicts: every call may share a batch (its own key), within one tenant.
let reads = 0;
const readBatched = batchedStatement<Record<(typeof READ_COLUMNS)[number][0], unknown>, Record<string, unknown>, Record<string, unknown> | undefined>({
  statement: READ_ORDER,
  columns: READ_COLUMNS,
  answer: (rows, batch) => {
    const byId = new Map(rows.map((r) => [r.id as string, r]));
    return batch.map((call) => byId.get(call.id as string));
  },
  key: () => String(reads++),
  group: perTenantKey.group,
});

// The statements' rules are the general path's, rendered into their texts once, at load: the
// conditions and first statuses from the state tables' modules (orderPayable, NEW_PAYMENT_STATUS),
// each move checked against its table (`edge`: a table without it stops this module loading), the
// events named as the general path names them. The rendered texts are those of the statements'
// names (test/engine/one-statement.statements.test.ts): a text that changes takes a new name.
//   phase 1: the order, payable, → processing (the general path's admit rule, service.ts).
const CREATE_COLUMNS = [
  ['account_id', 'uuid'],
  ['livemode', 'boolean'],
  ['order_id', 'uuid'],
  ['order_version', 'int'],
  ['at', 'timestamptz'],
  ['payment_id', 'uuid'],
  ['amount', 'bigint'],
  ['currency', 'text'],
  ['payment_method', 'text'],
  ['route', 'text'],
  ['metadata', 'text'],
  ['next_status_check_at', 'timestamptz'],
  ['order_event_id', 'uuid'],
  ['order_object_id', 'text'],
  ['order_data', 'text'],
  ['payment_event_id', 'uuid'],
  ['payment_object_id', 'text'],
  ['payment_data', 'text'],
  ['request_id', 'text'],
  ['key', 'text'],
  ['fingerprint', 'text'],
  ['recovery_point', 'text'],
  ['retention_s', 'int'],
  ['capture_method', 'text'],
  ['routing', 'text'],
] as const;

type CreateRow = Record<(typeof CREATE_COLUMNS)[number][0], unknown>;

// Two payments of one order in a batch: the order moves once, for the payment its RETURNING names
// (an UPDATE … FROM uses one of the rows that match), and only that payment is written.
const CREATE_PAYMENT: RawStatement = {
  name: 'payment_create_v5',
  text: `WITH input AS (
  SELECT * FROM ${unnestColumns(CREATE_COLUMNS, 'i')}
), ord AS (
  UPDATE payment_orders o SET status = ${sqlStatus(ORDER_TAKEN)}, version = o.version + 1, updated_at = i.at
  FROM input i
  WHERE o.account_id = i.account_id AND o.livemode = i.livemode AND o.id = i.order_id AND ${orderPayable.sql.status} AND o.version = i.order_version
    AND ${orderPayable.sql.notExpired('i.at')}
    AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.account_id = i.account_id AND k.livemode = i.livemode AND k.key = i.key)
  RETURNING i.payment_id
), pay AS (
  INSERT INTO payments (account_id, id, livemode, payment_order_id, status, amount, currency, amount_refunded, payment_method, route, connector,
                        connector_reference, attempts, failure_code, failure_message, metadata, next_status_check_at, capture_method, routing, version, created_at, updated_at)
  SELECT i.account_id, i.payment_id, i.livemode, i.order_id, ${sqlStatus(NEW_PAYMENT_STATUS)}, i.amount, i.currency, 0, i.payment_method::jsonb,
         ARRAY(SELECT r.name FROM jsonb_array_elements_text(i.route::jsonb) WITH ORDINALITY AS r(name, n) ORDER BY r.n), NULL, NULL, '[]'::jsonb, NULL, NULL, i.metadata::jsonb, i.next_status_check_at, i.capture_method,
         i.routing::jsonb, 1, i.at, i.at
  FROM input i JOIN ord ON ord.payment_id = i.payment_id
  RETURNING id
), ev AS (
  INSERT INTO events (account_id, id, livemode, type, object_id, data, request_id, idempotency_key, created_at)
  SELECT i.account_id, e.id, i.livemode, e.type, e.object_id, e.data, i.request_id, i.key, i.at
  FROM input i JOIN pay ON pay.id = i.payment_id,
       LATERAL (VALUES (i.order_event_id, '${paymentOrderEventType(ORDER_TAKEN)}', i.order_object_id, i.order_data::jsonb),
                       (i.payment_event_id, '${createdEventOf(paymentKind)}', i.payment_object_id, i.payment_data::jsonb)) AS e(id, type, object_id, data)
)
${fastPathKeySql.insertClaimed('input i JOIN pay ON pay.id = i.payment_id', {
    account: 'i.account_id', livemode: 'i.livemode', key: 'i.key', fingerprint: 'i.fingerprint', recoveryPoint: 'i.recovery_point', requestId: 'i.request_id', retentionS: 'i.retention_s',
  })}
RETURNING key`,
};

// A key that exists (a retry) writes nothing for its call, which falls back; a twin's key claimed
// meanwhile by a statement not yet committed raises a unique violation: the batch goes again call
// by call (coalesce.ts), and that call alone falls back.
const createBatched = batchedStatement<CreateRow, { key: string }, boolean>({
  statement: CREATE_PAYMENT,
  columns: CREATE_COLUMNS,
  answer: keysReturned,
  ...perTenantKey,
});

/** The statements' texts, for the benchmark's pgbench script (bench/payments.ts). */
export const AT_ONCE_STATEMENTS = { readOrder: READ_ORDER.text, createPayment: CREATE_PAYMENT.text, finishSucceeded: FINISH_SUCCEEDED.text };
/** The statements as prepared, by name (test/engine/one-statement.statements.test.ts holds each name to its text). */
export const AT_ONCE_PREPARED: readonly RawStatement[] = [READ_ORDER, CREATE_PAYMENT, FINISH_SUCCEEDED];


async function readOrder(db: Db, ctx: RequestContext, uuid: string): Promise<PaymentOrderRow | undefined> {
  const r = await readBatched(db, { account_id: ctx.accountId, livemode: ctx.livemode, id: uuid });
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

/** What phase 2 charges: a typed card, or a saved one, unsealed from the vault when it is sent (saved-cards.ts). */
export type ChargedCard = { card: CardDetails } | { saved: PaymentMethodRow; cvc: string | undefined };

/**
 * The card a payment on the fast path charges, checked as the general path checks it, with what
 * its row keeps and the routing segment. Undefined for anything else (saving a card, a customer to
 * attach, a return_url: the general path stores them) and for any error, which the general path
 * answers and records.
 */
async function cardOf(db: Db, rt: Runtime, ctx: RequestContext, input: CreatePaymentBody, now: Date) {
  if (input.return_url !== undefined || input.customer !== undefined || input.setup_future_usage !== undefined) return undefined;
  try {
    const method = newPaymentMethod(input, ctx, now);
    if (method.type === 'card' && input.off_session === undefined && input.off_session_reason === undefined) {
      const charged: ChargedCard = { card: method.card };
      return { type: method.type, charged, paymentMethod: cardPaymentMethod(rt, ctx, method.card), segment: { brand: cardBrand(method.card.number), country: null } };
    }
    if (method.type !== 'saved_card') return undefined;
    const offSession = offSessionOf(input);
    const saved = await usableSavedCard(db, ctx, method.id, offSession);
    const charged: ChargedCard = { saved, cvc: method.cvc };
    return { type: method.type, charged, paymentMethod: savedCardPaymentMethod(saved, offSession), segment: { brand: segmentBrandOf(method, saved), country: saved.cardIssuingCountry } };
  } catch (err) {
    if (err instanceof ApiError) return undefined;
    throw err;
  }
}

/**
 * Phase 1 of a card payment in one statement, when the request's key was deferred to it: the
 * committed payment and the card for phase 2. Undefined when nothing was written: the caller
 * claims the key the general way and takes the general path, which answers whatever stopped this
 * one (bad card, unknown or unpayable order, no route).
 */
export async function tryCreateCardPaymentAtOnce(
  db: Db,
  rt: Runtime,
  ctx: RequestContext,
  input: CreatePaymentBody,
): Promise<{ created: CommittedPayment; charged: ChargedCard } | undefined> {
  const deferred = ctx.deferredIdempotency;
  if (!deferred) return undefined;
  const now = rt.now();
  const method = await cardOf(db, rt, ctx, input, now);
  if (!method) return undefined;
  const { charged } = method;
  const orderUuid = parseId('ord', input.payment_order);
  if (!orderUuid) return undefined;
  const order = await readOrder(db, ctx, orderUuid);
  if (!order || !orderPayable.test(order, now)) return undefined;
  const routing = await routingFor(db, rt, ctx);
  const planned = planPaymentRoute(rt, routing, order, method.type, method.segment, await outcomesFor(db, rt, ctx, routing));
  const { route } = planned;
  if (route.length === 0 || !routeAvailable(rt, route)) return undefined;
  // A route the worker may send the payment again on keeps a typed card in the vault (in-flight.ts): the general path seals it. A saved card is there already.
  if ('card' in charged && routeReplaysSends(routing, route)) return undefined;
  // A payment that may cascade keeps its rule's cascade on its row (cascade.ts): the general path writes it.
  if (planPaymentCascade(routing, order, method.type) !== null) return undefined;
  try {
    if ('card' in charged) requireTestCard(charged.card, ctx.livemode, onlySimulated(routing, route));
  } catch {
    return undefined; // the general path answers (and records) the card's error
  }

  const payment = newPaymentRow(rt, ctx, order, captureMethodOf(input, order), method.paymentMethod, planned, input.metadata ?? {}, now);
  const processing: PaymentOrderRow = { ...order, status: ORDER_TAKEN, version: order.version + 1, updatedAt: now };
  const orderView = paymentOrderView(processing);
  const view = paymentView(payment, []);
  const recoveryPoint = recoveryPointOf(paymentKind, payment.id);
  try {
    const claimed = await createBatched(db, {
      ...requestColumns(ctx, deferred.key),
      order_id: order.id,
      order_version: order.version,
      at: now.toISOString(),
      payment_id: payment.id,
      amount: payment.amount,
      currency: payment.currency,
      payment_method: JSON.stringify(payment.paymentMethod),
      route: JSON.stringify(payment.route),
      metadata: JSON.stringify(payment.metadata),
      next_status_check_at: payment.nextStatusCheckAt!.toISOString(),
      order_event_id: newId('evt').uuid,
      order_object_id: orderView.id,
      order_data: JSON.stringify({ object: orderView }),
      payment_event_id: newId('evt').uuid,
      payment_object_id: view.id,
      payment_data: JSON.stringify({ object: view }),
      fingerprint: deferred.fingerprint,
      recovery_point: recoveryPoint,
      retention_s: deferred.retentionS,
      capture_method: payment.captureMethod,
      routing: JSON.stringify(payment.routing),
    });
    if (!claimed) return undefined;
  } catch (err) {
    if (isDatabaseError(err, UNIQUE_VIOLATION, 'idempotency_keys')) return undefined;
    throw err;
  }
  ctx.deferredIdempotency = undefined;
  ctx.idempotency = { key: deferred.key, recoveryPoint };
  return { created: { payment, order: processing }, charged };
}
