// Sending payouts to banks, in atomic phases like payments (docs/processors.md, crash recovery), driven by the worker:
//
//   1. a short transaction claims due `pending` payouts (FOR UPDATE SKIP LOCKED, so workers in any
//      number of processes split them and a merchant's cancel, which locks the row too, either
//      wins before or finds the payout `processing`), moves each to `processing` with its event
//      and a lease (next_action_at) as the recovery point;
//   2. no transaction open: the route's connectors are called with the payout id as the bank's
//      idempotency key (a retryable failure falls back to the next connector, as for payments);
//   3. a second transaction applies the answer (transitions.ts).
//
// A `processing` payout whose lease or check time has come is verified (src/movement/worker.ts):
// without a connector (the submitter crashed, or is still calling) every connector of the fixed
// route is asked whether it holds the payout; one that does is adopted, and when none does it is
// sent again (the banks dedupe by our id, so this never pays twice). With a connector, its status
// is applied; a payout the connector never received is sent to it again. Outcomes also arrive by
// the bank's webhook.
import type { Db, Executor } from '../../storage/db.js';
import { payouts } from '../../storage/schema.js';
import { systemContext } from '../../events/service.js';
import type { Runtime } from '../../runtime.js';
import { applyUpdate } from '../../movement/apply.js';
import { fromExecution, routeCall } from '../../movement/calls.js';
import { checkAll, checkMovement, claimDue } from '../../movement/worker.js';
import { markProcessing, type PayoutRow } from './transitions.js';
import { payoutKind, payoutRequest } from './kind.js';

/**
 * How long a submitter may still be calling the route: no status check interferes before. Twice
 * the route time and interval, as for payments (abandonAfterMs): a recovery that finds the payout
 * at no bank sends it again from the first connector, so the lease must also outlast clock skew
 * between processes and a bank that books a request late.
 */
function submissionLeaseMs(rt: Runtime, routeLength: number): number {
  const { connectorTimeoutMs, statusCheckIntervalMs } = rt.config;
  return 2 * (Math.max(1, routeLength) * connectorTimeoutMs + statusCheckIntervalMs);
}

/**
 * Claims due payouts of `status`, their lease pushed forward: pending ones (or just `only`) are
 * moved to processing (phase 1), processing ones are taken for a status check.
 */
function claimPayouts(db: Db, rt: Runtime, status: 'pending' | 'processing', opts: { only?: { accountId: string; id: string }; batch?: number } = {}) {
  const now = rt.now();
  const lease = (row: PayoutRow) => new Date(now.getTime() + submissionLeaseMs(rt, row.route.length));
  const submit = (tx: Executor, row: PayoutRow) => markProcessing(tx, systemContext(row.accountId, row.livemode), row, now, lease(row));
  const batch = opts.batch ?? rt.payouts.batchSize;
  return claimDue<PayoutRow>(db, { table: payouts, due: 'nextActionAt', status, now, batch, only: opts.only, ...(status === 'pending' ? { take: submit } : { leaseUntil: lease }) });
}

/** Phase 1: claims due pending payouts (or just `only`) and marks them processing. */
export function claimForSubmission(db: Db, rt: Runtime, opts: { only?: { accountId: string; id: string }; batch?: number } = {}): Promise<PayoutRow[]> {
  return claimPayouts(db, rt, 'pending', opts);
}

/** Phases 2 and 3 for a claimed payout. */
export async function sendPayout(db: Db, rt: Runtime, row: PayoutRow): Promise<PayoutRow> {
  rt.crashPoint('payout_submitted');
  const execution = await routeCall(rt.callsFor(row), payoutKind, row.route, await payoutRequest(db, rt, row));
  rt.crashPoint('payout_connector_answered');
  const ctx = systemContext(row.accountId, row.livemode);
  const after = await applyUpdate<PayoutRow>(db, rt, payoutKind, ctx, row.id, { update: fromExecution(payoutKind, execution), attempts: execution.attempts });
  if (!after) throw new Error(`payout ${row.id} vanished between phases`);
  return after;
}

/** Submits one payout now if it is still pending (right after it was created, or for a test helper). */
export async function submitPayoutNow(db: Db, rt: Runtime, accountId: string, id: string): Promise<PayoutRow | undefined> {
  const [claimed] = await claimForSubmission(db, rt, { only: { accountId, id } });
  return claimed ? sendPayout(db, rt, claimed) : undefined;
}

/** One worker pass over payouts: submits due pending ones, then verifies due processing ones. */
export async function runPayoutJobs(db: Db, rt: Runtime): Promise<{ submitted: number; checked: number }> {
  const claimed = await claimForSubmission(db, rt);
  // In parallel: one bank that does not answer (the timeout scenario) must not hold up the others.
  // A failed submission is retried at its next check; it must not stop this pass's checks.
  const sendFailure = await checkAll(claimed, (row) => sendPayout(db, rt, row)).catch((err: unknown) => err);
  const due = await claimPayouts(db, rt, 'processing');
  await checkAll(due, (row) =>
    checkMovement(db, rt, payoutKind, row, { overdue: false, whenNowhere: 'send', whenUnknown: 'send', request: () => payoutRequest(db, rt, row as PayoutRow) }),
  );
  if (sendFailure) throw sendFailure;
  return { submitted: claimed.length, checked: due.length };
}
