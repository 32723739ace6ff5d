// Sending payouts to banks, in atomic phases like payments (API.md §4), driven by the worker:
//
//   1. a short transaction claims due `pending` payouts (FOR UPDATE SKIP LOCKED, so workers in any
//      number of processes split them and a merchant's cancel, which locks the row too, either
//      wins before or finds the payout `processing`), moves each to `processing` with its event
//      and a lease (next_action_at) as the recovery point;
//   2. no transaction open: the route's connectors are called with the payout id as the bank's
//      idempotency key (a retryable failure falls back to the next connector, as for payments);
//   3. a second transaction applies the answer (outcome.ts).
//
// A `processing` payout whose lease or check time has come is verified: without a connector (the
// submitter crashed, or is still calling) every connector of the fixed route is asked whether it
// holds the payout; one that does is adopted, and when none does it is sent again (the banks
// dedupe by our id, so this never pays twice). With a connector, its status is applied; a payout
// the connector never received is sent to it again. Outcomes also arrive by the bank's webhook.
import { and, asc, eq, lte } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { beneficiaries, payouts } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import { systemContext } from '../events/service.js';
import { attemptOf, callConnector, type Attempt, type CallDeps, type Guarded } from '../../connectors/router.js';
import { connectorError, isRetryable, type PayoutRequest, type PayoutResult, type PayoutState } from '../../connectors/types.js';
import { openBeneficiarySecret } from '../beneficiaries/service.js';
import type { Runtime } from '../../runtime.js';
import {
  applyPayoutUpdate,
  lockPayout,
  markProcessing,
  updateFromPayoutExecution,
  updateFromPayoutState,
  type PayoutExecution,
  type PayoutRow,
  type PayoutUpdate,
} from './outcome.js';

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

function applyOptions(rt: Runtime) {
  return { now: rt.now(), statusCheckIntervalMs: rt.config.statusCheckIntervalMs };
}

/** Phase 1: claims due pending payouts (or just `only`) and marks them processing. */
export async function claimForSubmission(db: Db, rt: Runtime, opts: { only?: { accountId: string; id: string }; batch?: number } = {}): Promise<PayoutRow[]> {
  const now = rt.now();
  return db.transaction(async (tx) => {
    const due = await tx
      .select()
      .from(payouts)
      .where(
        opts.only
          ? and(eq(payouts.accountId, opts.only.accountId), eq(payouts.id, opts.only.id), eq(payouts.status, 'pending'))
          : and(eq(payouts.status, 'pending'), lte(payouts.nextActionAt, now)),
      )
      .orderBy(asc(payouts.nextActionAt))
      .limit(opts.batch ?? rt.payouts.batchSize)
      .for('update', { skipLocked: true });
    const claimed: PayoutRow[] = [];
    for (const row of due) {
      claimed.push(await markProcessing(tx, systemContext(row.accountId, row.livemode), row, now, submissionLeaseMs(rt, row.route.length)));
    }
    return claimed;
  });
}

async function payoutRequest(db: Db, rt: Runtime, row: PayoutRow): Promise<PayoutRequest> {
  const [beneficiary] = await db
    .select()
    .from(beneficiaries)
    .where(and(eq(beneficiaries.accountId, row.accountId), eq(beneficiaries.id, row.beneficiaryId)));
  if (!beneficiary) throw new Error(`payout ${row.id} names beneficiary ${row.beneficiaryId}, which does not exist`);
  return {
    reference: toPublicId('po', row.id),
    amount: row.amount,
    currency: row.currency,
    account: {
      country: beneficiary.bankCountry,
      currency: beneficiary.bankCurrency,
      secret: openBeneficiarySecret(rt, beneficiary),
      bic: beneficiary.bankBic,
      sortCode: beneficiary.bankSortCode,
      routingNumber: beneficiary.bankRoutingNumber,
      ifsc: beneficiary.bankIfsc,
    },
    beneficiary: { name: beneficiary.name },
  };
}

/** The attempt record of a payout call: a bank that paid (or paid and returned) took it, like a succeeded charge. */
function payoutAttempt(name: string, guarded: Guarded<PayoutState | { kind: 'not_found' }>): Attempt {
  if ('skipped' in guarded) return attemptOf(name, guarded);
  const { result } = guarded;
  const taken = result.kind === 'paid' || result.kind === 'returned';
  return attemptOf(name, taken ? { ...guarded, result: { kind: 'succeeded' } } : guarded);
}

function sendTo(deps: CallDeps, name: string, request: PayoutRequest) {
  return callConnector<PayoutState>(deps, name, (connector, signal) =>
    connector.payout ? connector.payout(request, signal) : Promise.resolve(connectorError('request_rejected', `${name} cannot send payouts`)),
  );
}

