// Phase 3 of a succeeded card payment in one statement (one-statement.ts tells the three phases),
// shared under load by the finishes that arrive together (src/storage/batched.ts): one commit, and
// one upsert per balance row for the whole batch instead of one per payment, so that concurrent
// payments of one merchant stop queueing on the same balance rows.
//
// For each payment the statement updates it (only if still pending at the version committed), pays
// its order, posts the journal entry and balances, writes both events and stores the answer on the
// key. It books the defaults only (no fee, T+0): an account onboarding gave pricing or a settlement
// delay (any account_terms row) writes nothing here and goes on through the general path, which
// books both. A payment that was changed meanwhile (a webhook) writes nothing and its caller applies
// the outcome the general way. An order or key that changed under a pending payment aborts the
// statement: its batch goes again call by call (coalesce.ts), and that call alone falls back.
import type { Db } from '../../storage/db.js';
import type { RawStatement } from '../../storage/raw.js';
import { batchedStatement, keysReturned, perTenantKey, requestColumns, unnestColumns } from '../../storage/batched.js';
import { isDatabaseError } from '../../storage/errors.js';
import { newId } from '../../kernel/ids.js';
import { fastPathKeySql } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import type { Attempt } from '../../connectors/router.js';
import { balanceChanges, type EntryType, type JournalEntryInput } from '../../ledger/journal.js';
import { journalJson, journalWrites } from '../../ledger/journal-sql.js';
import { paymentBookingLines } from '../../ledger/settlement.js';
import { bookingUnder, DEFAULT_TERMS, noTermsSql } from '../terms/service.js';
import { sqlStatus, sqlStatusIn } from '../../kernel/state-machine.js';
import { paymentOrderStates, type PaymentOrderStatus } from '../payment-orders/state.js';
import { NEW_PAYMENT_STATUS, paymentStates, type PaymentStatus } from './state.js';
import { statusEvent } from '../../movement/transition.js';
import { paymentOrderEventType, paymentOrderView, type PaymentOrderRow } from '../payment-orders/service.js';
import { paymentView, type PaymentRow, type PaymentUpdate } from './transitions.js';
import { reportedCardColumns } from './saving.js';
import { issuingCountryToLearn } from './saved-cards.js';
import type { CommittedPayment } from './new-payment.js';

// The rules are the general path's, rendered into the text once, at load (one-statement.ts says
// how the texts are held to their names): the payment, still in its first status, → succeeded; its
// order, processing, → paid (outcome.ts: moveTo and orderFollows), booked under the default terms.
type JournalSource = NonNullable<JournalEntryInput['source']>['type'];
export const ORDER_TAKEN = 'processing' satisfies PaymentOrderStatus;
const PAYMENT_SUCCEEDS = paymentStates.edge(NEW_PAYMENT_STATUS, 'succeeded');
const ORDER_PAID = paymentOrderStates.edge(ORDER_TAKEN, 'paid');
// The finish writes journal lines only: a default booking that held money back (a settlement row) could not be written here.
if (bookingUnder(DEFAULT_TERMS, 1, new Date(0)).availableOn !== null) throw new Error('the one-statement finish books only terms without a settlement delay');

const FINISH_COLUMNS = [
  ['account_id', 'uuid'],
  ['livemode', 'boolean'],
  ['payment_id', 'uuid'],
  ['payment_version', 'int'],
  ['connector', 'text'],
  ['connector_reference', 'text'],
  ['attempts', 'text'],
  ['at', 'timestamptz'],
  ['order_id', 'uuid'],
  ['order_version', 'int'],
  ['amount', 'bigint'],
  ['entry_id', 'uuid'],
  ['currency', 'text'],
  ['lines', 'text'],
  ['balances', 'text'],
  ['order_event_id', 'uuid'],
  ['order_event_type', 'text'],
  ['order_object_id', 'text'],
  ['order_data', 'text'],
  ['payment_event_id', 'uuid'],
  ['payment_object_id', 'text'],
  ['request_id', 'text'],
  ['key', 'text'],
  ['body', 'text'],
  ['payment_method', 'text'],
] as const;

type FinishRow = Record<(typeof FINISH_COLUMNS)[number][0], unknown>;

export const ABORT_REASON = 'payment_finish_at_once:';

