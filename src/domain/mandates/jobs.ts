// The worker's mandate jobs.
//
// Status checks: pending mandates whose next_status_check_at has come are claimed (SKIP LOCKED,
// the check time pushed forward as a lease) and their connector is asked for the truth outside
// any transaction — how a mandate whose set-up timed out learns its outcome when no webhook comes.
// A mandate no connector has taken (its request crashed between the phases) is looked for on the
// route's connectors once its retry window is over: adopted if one holds it, failed otherwise.
//
// Expiry: an active mandate with no successful debit for MANDATE_DORMANCY_DAYS (counted from its
// activation or its last successful debit) expires, by the worker's clock.
import { and, asc, eq, inArray, lte } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { mandates } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import { recordEvent, systemContext } from '../events/service.js';
import { callConnector } from '../../connectors/router.js';
import type { Runtime } from '../../runtime.js';
import { abandonAfterMs } from '../payments/service.js';
import { mandateStates } from './state.js';
import {
  ABANDONED_MANDATE,
  applyMandateState,
  applyMandateUpdate,
  locateMandate,
  lockMandate,
  mandateView,
  type MandateRow,
} from './service.js';

const DAY_MS = 86_400_000;

async function claim(db: Db, rt: Runtime, batch: number): Promise<MandateRow[]> {
  const now = rt.now();
  return db.transaction(async (tx) => {
    const due = await tx
      .select()
      .from(mandates)
      .where(and(eq(mandates.status, 'pending'), lte(mandates.nextStatusCheckAt, now)))
      .orderBy(asc(mandates.nextStatusCheckAt))
      .limit(batch)
      .for('update', { skipLocked: true });
    if (due.length) {
      await tx
        .update(mandates)
        .set({ nextStatusCheckAt: new Date(now.getTime() + rt.config.statusCheckIntervalMs) })
        .where(inArray(mandates.id, due.map((r) => r.id)));
    }
    return due;
  });
}

async function checkMandate(db: Db, rt: Runtime, row: MandateRow): Promise<void> {
  const ctx = systemContext(row.accountId, row.livemode);
  if (row.connector === null) {
    const overdue = rt.now().getTime() - row.createdAt.getTime() >= abandonAfterMs(rt, row.route.length);
    const located = await locateMandate(rt, row);
    if (located.found) {
      await applyMandateState(db, rt, ctx, row.accountId, row.id, located.connector, located.state);
    } else if (located.certain && overdue) {
      await db.transaction(async (tx) => {
        const locked = await lockMandate(tx, row.accountId, row.id);
        if (!locked || locked.status !== 'pending' || locked.connector !== null) return;
        await applyMandateUpdate(tx, ctx, locked, ABANDONED_MANDATE, [], rt);
      });
    }
    return;
  }
  const connector = row.connector;
  const reference = toPublicId('mdt', row.id);
  const guarded = await callConnector(rt.call, connector, (c, signal) =>
    c.mandateStatus ? c.mandateStatus({ reference, connectorReference: row.connectorReference }, signal) : Promise.resolve({ kind: 'not_found' as const }),
  );
  if ('skipped' in guarded || guarded.result.kind === 'error' || guarded.result.kind === 'not_found') return;
  await applyMandateState(db, rt, ctx, row.accountId, row.id, connector, guarded.result);
}

/** Expires, in batches, the active mandates unused since before `now` minus the dormancy period. */
export async function expireDormantMandates(db: Db, rt: Runtime, now: Date, batch = 200): Promise<number> {
  const cutoff = new Date(now.getTime() - rt.config.mandateDormancyDays * DAY_MS);
  let expired = 0;
  for (;;) {
    const n = await db.transaction(async (tx) => {
      const due = await tx
        .select()
        .from(mandates)
        .where(and(eq(mandates.status, 'active'), lte(mandates.lastActivityAt, cutoff)))
        .limit(batch)
        .for('update', { skipLocked: true });
      for (const row of due) {
        mandateStates.assert(row.status, 'expired', 'expire');
        const [updated] = await tx
          .update(mandates)
          .set({ status: 'expired', version: row.version + 1, updatedAt: now })
          .where(and(eq(mandates.accountId, row.accountId), eq(mandates.id, row.id)))
          .returning();
        await recordEvent(tx, systemContext(row.accountId, row.livemode), 'mandate.expired', mandateView(updated!), now);
      }
      return due.length;
    });
    expired += n;
    if (n < batch) return expired;
  }
}

/** One pass: status checks of due pending mandates, then expiry; returns what each did. */
export async function runMandateJobs(db: Db, rt: Runtime, now: Date, batch = 50): Promise<{ checked: number; expired: number }> {
  const due = await claim(db, rt, batch);
  for (const row of due) await checkMandate(db, rt, row);
  return { checked: due.length, expired: await expireDormantMandates(db, rt, now) };
}
