// The disputes a payment answers (`disputed`, `disputes`): read only for a payment whose
// dispute_count says it has some (counted where a dispute is recorded, src/domain/disputes/report.ts),
// so that a payment never disputed — nearly all — costs no query to view.
import { and, asc, eq, inArray } from 'drizzle-orm';
import { toPublicId } from '../../kernel/ids.js';
import type { Executor } from '../../storage/db.js';
import { disputes } from '../../storage/schema.js';

/** The dp_ ids of each of `payments` (all of one account and mode) that has disputes, oldest first, by payment id. */
export async function disputeIdsByPayment(
  db: Executor,
  owner: { accountId: string; livemode: boolean },
  payments: readonly { id: string; disputeCount: number }[],
): Promise<Map<string, string[]>> {
  const byPayment = new Map<string, string[]>();
  const disputed = payments.filter((p) => p.disputeCount > 0).map((p) => p.id);
  if (disputed.length === 0) return byPayment;
  const rows = await db
    .select({ id: disputes.id, paymentId: disputes.paymentId })
    .from(disputes)
    .where(and(eq(disputes.accountId, owner.accountId), eq(disputes.livemode, owner.livemode), inArray(disputes.paymentId, disputed)))
    .orderBy(asc(disputes.createdAt), asc(disputes.id));
  for (const row of rows) byPayment.set(row.paymentId, [...(byPayment.get(row.paymentId) ?? []), toPublicId('dp', row.id)]);
  return byPayment;
}
