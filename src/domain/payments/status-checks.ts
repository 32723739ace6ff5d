// The worker's status checks: pending payments and refunds whose next_status_check_at has come
// are claimed (SKIP LOCKED, the check time pushed forward as a lease, so several workers split the
// work) and their processor is asked for the truth, outside any transaction; what it says is then
// applied like any other report.
//
// A payment that no connector has taken is one whose request crashed between the phases: once
// its retry window is over, the route's connectors are asked whether one holds the charge (it is
// adopted) or none does (the payment fails as abandoned and its order reopens). A refund never
// sent is sent again: the processor dedupes by the refund id, and no card data is needed. A
// payment sent without an answer (timeout) that its processor still does not know once overdue
// fails the same way.
import { and, asc, eq, inArray, lte } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { payments, refunds } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import { systemContext } from '../events/service.js';
import { callConnector } from '../../connectors/router.js';
import type { Runtime } from '../../runtime.js';
import { ABANDONED, abandonAfterMs, applyChargeState, locateCharge } from './service.js';
import { applyPaymentUpdate, lockPayment, type PaymentRow, type PaymentUpdate } from './outcome.js';
import { applyRefundState, sendRefund, updateFromRefundState, type RefundRow } from '../refunds/service.js';

async function claim<T extends typeof payments | typeof refunds>(db: Db, rt: Runtime, table: T, batch: number) {
  const now = rt.now();
  return db.transaction(async (tx) => {
    const t = table as typeof payments;
    const due = await tx
      .select()
      .from(t)
      .where(and(eq(t.status, 'pending'), lte(t.nextStatusCheckAt, now)))
      .orderBy(asc(t.nextStatusCheckAt))
      .limit(batch)
      .for('update', { skipLocked: true });
    if (due.length) {
      await tx
        .update(t)
        .set({ nextStatusCheckAt: new Date(now.getTime() + rt.config.statusCheckIntervalMs) })
        .where(inArray(t.id, due.map((r) => r.id)));
    }
    return due as unknown as (T extends typeof payments ? PaymentRow : RefundRow)[];
  });
}

/** Fails the payment with `update`, if it is still pending with the connector (or none) seen when checked. */
async function failIfUnchanged(db: Db, rt: Runtime, row: PaymentRow, update: PaymentUpdate): Promise<void> {
  await db.transaction(async (tx) => {
    const locked = await lockPayment(tx, row.accountId, row.livemode, row.id);
    if (!locked || locked.status !== 'pending' || locked.connector !== row.connector) return;
    const options = { now: rt.now(), statusCheckIntervalMs: rt.config.statusCheckIntervalMs };
    await applyPaymentUpdate(tx, systemContext(row.accountId, row.livemode), locked, update, [], options);
  });
}

async function checkPayment(db: Db, rt: Runtime, row: PaymentRow): Promise<void> {
  const ctx = systemContext(row.accountId, row.livemode);
  const overdue = rt.now().getTime() - row.createdAt.getTime() >= abandonAfterMs(rt, row.route.length);
  if (row.connector === null) {
    const located = await locateCharge(rt, row);
    if (located.found) await applyChargeState(db, rt, ctx, row.accountId, row.id, located.connector, located.state);
    else if (located.certain && overdue) await failIfUnchanged(db, rt, row, ABANDONED);
    return;
  }
  const connector = row.connector;
  const guarded = await callConnector(rt.call, connector, (c, signal) =>
    c.chargeStatus({ reference: toPublicId('pay', row.id), connectorReference: row.connectorReference }, signal),
  );
  if ('skipped' in guarded || guarded.result.kind === 'error') return;
  if (guarded.result.kind === 'not_found') {
    // The request went out (a timeout) but the processor never booked it. Until the payment is
    // overdue it may still be on its way; after that, waiting longer would keep the order
    // `processing` forever, unpayable and uncancellable.
    if (overdue) {
      await failIfUnchanged(db, rt, row, {
        kind: 'failed',
        connector,
        connectorReference: null,
        failureCode: 'processing_error',
        failureMessage: `The request to ${connector} got no answer and ${connector} has no record of the charge; nothing was charged.`,
      });
    }
    return;
  }
  await applyChargeState(db, rt, ctx, row.accountId, row.id, connector, guarded.result);
}

async function checkRefund(db: Db, rt: Runtime, row: RefundRow): Promise<void> {
  const ctx = systemContext(row.accountId, row.livemode);
  const guarded = await callConnector(rt.call, row.connector, (c, signal) =>
    c.refundStatus({ reference: toPublicId('ref', row.id), connectorReference: row.connectorReference }, signal),
  );
  if ('skipped' in guarded || guarded.result.kind === 'error') return;
  const update = guarded.result.kind === 'not_found' ? await sendRefund(rt, row) : updateFromRefundState(guarded.result);
  await applyRefundState(db, rt, ctx, row.accountId, row.id, update);
}

/** One pass: checks up to `batch` due payments and refunds; returns how many were checked. */
export async function runStatusChecks(db: Db, rt: Runtime, batch = 50): Promise<{ payments: number; refunds: number }> {
  const duePayments = await claim(db, rt, payments, batch);
  for (const row of duePayments) await checkPayment(db, rt, row as PaymentRow);
  const dueRefunds = await claim(db, rt, refunds, batch);
  for (const row of dueRefunds) await checkRefund(db, rt, row as RefundRow);
  return { payments: duePayments.length, refunds: dueRefunds.length };
}
