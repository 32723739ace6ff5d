// The capture as the API shows it, apart from its transitions so that the payment's view, which
// lists its captures, can read them without depending on how captures move its payment.
import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { captures } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import type { CaptureFailureCode } from '../../connectors/types.js';
import { connectorView, moneyViewHead, viewTail } from '../../movement/kind.js';
import type { CaptureView } from './schema.js';

export type CaptureRow = typeof captures.$inferSelect;

/** The capture as the API shows it (its schema: schema.ts), keys in the documented order. */
export function captureView(row: CaptureRow): CaptureView {
  return {
    ...moneyViewHead('cap', 'capture', row),
    payment: toPublicId('pay', row.paymentId),
    final_capture: row.finalCapture,
    ...connectorView(row),
    failure_code: row.failureCode as CaptureFailureCode | null,
    failure_message: row.failureMessage,
    ...viewTail(row),
  };
}

/** The captures of each of `paymentIds` (all of one account and mode), oldest first, by payment id. */
export async function capturesByPayment(
  db: Executor,
  owner: { accountId: string; livemode: boolean },
  paymentIds: readonly string[],
): Promise<Map<string, CaptureView[]>> {
  const byPayment = new Map<string, CaptureView[]>();
  if (paymentIds.length === 0) return byPayment;
  const rows = await db
    .select()
    .from(captures)
    .where(and(eq(captures.accountId, owner.accountId), eq(captures.livemode, owner.livemode), inArray(captures.paymentId, [...paymentIds])))
    .orderBy(asc(captures.createdAt), asc(captures.id));
  for (const row of rows) byPayment.set(row.paymentId, [...(byPayment.get(row.paymentId) ?? []), captureView(row)]);
  return byPayment;
}
