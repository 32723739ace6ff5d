// The worker's part of disputes: answers left pending (their request crashed or timed out) asked
// where they stand at the processor and sent again where it holds nothing (our id dedupes them);
// then the warning, once per dispute, that its evidence deadline is less than three days away
// (dispute.updated with evidence_due_soon: true), while it still waits for the merchant.
import { and, asc, inArray, isNull, lte } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { disputeResponses, disputes } from '../../storage/schema.js';
import type { Runtime } from '../../runtime.js';
import { systemContext } from '../../events/service.js';
import { checkAll, checkMovement, claimPendingChecks } from '../../movement/worker.js';
import { responseKind } from './response-kind.js';
import { responseRequest } from '../../connectors/movements/children.js';
import type { ResponseRow } from './response-rules.js';
import { disputeStates, DISPUTE_STATUSES } from './state.js';
import { saveDispute } from './transitions.js';

/** How long before evidence_due_by the worker warns. */
export const DUE_SOON_MS = 3 * 24 * 3600 * 1000;
const ANSWERABLE = DISPUTE_STATUSES.filter((s) => disputeStates.is(s, 'answerable'));

/** One pass: checks up to `batch` due answers, then warns of up to `batch` deadlines coming within three days of `now`. */
export async function runDisputeJobs(db: Db, rt: Runtime, now = rt.now(), batch = 50): Promise<{ checked: number; warned: number }> {
  const due = await claimPendingChecks<ResponseRow>(db, rt, disputeResponses, batch);
  await checkAll(due, (row) =>
    checkMovement(db, rt, responseKind, row, { overdue: false, whenNowhere: 'send', whenUnknown: 'send', request: async () => responseRequest(row) }),
  );
  return { checked: due.length, warned: await warnDueSoon(db, now, batch) };
}

/**
 * Marks and announces the disputes whose deadline comes within DUE_SOON_MS, in the claim's own
 * transaction (SKIP LOCKED, so several workers split them, and the mark makes it once per dispute).
 */
async function warnDueSoon(db: Db, now: Date, batch: number): Promise<number> {
  return db.transaction(async (tx) => {
    // The partial index disputes_due_idx holds exactly these: answerable, not announced yet.
    const due = await tx
      .select()
      .from(disputes)
      .where(and(inArray(disputes.status, ANSWERABLE), isNull(disputes.dueSoonNotifiedAt), lte(disputes.evidenceDueBy, new Date(now.getTime() + DUE_SOON_MS))))
      .orderBy(asc(disputes.evidenceDueBy))
      .limit(batch)
      .for('update', { skipLocked: true });
    for (const row of due) await saveDispute(tx, systemContext(row.accountId, row.livemode), row, { dueSoonNotifiedAt: now }, 'dispute.updated', now);
    return due.length;
  });
}
