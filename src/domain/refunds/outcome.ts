// The one place a refund's state changes, whoever learnt the news (the creating request, the
// worker, the processor's webhook): inside the caller's transaction with the refund row locked.
// Succeeded: the reserved amount leaves; failed: it returns to available and the payment's
// amount_refunded gives it back. Final refunds stay as they are.
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { payments, refunds } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import type { RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../events/service.js';
import { refundFailed, refundSettled } from '../../ledger/journal.js';
import type { RefundFailureCode, RefundState } from '../../connectors/types.js';
import type { RefundView } from './schema.js';
import { refundStates } from './state.js';

export type RefundRow = typeof refunds.$inferSelect;

export function refundView(row: RefundRow): RefundView {
  return {
    id: toPublicId('ref', row.id),
    object: 'refund',
    livemode: row.livemode,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    payment: toPublicId('pay', row.paymentId),
    reason: row.reason as RefundView['reason'],
    connector: row.connector,
    connector_reference: row.connectorReference,
    failure_code: row.failureCode,
    failure_message: row.failureMessage,
    metadata: row.metadata,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export async function lockRefund(tx: Executor, accountId: string, livemode: boolean, uuid: string): Promise<RefundRow | undefined> {
  const [row] = await tx
    .select()
    .from(refunds)
    .where(and(eq(refunds.accountId, accountId), eq(refunds.livemode, livemode), eq(refunds.id, uuid)))
    .for('update');
  return row;
}

export type RefundUpdate =
  | { kind: 'succeeded'; connectorReference: string }
  | { kind: 'pending'; connectorReference: string | null }
  | { kind: 'failed'; connectorReference: string | null; failureCode: RefundFailureCode; failureMessage: string };

export function updateFromRefundState(state: RefundState): RefundUpdate {
  switch (state.kind) {
    case 'succeeded':
    case 'pending':
      return { kind: state.kind, connectorReference: state.connectorReference };
    case 'failed':
      return { kind: 'failed', connectorReference: state.connectorReference, failureCode: state.failureCode, failureMessage: state.message };
    default:
      return state satisfies never;
  }
}

/** Applies an update to a locked refund; the single place refunds change state. */
export async function applyRefundUpdate(
  tx: Executor,
  ctx: RequestContext,
  row: RefundRow,
  update: RefundUpdate,
  opts: { now: Date; statusCheckIntervalMs: number },
): Promise<RefundRow> {
  const { now } = opts;
  if (row.status !== 'pending') return row;
  const where = and(eq(refunds.accountId, row.accountId), eq(refunds.id, row.id));
  const movement = {
    accountId: row.accountId,
    livemode: row.livemode,
    currency: row.currency,
    amount: row.amount,
    source: { type: 'refund' as const, id: row.id },
    createdAt: now,
  };
  if (update.kind === 'pending') {
    const accepted = row.connectorReference === null && update.connectorReference !== null;
    const [updated] = await tx
      .update(refunds)
      .set({
        connectorReference: update.connectorReference ?? row.connectorReference,
        nextStatusCheckAt: new Date(now.getTime() + opts.statusCheckIntervalMs),
        ...(accepted ? { version: sql`${refunds.version} + 1`, updatedAt: now } : {}),
      })
      .where(where)
      .returning();
    if (accepted) await recordEvent(tx, ctx, 'refund.pending', refundView(updated!), now);
    return updated!;
  }
  refundStates.assert(row.status, update.kind, update.kind === 'succeeded' ? 'succeed' : 'fail');
  const [updated] = await tx
    .update(refunds)
    .set({
      status: update.kind,
      connectorReference: update.connectorReference ?? row.connectorReference,
      failureCode: update.kind === 'failed' ? update.failureCode : null,
      failureMessage: update.kind === 'failed' ? update.failureMessage : null,
      nextStatusCheckAt: null,
      version: sql`${refunds.version} + 1`,
      updatedAt: now,
    })
    .where(where)
    .returning();
  if (update.kind === 'succeeded') {
    await refundSettled(tx, movement);
  } else {
    // The money never left: the payment may be refunded by that much again.
    await tx
      .update(payments)
      .set({ amountRefunded: sql`${payments.amountRefunded} - ${row.amount}`, version: sql`${payments.version} + 1`, updatedAt: now })
      .where(and(eq(payments.accountId, row.accountId), eq(payments.id, row.paymentId)));
    await refundFailed(tx, movement);
  }
  await recordEvent(tx, ctx, `refund.${update.kind}`, refundView(updated!), now);
  return updated!;
}

