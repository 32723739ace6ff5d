// The reference a capture or a void names its payment's authorisation by at the processor, the
// same for sending it and for asking after it.
import { and, eq } from 'drizzle-orm';
import { toPublicId } from '../../kernel/ids.js';
import { attemptReferenceOf } from '../../movement/kind.js';
import type { Executor } from '../../storage/db.js';
import { payments } from '../../storage/schema.js';

/**
 * That of the attempt that took the payment, recorded on the row when it was made (a cascaded
 * payment's `pay_…_n`); for a row made before it was recorded, that of the payment's attempt
 * number now (a payment holding an authorisation moves to no further attempt).
 */
export async function authorisationReference(
  db: Executor,
  row: { accountId: string; livemode: boolean; paymentId: string; paymentReference: string | null },
): Promise<string> {
  if (row.paymentReference !== null) return row.paymentReference;
  const [payment] = await db
    .select({ attemptNumber: payments.attemptNumber })
    .from(payments)
    .where(and(eq(payments.accountId, row.accountId), eq(payments.livemode, row.livemode), eq(payments.id, row.paymentId)));
  return attemptReferenceOf(toPublicId('pay', row.paymentId), payment?.attemptNumber ?? 1);
}
