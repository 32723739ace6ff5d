// A capture as a money movement (src/movement): sent to the one connector holding its payment's
// authorisation, the capture id being the processor's idempotency key, so sending it again is
// always safe (resumed by sending, as a refund is).
import { and, eq } from 'drizzle-orm';
import { connectorError, type CaptureRequest, type CaptureState, type ConnectorErrorCode } from '../../connectors/types.js';
import { toPublicId } from '../../kernel/ids.js';
import { reported, type MovementKind } from '../../movement/kind.js';
import { authorisationReference } from '../payments/authorisation-reference.js';
import type { Executor } from '../../storage/db.js';
import { payments } from '../../storage/schema.js';
import { CAPTURE_RULES, type CaptureUpdate } from './transitions.js';
import type { CaptureRow } from './view.js';

const unsupported = (name: string) => connectorError('request_rejected', `${name} cannot capture an authorisation`);

export const captureKind: MovementKind<CaptureRow, CaptureState, CaptureUpdate, CaptureRequest> = {
  object: 'capture',
  prefix: 'cap',
  rules: CAPTURE_RULES,
  route: (row) => [row.connector],
  resumeBy: 'sending',
  send: async (connector, request, signal) => (connector.capture ? connector.capture(request, signal) : unsupported(connector.name)),
  // The payment as the processor knows it, under the attempt that took it: a processor without a lookup of captures (Stripe) answers from it.
  status: async (connector, request, signal, row) =>
    connector.captureStatus
      ? connector.captureStatus({ ...request, paymentReference: row.paymentReference!, connectorPaymentReference: null }, signal)
      : unsupported(connector.name),
  statusRow: async (db, row) => ({ ...row, paymentReference: await authorisationReference(db, row) }),
  attempt: (state) => (state.kind === 'failed' ? { kind: 'declined', failureCode: state.failureCode } : { kind: state.kind }),
  // A capture has one connector, its payment's: the update names none.
  fromState: (_connector, state) => {
    const { connector: _, ...update } = reported(state.kind, '', state);
    return update as CaptureUpdate;
  },
  nothingDone: (_connector: string | null, code: ConnectorErrorCode) => ({
    kind: 'failed',
    connectorReference: null,
    failureCode: 'processing_error',
    failureMessage: `The connector could not process the capture (${code}).`,
  }),
  unknown: () => ({ kind: 'pending', connectorReference: null }),
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
