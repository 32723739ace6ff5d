// A dispute's row and its view. Its changes come from its processor's reports (report.ts) and from
// the merchant's answers; each writes its event in the same transaction: dispute.created once,
// dispute.updated for a change of an open dispute, dispute.closed when it reaches won, lost or
// accepted, dispute.funds_withdrawn|funds_reinstated when its money moves (money.ts).
import { and, eq, sql } from 'drizzle-orm';
import { toPublicId } from '../../kernel/ids.js';
import type { Executor } from '../../storage/db.js';
import { disputes } from '../../storage/schema.js';
import type { RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../../events/service.js';
import type { EventType } from '../../events/types.js';
import { connectorView, moneyViewHead, viewTail } from '../../movement/kind.js';
import type { DisputeReason } from '../../connectors/disputes.js';
import type { DisputeView } from './schema.js';
import { disputeStates, type DisputeStatus } from './state.js';

export type DisputeRow = typeof disputes.$inferSelect;

/** The dispute as the API shows it (its schema: schema.ts), keys in the documented order. */
export function disputeView(row: DisputeRow): DisputeView {
  return {
    ...moneyViewHead('dp', 'dispute', row),
    payment: toPublicId('pay', row.paymentId),
    reason: row.reason as DisputeReason,
    processor_reason: row.processorReason,
    evidence_due_by: row.evidenceDueBy?.toISOString() ?? null,
    evidence: row.evidence,
    evidence_due_soon: row.dueSoonNotifiedAt !== null && disputeStates.is(row.status, 'answerable'),
    defense_reason: row.defenseReason,
    funds_withdrawn: row.fundsBooked,
    fee: row.fee,
    ...(connectorView(row) as { connector: string; connector_reference: string }),
    ...viewTail(row),
  };
}

/** The event a change of status (or none) writes. */
export function disputeEventOf(status: DisputeStatus): EventType {
  return disputeStates.is(status, 'closed') ? 'dispute.closed' : 'dispute.updated';
}

/** Writes `set` on the locked row with its version bumped, and `event` with the row as it then stands. */
export async function saveDispute(tx: Executor, ctx: RequestContext, row: DisputeRow, set: Partial<DisputeRow>, event: EventType | null, now: Date): Promise<DisputeRow> {
  const [updated] = await tx
    .update(disputes)
    .set({ ...set, version: sql`${disputes.version} + 1`, updatedAt: now })
    .where(and(eq(disputes.accountId, row.accountId), eq(disputes.id, row.id)))
    .returning();
  if (event) await recordEvent(tx, ctx, event, disputeView(updated!), now);
  return updated!;
}
