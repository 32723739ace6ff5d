// Where customers are and how one is found by its public id. Apart from the service so that the
// payment methods (which belong to a customer) and payment orders (which may name one) can look a
// customer up without importing the service, which itself detaches payment methods.
import { isNull } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { customers } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import type { RequestContext } from '../../kernel/context.js';
import { ownRow, type Resource } from '../../storage/tenant.js';
import type { CustomerView } from './schema.js';

export type CustomerRow = typeof customers.$inferSelect;

/** Deleted customers stay as rows (orders and payment methods point at them) but the API no longer shows them. */
export const CUSTOMERS: Resource<typeof customers> = { table: customers, prefix: 'cus', name: 'customer', visible: isNull(customers.deletedAt) };

export function customerView(row: CustomerRow): CustomerView {
  return {
    id: toPublicId('cus', row.id),
    object: 'customer',
    livemode: row.livemode,
    email: row.email,
    name: row.name,
    reference: row.reference,
    metadata: row.metadata,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/**
 * The caller's visible customer with this UUID, share-locked so that it cannot be deleted before
 * the transaction that uses it (an order naming it, a payment method attached to it) commits.
 */
export async function lockCustomerForUse(tx: Executor, ctx: Pick<RequestContext, 'accountId' | 'livemode'>, uuid: string): Promise<CustomerRow | undefined> {
  const [row] = await tx.select().from(customers).where(ownRow(ctx, CUSTOMERS, uuid)).for('share');
  return row;
}
