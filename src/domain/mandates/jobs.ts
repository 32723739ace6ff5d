// The worker's mandate jobs.
//
// Status checks: pending mandates whose next_status_check_at has come are claimed (SKIP LOCKED,
// the check time pushed forward as a lease) and their connector is asked for the truth outside
// any transaction — how a mandate whose set-up timed out learns its outcome when no webhook comes.
// A mandate no connector has taken (its request crashed between the phases) is looked for on the
// route's connectors once its retry window is over: adopted if one holds it, failed otherwise. One
// whose set-up got no answer and that its connector still does not know once overdue fails too.
//
// Expiry: an active mandate with no successful debit for MANDATE_DORMANCY_DAYS (counted from its
// activation or its last successful debit) expires, by the worker's clock.
import { and, eq, lte } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { mandates } from '../../storage/schema.js';
import type { Runtime } from '../../runtime.js';
import { checkAll, checkNeverResent, claimPendingChecks } from '../../movement/worker.js';
import { ABANDONED_MANDATE, expireMandate, unbookedMandate, type MandateRow } from './transitions.js';
import { mandateKind } from './kind.js';

const DAY_MS = 86_400_000;

function checkMandate(db: Db, rt: Runtime, row: MandateRow): Promise<void> {
  // A processor that has no record of a mandate it was sent may still be registering it; once
  // overdue it is not, and waiting longer would leave the mandate pending forever (found by the
  // simulation, sim/: seed 1 with 100 steps): it fails.
  return checkNeverResent(db, rt, mandateKind, row, { unbooked: unbookedMandate, abandoned: ABANDONED_MANDATE });
}

/** Expires, in batches, the active mandates unused since before `now` minus the dormancy period. */
export async function expireDormantMandates(db: Db, rt: Runtime, now: Date, batch = 200): Promise<number> {
  const cutoff = new Date(now.getTime() - rt.config.mandateDormancyDays * DAY_MS);
  let expired = 0;
  for (;;) {
    const due = await db.transaction(async (tx) => {
      const rows = await tx
        .select()
        .from(mandates)
        .where(and(eq(mandates.status, 'active'), lte(mandates.lastActivityAt, cutoff)))
        .limit(batch)
        .for('update', { skipLocked: true });
      for (const row of rows) await expireMandate(tx, row, now);
      return rows;
    });
    for (const row of due) rt.metrics.movement('mandate', 'expired', row.connector);
    expired += due.length;
    if (due.length < batch) return expired;
  }
}

/** One pass: status checks of due pending mandates, then expiry; returns what each did. */
export async function runMandateJobs(db: Db, rt: Runtime, now: Date, batch = 50): Promise<{ checked: number; expired: number }> {
  const due = await claimPendingChecks<MandateRow>(db, rt, mandates, batch);
  await checkAll(due, (row) => checkMandate(db, rt, row));
  return { checked: due.length, expired: await expireDormantMandates(db, rt, now) };
}