export const FINISH_SUCCEEDED: RawStatement = {
  name: 'payment_finish_succeeded_v7',
  text: `WITH input AS (
  SELECT * FROM ${unnestColumns(FINISH_COLUMNS, 'i')}
), pay AS (
  UPDATE payments p SET status = ${sqlStatus(PAYMENT_SUCCEEDS.to)}, amount_captured = p.amount, connector = i.connector, connector_reference = i.connector_reference,
                        attempts = i.attempts::jsonb, payment_method = i.payment_method::jsonb, failure_code = NULL, failure_message = NULL,
                        next_status_check_at = NULL, version = p.version + 1, updated_at = i.at
  FROM input i
  WHERE p.account_id = i.account_id AND p.livemode = i.livemode AND p.id = i.payment_id AND ${sqlStatusIn([PAYMENT_SUCCEEDS.from], 'p.status')} AND p.version = i.payment_version
    AND ${noTermsSql('i.account_id')}
  RETURNING p.id
), ord AS (
  UPDATE payment_orders o SET status = ${sqlStatus(ORDER_PAID.to)}, amount_paid = o.amount_paid + i.amount, version = o.version + 1, updated_at = i.at
  FROM input i JOIN pay ON pay.id = i.payment_id
  WHERE o.account_id = i.account_id AND o.livemode = i.livemode AND o.id = i.order_id AND ${sqlStatusIn([ORDER_PAID.from], 'o.status')} AND o.version = i.order_version
  RETURNING i.payment_id
), done AS (
  SELECT i.* FROM input i JOIN ord ON ord.payment_id = i.payment_id
), ${journalWrites({
    from: 'done i', account: 'i.account_id', livemode: 'i.livemode', id: 'i.entry_id', type: `'${'payment' satisfies EntryType}'`, currency: 'i.currency',
    sourceType: `'${'payment' satisfies JournalSource}'`, sourceId: 'i.payment_id', description: 'NULL', createdAt: 'i.at', lines: 'i.lines::jsonb', balances: 'i.balances::jsonb',
  })}, ev AS (
  INSERT INTO events (account_id, id, livemode, type, object_id, data, request_id, idempotency_key, created_at)
  SELECT i.account_id, e.id, i.livemode, e.type, e.object_id, e.data, i.request_id, i.key, i.at
  FROM done i, LATERAL (VALUES (i.order_event_id, i.order_event_type, i.order_object_id, i.order_data::jsonb),
                               (i.payment_event_id, '${statusEvent<'payment', PaymentStatus>('payment', PAYMENT_SUCCEEDS.to)}', i.payment_object_id, ('{"object":' || i.body || '}')::jsonb)) AS e(id, type, object_id, data)
), answered AS (
  -- entry, lines, balances and ev write for each payment ord returned (they have no condition of
  -- their own), so counting pay against answered is enough for the guard below.
  ${fastPathKeySql.answer('done i', { account: 'i.account_id', livemode: 'i.livemode', key: 'i.key', status: 201, body: 'i.body', requestId: 'i.request_id' })}
  RETURNING k.key
)
SELECT NULL::text AS key, CASE WHEN (SELECT count(*) FROM pay) = (SELECT count(*) FROM answered) THEN 1
            ELSE abort_statement('${ABORT_REASON} the order or the idempotency key changed under a pending payment') END AS guard
UNION ALL
SELECT key, NULL FROM answered`,
};

// A key is answered once per batch (perTenantKey: twins never share one), so the keys returned name the calls.
const finishBatched = batchedStatement<FinishRow, { key: string | null }, boolean>({
  statement: FINISH_SUCCEEDED,
  columns: FINISH_COLUMNS,
  answer: keysReturned,
  ...perTenantKey,
});

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
  // A manual payment's success is an authorisation (transitions.ts, asReported): the general path books it so.
  if (!ctx.idempotency || payment.attempts.length > 0 || payment.captureMethod !== 'automatic') return undefined;
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
  // A saved card learning its issuing country from this payment: the general path writes it on the card.
  if (issuingCountryToLearn(paid)) return undefined;
  const paidOrder: PaymentOrderRow = { ...order, status: ORDER_PAID.to, amountPaid: order.amountPaid + payment.amount, version: order.version + 1, updatedAt: now };
  // Paid at once: an automatic payment, which has no captures.
  const view = paymentView(paid, []);
  const orderView = paymentOrderView(paidOrder);
  const body = JSON.stringify(view);
  const lines = paymentBookingLines(payment.amount, bookingUnder(DEFAULT_TERMS, payment.amount, now));
  try {
    const answered = await finishBatched(db, {
      ...requestColumns(ctx, ctx.idempotency.key),
      payment_id: payment.id,
      payment_version: payment.version,
      connector: paid.connector,
      connector_reference: paid.connectorReference,
      attempts: JSON.stringify(paid.attempts),
      at: now.toISOString(),
      order_id: order.id,
      order_version: order.version,
      amount: payment.amount,
      entry_id: newId('txn').uuid,
      currency: payment.currency,
      lines: journalJson.lines(lines),
      balances: journalJson.balances(balanceChanges(lines)),
      order_event_id: newId('evt').uuid,
      order_event_type: paymentOrderEventType(ORDER_PAID.to),
      order_object_id: orderView.id,
      order_data: `{"object":${JSON.stringify(orderView)}}`,
      payment_event_id: newId('evt').uuid,
      payment_object_id: view.id,
      body,
      payment_method: JSON.stringify(paid.paymentMethod),
    });
    if (!answered) return undefined;
  } catch (err) {
    // Only our own guard: any other error (a trigger's included) is a real failure.
    if (isDatabaseError(err, 'P0001') && (err as Error).message.startsWith(ABORT_REASON)) return undefined;
    throw err;
  }
  return { status: 201, body };
}
