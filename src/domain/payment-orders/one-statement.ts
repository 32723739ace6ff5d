// Creating a payment order in one statement: the idempotency record (already finished, holding
// the answer), the order and its event, inserted by one data-modifying CTE, so one round trip and
// one commit instead of a claim, a transaction of three statements and its BEGIN and COMMIT.
//
// The CTE chains the inserts: the order is inserted only if the key was new, the event only if
// the order was. A key that exists (a retry, a concurrent twin — which waits on the unique index
// until the first commits — or an expired record not yet swept) inserts nothing and the caller
// falls back to the general path (claimKey), which replays, refuses or takes over as usual. Every
// value, the answer included, is computed here first, so the stored answer is exactly the bytes
// sent.
import type { Executor } from '../../storage/db.js';
import { rawQuery, type RawStatement } from '../../storage/raw.js';
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

// Built once, at load: the first status from the state table's module, the event type checked
// against the catalogue at compile time (`satisfies`).
export const CREATE_ORDER: RawStatement = {
  name: 'create_payment_order_v2',
  text: `WITH claimed AS (
  ${fastPathKeySql.insertFinished({ account: '$1', livemode: '$2', key: '$3', fingerprint: '$4', status: 201, body: '$5', requestId: '$6', retentionS: '$7' })}
  RETURNING 1
), inserted AS (
  INSERT INTO payment_orders (account_id, id, livemode, status, amount, amount_paid, currency, reference, customer_email, customer_name,
                              description, metadata, expires_at, checkout_token, checkout_url, success_url, cancel_url, version, created_at, updated_at)
  SELECT $1, $8, $2, ${sqlStatus(NEW_ORDER_STATUS)}, $9, 0, $10, $11, $12, $13, $14, $15::jsonb, $16, $21, $22, $23, $24, 1, $17, $17 FROM claimed
  RETURNING 1
)
INSERT INTO events (account_id, id, livemode, type, object_id, data, request_id, idempotency_key, created_at)
SELECT $1, $18, $2, '${PAYMENT_ORDER_CREATED}', $19, $20::jsonb, $6, $3, $17 FROM inserted
RETURNING 1 AS created`,
};

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
  const rows = await rawQuery(db, CREATE_ORDER, [
    ctx.accountId,
    ctx.livemode,
    claim.key,
    claim.fingerprint,
    body,
    ctx.requestId,
    claim.retentionS,
    row.id,
    row.amount,
    row.currency,
    row.reference,
    row.customerEmail,
    row.customerName,
    row.description,
    JSON.stringify(row.metadata),
    row.expiresAt.toISOString(),
    row.createdAt.toISOString(),
    newId('evt').uuid,
    view.id,
    `{"object":${body}}`,
    row.checkoutToken,
    row.checkoutUrl,
    row.successUrl,
    row.cancelUrl,
  ]);
  return rows.length === 1 ? { status: 201, body } : undefined;
}
