// Creating a payment order in one statement: the idempotency record (already finished, holding
// the answer), the order and its event, inserted by one data-modifying CTE, so one round trip and
// one commit instead of a claim, a transaction of three statements and its BEGIN and COMMIT. Under
// load, the orders of concurrent requests share the statement and its commit
// (src/storage/coalesce.ts): it takes its values as arrays, one element per order.
//
// The CTE chains the inserts: an order is inserted only if its key was new, its event only if the
// order was. A key that exists (a retry, a concurrent twin — which waits on the unique index until
// the first has its answer — or an expired record not yet swept) inserts nothing for that order and
// its caller falls back to the general path (claimKey), which replays, refuses or takes over as
// usual. Twins never share a batch; should two ever do, the order and event follow only the key
// row the statement inserted itself (its request id), never the twin's. Every value, the answer
// included, is computed here first, so the stored answer is exactly the bytes sent.
import type { Executor } from '../../storage/db.js';
import type { RawStatement } from '../../storage/raw.js';
import { batchedStatement, perTenantKey, unnestColumns } from '../../storage/batched.js';
import { newId } from '../../kernel/ids.js';
import { fastPathKeySql } from '../../idempotency/store.js';
import type { paymentOrders } from '../../storage/schema.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import type { PaymentOrderView } from './schema.js';
import type { EventType } from '../../events/types.js';
import { sqlStatus } from '../../kernel/state-machine.js';
import { NEW_ORDER_STATUS } from './state.js';

export interface DeferredClaim {
  key: string;
  fingerprint: string;
  retentionS: number;
}

/** The event of a new order, written by both create paths (service.ts and here). */
export const PAYMENT_ORDER_CREATED = 'payment_order.created' satisfies EventType;

// The statement takes a batch: each column is an array holding one element per order (see
// src/storage/coalesce.ts for why concurrent creates share one statement). Built once, at load:
// the first status from the state table's module, the event type checked against the catalogue at
// compile time (`satisfies`).
const BATCH_COLUMNS = [
  ['account_id', 'uuid'],
  ['livemode', 'boolean'],
  ['key', 'text'],
  ['fingerprint', 'text'],
  ['body', 'text'],
  ['request_id', 'text'],
  ['retention_s', 'int'],
  ['order_id', 'uuid'],
  ['amount', 'bigint'],
  ['currency', 'text'],
  ['reference', 'text'],
  ['customer_email', 'text'],
  ['customer_name', 'text'],
  ['description', 'text'],
  ['metadata', 'text'],
  ['expires_at', 'timestamptz'],
  ['created_at', 'timestamptz'],
  ['event_id', 'uuid'],
  ['object_id', 'text'],
  ['checkout_token', 'text'],
  ['checkout_url', 'text'],
  ['success_url', 'text'],
  ['cancel_url', 'text'],
] as const;

type BatchColumn = (typeof BATCH_COLUMNS)[number][0];

export const CREATE_ORDER: RawStatement = {
  name: 'create_payment_orders_v5',
  text: `WITH input AS (
  SELECT * FROM ${unnestColumns(BATCH_COLUMNS, 'i')}
), claimed AS (
  ${fastPathKeySql.insertFinished('input', 'account_id, livemode, key', { account: 'account_id', livemode: 'livemode', key: 'key', fingerprint: 'fingerprint', status: 201, body: 'body', requestId: 'request_id', retentionS: 'retention_s' })}
  RETURNING account_id, livemode, key, request_id
), inserted AS (
  INSERT INTO payment_orders (account_id, id, livemode, status, amount, amount_paid, currency, reference, customer_email, customer_name,
                              description, metadata, expires_at, checkout_token, checkout_url, success_url, cancel_url, version, created_at, updated_at)
  SELECT i.account_id, i.order_id, i.livemode, ${sqlStatus(NEW_ORDER_STATUS)}, i.amount, 0, i.currency, i.reference, i.customer_email, i.customer_name,
         i.description, i.metadata::jsonb, i.expires_at, i.checkout_token, i.checkout_url, i.success_url, i.cancel_url, 1, i.created_at, i.created_at
  FROM input i JOIN claimed c ON c.account_id = i.account_id AND c.livemode = i.livemode AND c.key = i.key AND c.request_id = i.request_id
  RETURNING id
)
INSERT INTO events (account_id, id, livemode, type, object_id, data, request_id, idempotency_key, created_at)
SELECT i.account_id, i.event_id, i.livemode, '${PAYMENT_ORDER_CREATED}', i.object_id, ('{"object":' || i.body || '}')::jsonb, i.request_id, i.key, i.created_at
FROM input i JOIN inserted o ON o.id = i.order_id
RETURNING id AS event_id`,
};

/** One order's values, by column of the batch. */
type BatchRow = Record<BatchColumn, unknown>;

const insertBatched = batchedStatement<BatchRow, { event_id: string }, boolean>({
  statement: CREATE_ORDER,
  columns: BATCH_COLUMNS,
  answer: (rows, batch) => {
    const created = new Set(rows.map((r) => r.event_id));
    return batch.map((row) => created.has(row.event_id as string));
  },
  ...perTenantKey,
});

/**
 * Stores `row` (a new order), its event and the finished key; `view` is the answer. Undefined when
 * the key already existed (nothing was written).
 */
export async function createPaymentOrderAtOnce(
  db: Executor,
  ctx: RequestContext,
  claim: DeferredClaim,
  row: typeof paymentOrders.$inferSelect,
  view: PaymentOrderView,
): Promise<Outcome | undefined> {
  const body = JSON.stringify(view);
  const created = await insertBatched(db, {
    account_id: ctx.accountId,
    livemode: ctx.livemode,
    key: claim.key,
    fingerprint: claim.fingerprint,
    body,
    request_id: ctx.requestId,
    retention_s: claim.retentionS,
    order_id: row.id,
    amount: row.amount,
    currency: row.currency,
    reference: row.reference,
    customer_email: row.customerEmail,
    customer_name: row.customerName,
    description: row.description,
    metadata: JSON.stringify(row.metadata),
    expires_at: row.expiresAt.toISOString(),
    created_at: row.createdAt.toISOString(),
    event_id: newId('evt').uuid,
    object_id: view.id,
    checkout_token: row.checkoutToken,
    checkout_url: row.checkoutUrl,
    success_url: row.successUrl,
    cancel_url: row.cancelUrl,
  });
  return created ? { status: 201, body } : undefined;
}
