// Payment orders: the intent to collect an amount. Every change commits with its event and, for
// requests, the idempotency record, in one transaction.
import { and, eq, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { paymentOrders } from '../../storage/schema.js';
import { newId, toPublicId } from '../../kernel/ids.js';
import { ApiError } from '../../kernel/errors.js';
import { claimDeferred, respond } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { recordEvent, systemContext } from '../../events/service.js';
import type { EventType } from '../../events/types.js';
import { changeOne, loadOne, selectOwnRow, updateOwnRow, type Resource, tenantReads } from '../../storage/tenant.js';
import { CUSTOMERS, lockCustomerForUse } from '../customers/store.js';
import type { CreatePaymentOrderBody, ListPaymentOrdersQuery, PaymentOrderView } from './schema.js';
import { NEW_ORDER_STATUS, paymentOrderStates, type PaymentOrderStatus } from './state.js';
import { createPaymentOrderAtOnce, PAYMENT_ORDER_CREATED, type DeferredClaim } from './one-statement.js';
import { inJsonbOrder } from '../../storage/jsonb.js';
import { customerUrl } from '../../kernel/customer-urls.js';
import { newCheckoutToken } from './checkout-token.js';

export type PaymentOrderRow = typeof paymentOrders.$inferSelect;
type Row = PaymentOrderRow;

const PAYMENT_ORDERS: Resource<typeof paymentOrders> = { table: paymentOrders, prefix: 'ord', name: 'payment order' };

const DEFAULT_LIFETIME_MS = 24 * 3600 * 1000;
const MAX_LIFETIME_MS = 30 * 24 * 3600 * 1000;

export function paymentOrderView(row: Row): PaymentOrderView {
  return {
    id: toPublicId('ord', row.id),
    object: 'payment_order',
    livemode: row.livemode,
    status: row.status,
    amount: row.amount,
    amount_paid: row.amountPaid,
    currency: row.currency,
    reference: row.reference,
    customer: { id: row.customerId === null ? null : toPublicId('cus', row.customerId), email: row.customerEmail, name: row.customerName },
    description: row.description,
    capture_method: row.captureMethod,
    setup_future_usage: row.setupFutureUsage,
    metadata: row.metadata,
    expires_at: row.expiresAt.toISOString(),
    checkout_url: row.checkoutUrl,
    success_url: row.successUrl,
    cancel_url: row.cancelUrl,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function expiry(input: string | undefined, now: Date): Date {
  if (input === undefined) return new Date(now.getTime() + DEFAULT_LIFETIME_MS);
  const at = new Date(input);
  if (at.getTime() <= now.getTime() || at.getTime() - now.getTime() > MAX_LIFETIME_MS) {
    throw new ApiError('parameter_invalid', {
      param: 'expires_at',
      message: 'expires_at must be in the future and at most 30 days ahead.',
    });
  }
  return at;
}

/** Where the hosted checkout is served (src/http/checkout); the order's token follows. */
export const CHECKOUT_PATH = '/checkout';

/** The hosted checkout of a new order of `accountId` (its token: src/domain/payment-orders/checkout-token.ts). */
function newCheckout(publicUrl: string, accountId: string): Pick<Row, 'checkoutToken' | 'checkoutUrl'> {
  const token = newCheckoutToken(accountId);
  return { checkoutToken: token, checkoutUrl: `${publicUrl}${CHECKOUT_PATH}/${token}` };
}

/** Who pays, as the order stores it: typed in the request, or copied from the customer it names. */
type OrderCustomer = Pick<Row, 'customerId' | 'customerEmail' | 'customerName'>;

/** The customer of a request that names none by id: its email is then required. */
function typedCustomer(input: CreatePaymentOrderBody['customer']): OrderCustomer {
  if (input.email === undefined) {
    throw new ApiError('parameter_missing', { param: 'customer.email', message: 'customer.email is required unless customer.id names a customer.' });
  }
  return { customerId: null, customerEmail: input.email, customerName: input.name ?? null };
}

/**
 * The customer a request names by id, as the order copies it; the 404 (resource_missing, param
 * customer.id) for an id of another account or mode, a deleted customer or a malformed id. Email
 * and name come from the customer alone, so giving them too is refused rather than one silently
 * winning.
 */
async function namedCustomer(db: Db, ctx: RequestContext, input: CreatePaymentOrderBody['customer'] & { id: string }): Promise<OrderCustomer> {
  const extra = input.email !== undefined ? 'email' : input.name !== undefined ? 'name' : undefined;
  if (extra) {
    throw new ApiError('parameter_invalid', { param: `customer.${extra}`, message: `customer.${extra} cannot be given with customer.id: the order copies it from the customer.` });
  }
  const customer = await loadOne(db, ctx, CUSTOMERS, input.id, 'customer.id');
  return { customerId: customer.id, customerEmail: customer.email, customerName: customer.name };
}

/** The checkout saves a card only for a customer it can be attached to: one the order names by id. */
function setupFutureUsage(input: CreatePaymentOrderBody, customer: OrderCustomer): Row['setupFutureUsage'] {
  if (input.setup_future_usage === undefined) return null;
  if (customer.customerId === null) {
    throw new ApiError('parameter_invalid', { param: 'setup_future_usage', message: 'setup_future_usage saves the card for a customer: name one with customer.id.' });
  }
  return input.setup_future_usage as Row['setupFutureUsage'];
}

/** A new order's row, as both create paths store it. `publicUrl`: PUBLIC_BASE_URL, base of its checkout_url. */
function newOrderRow(ctx: RequestContext, input: CreatePaymentOrderBody, customer: OrderCustomer, expiresAt: Date, now: Date, publicUrl: string): Row {
  return {
    accountId: ctx.accountId,
    id: newId('ord').uuid,
    livemode: ctx.livemode,
    status: NEW_ORDER_STATUS,
    amount: input.amount,
    amountPaid: 0,
    currency: input.currency,
    reference: input.reference,
    ...customer,
    description: input.description ?? null,
    metadata: inJsonbOrder(input.metadata ?? {}),
    expiresAt,
    ...newCheckout(publicUrl, ctx.accountId),
    successUrl: input.success_url === undefined ? null : customerUrl(input.success_url, 'success_url', ctx.livemode),
    cancelUrl: input.cancel_url === undefined ? null : customerUrl(input.cancel_url, 'cancel_url', ctx.livemode),
    captureMethod: (input.capture_method ?? 'automatic') as Row['captureMethod'],
    setupFutureUsage: setupFutureUsage(input, customer),
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The one-statement create (one-statement.ts) for a request whose key is not claimed yet. Undefined
 * when it did nothing: the key exists, or the input fails a check the general path must answer
 * (and record against the key).
 */
export async function tryCreatePaymentOrderAtOnce(
  db: Db,
  ctx: RequestContext,
  claim: DeferredClaim,
  input: CreatePaymentOrderBody,
  publicUrl: string,
  now = new Date(),
): Promise<Outcome | undefined> {
  // An order naming a customer reads it (and locks it against a concurrent delete): the general path.
  if (input.customer.id !== undefined) return undefined;
  // The one statement inserts the default capture method only.
  if (input.capture_method === 'manual') return undefined;
  let row: Row;
  try {
    row = newOrderRow(ctx, input, typedCustomer(input.customer), expiry(input.expires_at, now), now, publicUrl);
  } catch {
    return undefined;
  }
  return createPaymentOrderAtOnce(db, ctx, claim, row, paymentOrderView(row));
}

/** `publicUrl`: the service's PUBLIC_BASE_URL (Runtime.publicUrl), base of the order's checkout_url. */
export async function createPaymentOrder(db: Db, ctx: RequestContext, input: CreatePaymentOrderBody, publicUrl: string, now = new Date()): Promise<Outcome> {
  const deferred = ctx.deferredIdempotency;
  if (deferred) {
    const created = await tryCreatePaymentOrderAtOnce(db, ctx, deferred, input, publicUrl, now);
    if (created) return created;
    const replay = await claimDeferred(ctx);
    if (replay) return replay;
  }
  const { id: customerId } = input.customer;
  const customer = customerId === undefined ? typedCustomer(input.customer) : await namedCustomer(db, ctx, { ...input.customer, id: customerId });
  const newRow = newOrderRow(ctx, input, customer, expiry(input.expires_at, now), now, publicUrl);
  return db.transaction(async (tx) => {
    if (newRow.customerId !== null && !(await lockCustomerForUse(tx, ctx, newRow.customerId))) {
      // Deleted between the read above and this transaction.
      throw new ApiError('resource_missing', { param: 'customer.id', message: `No such customer: '${customerId}'.` });
    }
    const [row] = await tx.insert(paymentOrders).values(newRow).returning();
    const view = paymentOrderView(row!);
    await recordEvent(tx, ctx, PAYMENT_ORDER_CREATED, view, now);
    return respond(tx, ctx, 201, view);
  });
}

export const { retrieve: retrievePaymentOrder, list: listPaymentOrders } = tenantReads(PAYMENT_ORDERS, paymentOrderView, (q: ListPaymentOrdersQuery) => [
  q.status ? eq(paymentOrders.status, q.status as PaymentOrderStatus) : undefined,
  q.reference ? eq(paymentOrders.reference, q.reference) : undefined,
]);

/**
 * Moves a locked order to `to` (the caller holds the row lock), bumps its version and writes the
 * event. The transition table decides; an invalid move is a typed invalid_state error.
 */
export async function transitionPaymentOrder(
  tx: Executor,
  ctx: RequestContext,
  row: Row,
  to: PaymentOrderStatus,
  operation: string,
  now: Date,
  changes: Partial<Pick<Row, 'amountPaid'>> = {},
): Promise<Row> {
  paymentOrderStates.assert(row.status, to, operation);
  const updated = await updateOwnRow(tx, paymentOrders, row, { ...changes, status: to, updatedAt: now }, true);
  await recordEvent(tx, ctx, paymentOrderEventType(to), paymentOrderView(updated!), now);
  return updated!;
}

/** The event an order's move to `status` writes. */
export function paymentOrderEventType(status: PaymentOrderStatus): EventType {
  return `payment_order.${status}`;
}

export async function lockPaymentOrder(tx: Executor, ctx: RequestContext, uuid: string): Promise<Row | undefined> {
  return selectOwnRow(tx, ctx, PAYMENT_ORDERS, uuid, true);
}

export async function cancelPaymentOrder(db: Db, ctx: RequestContext, id: string, now = new Date()): Promise<Outcome> {
  return changeOne(db, ctx, PAYMENT_ORDERS, id, async (tx, row) => {
    const cancelled = await transitionPaymentOrder(tx, ctx, row, 'cancelled', 'cancel', now);
    return respond(tx, ctx, 200, paymentOrderView(cancelled));
  });
}

/**
 * Expires open orders whose time has come. Rows are claimed with SKIP LOCKED so that several
 * workers split the work, and each batch commits with its events.
 */
export async function expireDuePaymentOrders(db: Db, now: Date, batch = 100): Promise<number> {
  return db.transaction(async (tx) => {
    const due = await tx
      .select()
      .from(paymentOrders)
      .where(and(eq(paymentOrders.status, 'open'), sql`${paymentOrders.expiresAt} <= ${now.toISOString()}`))
      .orderBy(paymentOrders.expiresAt)
      .limit(batch)
      .for('update', { skipLocked: true });
    for (const row of due) {
      await transitionPaymentOrder(tx, systemContext(row.accountId, row.livemode), row, 'expired', 'expire', now);
    }
    return due.length;
  });
}
