// The worker's part of voids: pending voids checked with their processor (the authorisation's state
// says whether it was released; one the processor never took is sent again under the same id),
// then pending captures checked likewise (src/domain/captures/jobs.ts), then authorisations past
// capture_before voided (cancellation_reason `expired`), so that the money held on the customer's
// card is released and the order can take another payment.
import { and, asc, eq, lte, notExists, sql } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { captures, payments, voids } from '../../storage/schema.js';
import type { Runtime } from '../../runtime.js';
import { ApiError } from '../../kernel/errors.js';
import { systemContext } from '../../events/service.js';
import { checkAll, checkMovement, claimPendingChecks } from '../../movement/worker.js';
import { voidKind } from './kind.js';
import { voidRequestOf, voidWithoutKey } from './service.js';
import { closeAtCaptured, runCaptureChecks } from '../captures/jobs.js';
import type { VoidRow } from './transitions.js';

/**
 * One pass: checks up to `batch` due voids and captures, then handles up to `batch` lapsed
 * authorisations: `expired` voided, `closed` at what was partly captured (captures/jobs.ts).
 */
export async function runVoidJobs(db: Db, rt: Runtime, batch = 50): Promise<{ checked: number; expired: number; captures: number; closed: number }> {
  const due = await claimPendingChecks<VoidRow>(db, rt, voids, batch);
  await checkAll(due, (row) =>
    checkMovement(db, rt, voidKind, row, { overdue: false, whenNowhere: 'send', whenUnknown: 'send', request: () => voidRequestOf(db, row) }),
  );
  const captured = await runCaptureChecks(db, rt, batch);
  return { checked: due.length, captures: captured, ...(await expireAuthorisations(db, rt, batch)) };
}

/** The longest wait between two expiry voids of one authorisation the processor keeps refusing. */
export const EXPIRY_VOID_BACKOFF_CAP_MS = 6 * 3_600_000;

/**
 * Voids authorisations past capture_before with nothing captured and nothing on its way; closes
 * those partly captured, which no processor here can void, at what was captured. Another worker
 * voiding the same one meanwhile makes the admit rule refuse: that one is skipped. An expiry void
 * the processor refused is tried again after the status-check interval, doubled at each refusal up
 * to EXPIRY_VOID_BACKOFF_CAP_MS, counted from the last refusal: its failed voids are the record.
 */
async function expireAuthorisations(db: Db, rt: Runtime, batch: number): Promise<{ expired: number; closed: number }> {
  const now = rt.now();
  const voidsOf = (t: typeof captures | typeof voids) => and(eq(t.accountId, payments.accountId), eq(t.livemode, payments.livemode), eq(t.paymentId, payments.id));
  const pendingOf = (t: typeof captures | typeof voids) => db.select({ id: t.id }).from(t as typeof captures).where(and(voidsOf(t), eq(t.status, 'pending')));
  const backingOff = db
    .select({ n: sql`count(*)` })
    .from(voids)
    .where(and(voidsOf(voids), eq(voids.status, 'failed'), eq(voids.reason, 'expired')))
    // The exponent is capped before power(): 2^(refusals − 1) overflows float8 past ~1,024 refusals.
    .having(
      sql`max(${voids.updatedAt}) + least(${rt.config.statusCheckIntervalMs}::float8 * power(2, least(count(*) - 1, 30)), ${EXPIRY_VOID_BACKOFF_CAP_MS}::float8) * interval '1 millisecond' > ${now.toISOString()}::timestamptz`,
    );
  const lapsed = await db
    .select({ accountId: payments.accountId, livemode: payments.livemode, id: payments.id, amountCaptured: payments.amountCaptured })
    .from(payments)
    .where(
      and(
        eq(payments.status, 'requires_capture'),
        lte(payments.captureBefore, now),
        notExists(pendingOf(captures)),
        notExists(pendingOf(voids)),
        notExists(backingOff),
      ),
    )
    .orderBy(asc(payments.captureBefore))
    .limit(batch);
  let expired = 0;
  let closed = 0;
  await checkAll(lapsed, async (p) => {
    if (p.amountCaptured > 0) {
      if (await closeAtCaptured(db, rt, p)) closed++;
      return;
    }
    try {
      await voidWithoutKey(db, rt, systemContext(p.accountId, p.livemode), p.id, 'expired');
      expired++;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'invalid_state')) throw err;
    }
  });
  return { expired, closed };
}
