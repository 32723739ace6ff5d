// Saved payment methods: a customer's card, kept as a summary here and (once the vault lands) as a
// sealed record in the vault. Created only by attachPaymentMethod (a verified card, or one saved
// while paying); read, updated and detached through the API. Every change commits with its event
// and, for requests, the idempotency record, in one transaction.
import { and, eq, ne, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { paymentMethods } from '../../storage/schema.js';
import { objectHead, toPublicId } from '../../kernel/ids.js';
import { ApiError } from '../../kernel/errors.js';
import { idParam } from '../../kernel/pagination.js';
import { respond } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../../events/service.js';
import type { EventType } from '../../events/types.js';
import { changeOne, newOwnedRow, type Resource, tenantReads } from '../../storage/tenant.js';
import type { CardSummary } from '../payments/cards.js';
import { lockCustomerForUse } from '../customers/store.js';
import type { CardFunding, ListPaymentMethodsQuery, PaymentMethodView, UpdatePaymentMethodBody } from './schema.js';
import { paymentMethodStates, type PaymentMethodStatus, type PaymentMethodUsage } from './state.js';
import { eraseCardData } from './vault-seam.js';
import type { Vault } from '../../vault/vault.js';

export type PaymentMethodRow = typeof paymentMethods.$inferSelect;

const PAYMENT_METHODS: Resource<typeof paymentMethods> = { table: paymentMethods, prefix: 'pm', name: 'payment method' };

export function paymentMethodView(row: PaymentMethodRow): PaymentMethodView {
  return {
    ...objectHead('pm', 'payment_method', row),
    type: 'card',
    customer: toPublicId('cus', row.customerId),
    usage: row.usage,
    status: row.status,
    card: {
      brand: row.cardBrand as CardSummary['brand'],
      last4: row.cardLast4,
      exp_month: row.cardExpMonth,
      exp_year: row.cardExpYear,
      fingerprint: row.cardFingerprint,
      funding: row.cardFunding as CardFunding | null,
    },
    failure_code: row.failureCode,
    next_action: paymentMethodStates.is(row.status, 'withCustomer') && row.nextAction ? { type: 'redirect_to_url', url: row.nextAction.url, return_url: row.returnUrl ?? '' } : null,
    metadata: row.metadata,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export interface AttachPaymentMethodInput {
  /** The customer's UUID (not its public id): callers have resolved it already. */
  customerId: string;
  usage: PaymentMethodUsage;
  card: CardSummary & { funding?: CardFunding | null; issuing_country?: string | null };
  vaultRecordId: string | null;
  networkTransactionId: string | null;
  status: Exclude<PaymentMethodStatus, 'detached' | 'pending'>;
  failureCode?: string | null;
  metadata?: Record<string, string>;
}

/**
 * Stores a saved card for a customer with its payment_method.attached event, in the caller's
 * transaction (the verification or payment that saved it commits with it). For the internal
 * callers that save cards: the verification of POST /v1/payment-methods and a payment with
 * setup_future_usage. The customer must be the caller's and not deleted (404 otherwise); it is
 * share-locked so that a concurrent DELETE waits for this method and then detaches it.
 */
export async function attachPaymentMethod(tx: Executor, ctx: RequestContext, input: AttachPaymentMethodInput, now = new Date()): Promise<PaymentMethodRow> {
  if (!(await lockCustomerForUse(tx, ctx, input.customerId))) {
    throw new ApiError('resource_missing', { param: 'customer', message: `No such customer: '${toPublicId('cus', input.customerId)}'.` });
  }
  const [row] = await tx
    .insert(paymentMethods)
    .values({
      ...newOwnedRow(ctx, 'pm', now),
      customerId: input.customerId,
      usage: input.usage,
      status: input.status,
      cardBrand: input.card.brand,
      cardLast4: input.card.last4,
      cardExpMonth: input.card.exp_month,
      cardExpYear: input.card.exp_year,
      cardFingerprint: input.card.fingerprint,
      cardFunding: input.card.funding ?? null,
      cardIssuingCountry: input.card.issuing_country ?? null,
      networkTransactionId: input.networkTransactionId,
      vaultRecordId: input.vaultRecordId,
      failureCode: input.failureCode ?? null,
      metadata: input.metadata ?? {},
    })
    .returning();
  await recordEvent(tx, ctx, 'payment_method.attached', paymentMethodView(row!), now);
  return row!;
}

export const { retrieve: retrievePaymentMethod, list: listPaymentMethods } = tenantReads(PAYMENT_METHODS, paymentMethodView, (q: ListPaymentMethodsQuery) => [
  q.customer ? eq(paymentMethods.customerId, idParam('cus', 'customer', q.customer)) : undefined,
  q.status ? eq(paymentMethods.status, q.status as PaymentMethodStatus) : undefined,
]);

async function savePaymentMethod(tx: Executor, ctx: RequestContext, row: PaymentMethodRow, changes: Partial<PaymentMethodRow>, eventType: EventType, now: Date): Promise<PaymentMethodRow> {
  const [updated] = await tx
    .update(paymentMethods)
    .set({ ...changes, version: sql`${paymentMethods.version} + 1`, updatedAt: now })
    .where(and(eq(paymentMethods.accountId, row.accountId), eq(paymentMethods.livemode, row.livemode), eq(paymentMethods.id, row.id)))
    .returning();
  await recordEvent(tx, ctx, eventType, paymentMethodView(updated!), now);
  return updated!;
}

/** A detached method can be neither used nor changed: its card data is gone. */
function refuseDetached(row: PaymentMethodRow): void {
  if (!paymentMethodStates.is(row.status, 'erased')) return;
  throw new ApiError('payment_method_detached', { message: `The payment method ${toPublicId('pm', row.id)} is detached: its card data is erased; save the card again.` });
}

/** Whether the card has expired by `now`: it is valid through the last day of its expiry month (UTC). */
function expiredBy(expMonth: number, expYear: number, now: Date): boolean {
  return expYear * 12 + expMonth < now.getUTCFullYear() * 12 + now.getUTCMonth() + 1;
}

export async function updatePaymentMethod(db: Db, ctx: RequestContext, id: string, input: UpdatePaymentMethodBody, now = new Date()): Promise<Outcome> {
  return changeOne(db, ctx, PAYMENT_METHODS, id, async (tx, row) => {
    refuseDetached(row);
    const changes: Partial<PaymentMethodRow> = {};
    if (input.exp_month !== undefined && input.exp_month !== row.cardExpMonth) changes.cardExpMonth = input.exp_month;
    if (input.exp_year !== undefined && input.exp_year !== row.cardExpYear) changes.cardExpYear = input.exp_year;
    if ((changes.cardExpMonth ?? changes.cardExpYear) !== undefined && expiredBy(changes.cardExpMonth ?? row.cardExpMonth, changes.cardExpYear ?? row.cardExpYear, now)) {
      const param = input.exp_year !== undefined ? 'exp_year' : 'exp_month';
      throw new ApiError('parameter_invalid', { param, message: 'The new expiry is in the past; the card would be expired.' });
    }
    if (input.metadata !== undefined) changes.metadata = input.metadata;
    if (Object.keys(changes).length === 0) return respond(tx, ctx, 200, paymentMethodView(row));
    return respond(tx, ctx, 200, paymentMethodView(await savePaymentMethod(tx, ctx, row, changes, 'payment_method.updated', now)));
  });
}

/** Detaches a locked method: its card data erased in the vault, the method kept as `detached`, with its event. */
async function detachLocked(tx: Executor, vault: Vault, ctx: RequestContext, row: PaymentMethodRow, now: Date): Promise<PaymentMethodRow> {
  paymentMethodStates.assert(row.status, 'detached', 'detach');
  if (row.vaultRecordId !== null) await eraseCardData(tx, vault, ctx, row.vaultRecordId);
  return savePaymentMethod(tx, ctx, row, { status: 'detached', vaultRecordId: null, detachedAt: now }, 'payment_method.detached', now);
}

/**
 * POST /v1/payment-methods/{id}/detach. As Stripe does, detaching a method that is already
 * detached is an error (422 payment_method_detached), not a quiet repeat: the first answer said
 * it all, and a retry that must see the same answer sends the same Idempotency-Key.
 */
export async function detachPaymentMethod(db: Db, vault: Vault, ctx: RequestContext, id: string, now = new Date()): Promise<Outcome> {
  return changeOne(db, ctx, PAYMENT_METHODS, id, async (tx, row) => {
    refuseDetached(row);
    return respond(tx, ctx, 200, paymentMethodView(await detachLocked(tx, vault, ctx, row, now)));
  });
}

/** Detaches every method a customer still holds (the customer's DELETE), in the caller's transaction; the customer's row is locked by it. */
export async function detachPaymentMethodsOf(tx: Executor, vault: Vault, ctx: RequestContext, customerUuid: string, now: Date): Promise<number> {
  const rows = await tx
    .select()
    .from(paymentMethods)
    .where(and(eq(paymentMethods.accountId, ctx.accountId), eq(paymentMethods.livemode, ctx.livemode), eq(paymentMethods.customerId, customerUuid), ne(paymentMethods.status, 'detached')))
    .orderBy(paymentMethods.id)
    .for('update');
  for (const row of rows) await detachLocked(tx, vault, ctx, row, now);
  return rows.length;
}
