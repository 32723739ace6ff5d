// The worker's card-verification job, as for mandates (src/domain/mandates/jobs.ts): pending
// verifications whose next_status_check_at has come are claimed (SKIP LOCKED, the check time pushed
// forward as a lease) and their connector is asked outside any transaction. One no connector has
// taken (its request died between the phases, and no retry came) is looked for on the route once
// its retry window is over: adopted if a connector holds it, failed otherwise — the worker never
// sends a card again, having no CVC. A failed one has its sealed card erased (transitions.ts).
import type { Db } from '../../storage/db.js';
import { paymentMethods } from '../../storage/schema.js';
import type { Runtime } from '../../runtime.js';
import { checkAll, checkNeverResent, claimPendingChecks } from '../../movement/worker.js';
import type { PaymentMethodRow } from './service.js';
import { ABANDONED_VERIFICATION, unbookedVerification } from './transitions.js';
import { verificationKind } from './kind.js';

async function checkVerification(db: Db, rt: Runtime, row: PaymentMethodRow): Promise<void> {
  await checkNeverResent(db, rt, verificationKind, row, { unbooked: unbookedVerification, abandoned: ABANDONED_VERIFICATION });
}

/** One pass of status checks of due pending verifications; how many were checked. */
export async function runVerificationChecks(db: Db, rt: Runtime, batch = 50): Promise<number> {
  const due = await claimPendingChecks<PaymentMethodRow>(db, rt, paymentMethods, batch);
  await checkAll(due, (row) => checkVerification(db, rt, row));
  return due.length;
}
