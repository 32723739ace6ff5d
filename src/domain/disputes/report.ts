// A processor's report of a dispute applied to our dp_: created at the first report of a processor
// dispute (one row per processor id, by a unique index, so concurrent or repeated webhooks make
// one), then moved by later ones. A report of an earlier stage than the one applied changes no
// status (webhooks come late, twice, in any order); the funds follow the most the processor
// reported (money.ts), so every order of the same reports ends in the same dispute and bookings.
import { and, eq, sql } from 'drizzle-orm';
import type { DisputeReport } from '../../connectors/disputes.js';
import { systemContext } from '../../events/service.js';
import { recordEvent } from '../../events/service.js';
import { newOwnedRow } from '../../storage/tenant.js';
import type { DisputeApplier } from '../../movement/inbound.js';
import type { Executor } from '../../storage/db.js';
import { disputes, payments } from '../../storage/schema.js';
import type { PaymentRow } from '../payments/transitions.js';
import { settleFunds } from './money.js';
import { disputeStates } from './state.js';
import { disputeEventOf, disputeView, saveDispute, type DisputeRow } from './transitions.js';

export const applyDisputeReport: DisputeApplier = async (tx, rt, paymentRow, key, report) => {
  const payment = paymentRow as PaymentRow;
  const ctx = systemContext(payment.accountId, payment.livemode);
  const now = rt.now();
  const created = await createOnce(tx, payment, key, report, now);
  let row = created ?? (await lockDispute(tx, payment, key, report.connectorReference));
  if (created) {
    await countDispute(tx, payment, now);
    await recordEvent(tx, ctx, 'dispute.created', disputeView(row), now);
    if (disputeStates.is(row.status, 'closed')) await recordEvent(tx, ctx, 'dispute.closed', disputeView(row), now);
  } else {
    row = await applyStatus(tx, ctx, row, report, now);
  }
  await settleFunds(tx, rt, ctx, row, report, now);
};

async function createOnce(tx: Executor, payment: PaymentRow, key: string, report: DisputeReport, now: Date): Promise<DisputeRow | undefined> {
  const [row] = await tx
    .insert(disputes)
    .values({
      ...newOwnedRow(payment, 'dp', now),
      paymentId: payment.id,
      status: report.status,
      amount: report.amount,
      currency: report.currency,
      reason: report.reason,
      processorReason: report.processorReason,
      connector: key,
      connectorReference: report.connectorReference,
      stage: report.stage,
      evidenceDueBy: report.evidenceDueBy,
    })
    .onConflictDoNothing()
    .returning();
  return row;
}

/** The payment answers `disputed` and its disputes from this count (payments/transitions.ts): its view changes, so does its version. */
async function countDispute(tx: Executor, payment: PaymentRow, now: Date): Promise<void> {
  await tx
    .update(payments)
    .set({ disputeCount: sql`${payments.disputeCount} + 1`, version: sql`${payments.version} + 1`, updatedAt: now })
    .where(and(eq(payments.accountId, payment.accountId), eq(payments.livemode, payment.livemode), eq(payments.id, payment.id)));
}

async function lockDispute(tx: Executor, payment: PaymentRow, key: string, connectorReference: string): Promise<DisputeRow> {
  const [row] = await tx
    .select()
    .from(disputes)
    .where(
      and(
        eq(disputes.accountId, payment.accountId),
        eq(disputes.livemode, payment.livemode),
        eq(disputes.connector, key),
        eq(disputes.connectorReference, connectorReference),
      ),
    )
    .for('update');
  if (!row) throw new Error(`dispute ${connectorReference} of ${key} neither created nor found`);
  return row;
}

/** A later stage moves the status where the table allows it; the deadline follows the latest report that names one. */
async function applyStatus(tx: Executor, ctx: Parameters<typeof saveDispute>[1], row: DisputeRow, report: DisputeReport, now: Date): Promise<DisputeRow> {
  if (report.stage <= row.stage) return row;
  const moves = report.status !== row.status && disputeStates.can(row.status, report.status);
  const due = report.evidenceDueBy ?? row.evidenceDueBy;
  const dueChanged = due?.getTime() !== row.evidenceDueBy?.getTime();
  const status = moves ? report.status : row.status;
  const event = moves || dueChanged ? disputeEventOf(status) : null;
  return saveDispute(tx, ctx, row, { stage: report.stage, status, evidenceDueBy: due, ...(moves ? { processorReason: row.processorReason ?? report.processorReason } : {}) }, event, now);
}