/** Tries the plan in order; only a retryable failure (nothing reached that bank) moves to the next connector. */
export async function routePayout(deps: CallDeps, plan: readonly string[], request: PayoutRequest): Promise<PayoutExecution> {
  const attempts: Attempt[] = [];
  let last: PayoutResult = connectorError('processor_error', 'every connector of the route is unavailable (circuit open)');
  for (const name of plan) {
    const guarded = await sendTo(deps, name, request);
    attempts.push(payoutAttempt(name, guarded));
    if ('skipped' in guarded) continue;
    last = guarded.result;
    if (isRetryable(guarded.result)) continue;
    return { attempts, connector: name, result: guarded.result };
  }
  return { attempts, connector: null, result: last };
}

/** Phase 3: the outcome, in its own transaction. */
async function finish(db: Db, rt: Runtime, row: PayoutRow, update: PayoutUpdate, attempts: Attempt[]): Promise<PayoutRow> {
  return db.transaction(async (tx) => {
    const locked = await lockPayout(tx, row.accountId, row.id);
    if (!locked) throw new Error(`payout ${row.id} vanished between phases`);
    return applyPayoutUpdate(tx, systemContext(row.accountId, row.livemode), locked, update, attempts, applyOptions(rt));
  });
}

/** Phases 2 and 3 for a claimed payout. */
export async function sendPayout(db: Db, rt: Runtime, row: PayoutRow): Promise<PayoutRow> {
  const request = await payoutRequest(db, rt, row);
  const execution = await routePayout(rt.call, row.route, request);
  return finish(db, rt, row, updateFromPayoutExecution(execution), execution.attempts);
}

/** Submits one payout now if it is still pending (right after it was created, or for a test helper). */
export async function submitPayoutNow(db: Db, rt: Runtime, accountId: string, id: string): Promise<PayoutRow | undefined> {
  const [claimed] = await claimForSubmission(db, rt, { only: { accountId, id } });
  return claimed ? sendPayout(db, rt, claimed) : undefined;
}

/** Claims processing payouts whose check time has come, pushing it forward as a lease. */
async function claimForCheck(db: Db, rt: Runtime): Promise<PayoutRow[]> {
  const now = rt.now();
  return db.transaction(async (tx) => {
    const due = await tx
      .select()
      .from(payouts)
      .where(and(eq(payouts.status, 'processing'), lte(payouts.nextActionAt, now)))
      .orderBy(asc(payouts.nextActionAt))
      .limit(rt.payouts.batchSize)
      .for('update', { skipLocked: true });
    for (const row of due) {
      await tx
        .update(payouts)
        .set({ nextActionAt: new Date(now.getTime() + submissionLeaseMs(rt, row.route.length)) })
        .where(and(eq(payouts.accountId, row.accountId), eq(payouts.id, row.id)));
    }
    return due;
  });
}

function statusOf(deps: CallDeps, name: string, row: PayoutRow) {
  return callConnector(deps, name, (connector, signal) =>
    connector.payoutStatus
      ? connector.payoutStatus({ reference: toPublicId('po', row.id), connectorReference: name === row.connector ? row.connectorReference : null }, signal)
      : Promise.resolve(connectorError('request_rejected', `${name} cannot send payouts`)),
  );
}

async function checkPayout(db: Db, rt: Runtime, row: PayoutRow): Promise<void> {
  const deps = rt.call;
  const candidates = row.connector === null ? row.route : [row.connector];
  let certain = true;
  for (const name of candidates) {
    const guarded = await statusOf(deps, name, row);
    if ('skipped' in guarded || guarded.result.kind === 'error') {
      certain = false;
      continue;
    }
    if (guarded.result.kind !== 'not_found') {
      // The check that found it stands for the attempt a crashed submitter could not record.
      const attempts = row.connector === null ? [payoutAttempt(name, guarded)] : [];
      await finish(db, rt, row, updateFromPayoutState(name, guarded.result), attempts);
      return;
    }
  }
  // Not received anywhere (and everyone could tell): sending again is safe, the banks dedupe by our id.
  if (!certain) return;
  const request = await payoutRequest(db, rt, row);
  const execution = await routePayout(deps, candidates, request);
  await finish(db, rt, row, updateFromPayoutExecution(execution), execution.attempts);
}

/** One worker pass over payouts: submits due pending ones, then verifies due processing ones. */
export async function runPayoutJobs(db: Db, rt: Runtime): Promise<{ submitted: number; checked: number }> {
  const claimed = await claimForSubmission(db, rt);
  // In parallel: one bank that does not answer (the timeout scenario) must not hold up the others.
  const sent = await Promise.allSettled(claimed.map((row) => sendPayout(db, rt, row)));
  const due = await claimForCheck(db, rt);
  const checked = await Promise.allSettled(due.map((row) => checkPayout(db, rt, row)));
  const failures = [...sent, ...checked].filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown);
  if (failures.length) throw new AggregateError(failures, `${failures.length} payout submissions or checks failed; they are retried at their next check`);
  return { submitted: claimed.length, checked: due.length };
}

