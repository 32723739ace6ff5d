// Customers: who pays, and whom saved payment methods belong to. Every change commits with its
// event and, for requests, the idempotency record, in one transaction. A reference is unique per
// account and mode among customers not deleted; the unique index decides, so two concurrent
// creates with one reference cannot both win.
import { and, eq, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { customers } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import { ApiError } from '../../kernel/errors.js';
import { isDatabaseError, UNIQUE_VIOLATION } from '../../storage/errors.js';
import { respond } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../../events/service.js';
import type { EventType } from '../../events/types.js';
import { changeOne, newOwnedRow, tenantReads } from '../../storage/tenant.js';
import { detachPaymentMethodsOf } from '../payment-methods/service.js';
import type { Vault } from '../../vault/vault.js';
import type { CreateCustomerBody, ListCustomersQuery, UpdateCustomerBody } from './schema.js';
import { CUSTOMERS, customerView, type CustomerRow } from './store.js';

/** Runs `write`; a reference another visible customer of the mode holds is the typed 422 naming it. */
async function withUniqueReference<T>(reference: string | null | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!reference || !isDatabaseError(err, UNIQUE_VIOLATION, 'customers_reference_key')) throw err;
    throw new ApiError('reference_already_used', {
      param: 'reference',
      message: `Another customer of this account and mode already has the reference ${JSON.stringify(reference)}; references are unique.`,
    });
  }
}

export async function createCustomer(db: Db, ctx: RequestContext, input: CreateCustomerBody, now = new Date()): Promise<Outcome> {
  return withUniqueReference(input.reference, () =>
    db.transaction(async (tx) => {
      const [row] = await tx
        .insert(customers)
        .values({
          ...newOwnedRow(ctx, 'cus', now),
          email: input.email,
          name: input.name ?? null,
          reference: input.reference ?? null,
          metadata: input.metadata ?? {},
        })
        .returning();
      const view = customerView(row!);
      await recordEvent(tx, ctx, 'customer.created', view, now);
      return respond(tx, ctx, 201, view);
    }),
  );
}

export const { retrieve: retrieveCustomer, list: listCustomers } = tenantReads(CUSTOMERS, customerView, (q: ListCustomersQuery) => [
  q.email ? eq(customers.email, q.email) : undefined,
  q.reference ? eq(customers.reference, q.reference) : undefined,
]);

async function saveCustomer(tx: Executor, ctx: RequestContext, row: CustomerRow, changes: Partial<CustomerRow>, eventType: EventType, now: Date): Promise<CustomerRow> {
  const [updated] = await tx
    .update(customers)
    .set({ ...changes, version: sql`${customers.version} + 1`, updatedAt: now })
    .where(and(eq(customers.accountId, row.accountId), eq(customers.id, row.id)))
    .returning();
  await recordEvent(tx, ctx, eventType, customerView(updated!), now);
  return updated!;
}

export async function updateCustomer(db: Db, ctx: RequestContext, id: string, input: UpdateCustomerBody, now = new Date()): Promise<Outcome> {
  return withUniqueReference(input.reference, () =>
    changeOne(db, ctx, CUSTOMERS, id, async (tx, row) => {
      const changes: Partial<CustomerRow> = {};
      if (input.email !== undefined && input.email !== row.email) changes.email = input.email;
      if (input.name !== undefined && input.name !== row.name) changes.name = input.name;
      if (input.reference !== undefined && input.reference !== row.reference) changes.reference = input.reference;
      if (input.metadata !== undefined) changes.metadata = input.metadata;
      if (Object.keys(changes).length === 0) return respond(tx, ctx, 200, customerView(row));
      return respond(tx, ctx, 200, customerView(await saveCustomer(tx, ctx, row, changes, 'customer.updated', now)));
    }),
  );
}

/**
 * DELETE: every payment method of the customer is detached (its card data erased), then the
 * customer is hidden from the API, in one transaction. The row stays for the orders and payment
 * methods that name it; its reference is free again. A second DELETE is a 404, as for any
 * customer the API does not show.
 */
export async function deleteCustomer(db: Db, vault: Vault, ctx: RequestContext, id: string, now = new Date()): Promise<Outcome> {
  return changeOne(db, ctx, CUSTOMERS, id, async (tx, row) => {
    await detachPaymentMethodsOf(tx, vault, ctx, row.id, now);
    await saveCustomer(tx, ctx, row, { deletedAt: now }, 'customer.deleted', now);
    return respond(tx, ctx, 200, { id: toPublicId('cus', row.id), object: 'customer', deleted: true });
  });
}
