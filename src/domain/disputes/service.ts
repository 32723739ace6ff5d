// Disputes as the API reads them, and the rule they impose on refunds: a payment with an open or
// lost dispute refuses refunds (charge_disputed), since the cardholder gets the money back
// through their bank already and a refund would pay them twice.
import { and, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { disputes } from '../../storage/schema.js';
import { ApiError } from '../../kernel/errors.js';
import { toPublicId } from '../../kernel/ids.js';
import { idParam } from '../../kernel/pagination.js';
import { type Resource, tenantReads } from '../../storage/tenant.js';
import type { ListDisputesQuery } from './schema.js';
import { disputeStates, DISPUTE_STATUSES, type DisputeStatus } from './state.js';
import { disputeView } from './transitions.js';

export const DISPUTES: Resource<typeof disputes> = { table: disputes, prefix: 'dp', name: 'dispute' };

export const { retrieve: retrieveDispute, list: listDisputes } = tenantReads(DISPUTES, disputeView, (q: ListDisputesQuery) => {
  const paymentUuid = q.payment ? idParam('pay', 'payment', q.payment) : undefined;
  return [q.status ? eq(disputes.status, q.status as DisputeStatus) : undefined, paymentUuid ? eq(disputes.paymentId, paymentUuid) : undefined];
});

const REFUSING = DISPUTE_STATUSES.filter((s) => disputeStates.is(s, 'refusesRefunds'));

/** Refuses a refund of a payment (locked by the caller) that has an open or lost dispute. */
export async function assertNotDisputed(tx: Executor, payment: { accountId: string; livemode: boolean; id: string }): Promise<void> {
  const [dispute] = await tx
    .select({ id: disputes.id, status: disputes.status })
    .from(disputes)
    .where(and(eq(disputes.accountId, payment.accountId), eq(disputes.livemode, payment.livemode), eq(disputes.paymentId, payment.id), inArray(disputes.status, REFUSING)))
    .limit(1);
  if (!dispute) return;
  throw new ApiError('charge_disputed', {
    param: 'payment',
    message: `The payment is disputed (${toPublicId('dp', dispute.id)}, ${dispute.status}): the cardholder's bank returns the money, so it cannot be refunded as well.`,
  });
}
