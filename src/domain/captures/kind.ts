// A capture as a money movement (src/movement): sent to the one connector holding its payment's
// authorisation, the capture id being the processor's idempotency key, so sending it again is
// always safe (resumed by sending, as a refund is; its calls: src/connectors/movements/children.ts).
import { and, eq } from 'drizzle-orm';
import type { CaptureRequest, CaptureState } from '../../connectors/types.js';
import { CAPTURE_CALLS } from '../../connectors/movements/children.js';
import { toPublicId } from '../../kernel/ids.js';
import { parentsConnector, type MovementKind } from '../../movement/kind.js';
import { authorisationReference } from '../payments/authorisation-reference.js';
import type { Executor } from '../../storage/db.js';
import { payments } from '../../storage/schema.js';
import { CAPTURE_RULES, type CaptureUpdate } from './transitions.js';
import type { CaptureRow } from './view.js';

export const captureKind: MovementKind<CaptureRow, CaptureState, CaptureUpdate, CaptureRequest> = {
  ...CAPTURE_CALLS,
  object: 'capture',
  prefix: 'cap',
  rules: CAPTURE_RULES,
  route: parentsConnector,
  resumeBy: 'sending',
  statusRow: async (db, row) => ({ ...row, paymentReference: await authorisationReference(db, row) }),
  waitsWhenUnreached: true,
};

/** The capture as its connector needs it, with the authorisation as that connector knows it. */
export async function captureRequest(db: Executor, row: CaptureRow): Promise<CaptureRequest> {
  const [payment] = await db
    .select({ connectorReference: payments.connectorReference })
    .from(payments)
    .where(and(eq(payments.accountId, row.accountId), eq(payments.livemode, row.livemode), eq(payments.id, row.paymentId)));
  return {
    reference: toPublicId('cap', row.id),
    // The attempt that took the payment, under its own reference (a cascaded payment's pay_…_n).
    paymentReference: await authorisationReference(db, row),
    connectorPaymentReference: payment?.connectorReference ?? null,
    amount: row.amount,
    currency: row.currency,
    finalCapture: row.finalCapture,
  };
}
