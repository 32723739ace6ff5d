// A void as a money movement (src/movement): sent to the one connector holding its payment's
// authorisation, the void id being the processor's idempotency key. Located before it is sent
// again: the processor's view of the authorisation says whether it was already released.
import type { CancelAuthorizationRequest, CancellationReason, CancelState, ChargeState, ConnectorErrorCode } from '../../connectors/types.js';
import { connectorError } from '../../connectors/types.js';
import { toPublicId } from '../../kernel/ids.js';
import { reported, type MovementKind, type Report } from '../../movement/kind.js';
import { authorisationReference } from '../payments/authorisation-reference.js';
import { lockRow } from '../../movement/apply.js';
import { payments } from '../../storage/schema.js';
import { PAYMENT_RULES, type PaymentRow } from '../payments/transitions.js';
import { VOID_RULES, type VoidRow, type VoidUpdate } from './transitions.js';

const TO: Record<CancelState['kind'], VoidUpdate['kind']> = { canceled: 'succeeded', pending: 'pending', failed: 'failed' };

export const voidKind: MovementKind<VoidRow, CancelState, VoidUpdate, CancelAuthorizationRequest> = {
  object: 'void',
  prefix: 'void',
  createdEvent: null,
  rules: VOID_RULES,
  route: (row) => [row.connector],
  resumeBy: 'sending',
  locatesBeforeSending: true,
  send: async (connector, request, signal) =>
    connector.cancelAuthorization ? connector.cancelAuthorization(request, signal) : connectorError('request_rejected', `${connector.name} cannot void an authorisation`),
  // The authorisation as the processor knows it: released (voided), still held (the void is not there), or captured.
  status: async (connector, request, signal, row) => {
    const charge = await connector.chargeStatus({ reference: row.paymentReference!, connectorReference: row.paymentConnectorReference }, signal);
    return voidReport(charge, row, request.connectorReference);
  },
  statusRow: async (db, row) => ({ ...row, paymentReference: await authorisationReference(db, row) }),
  attempt: (state) => (state.kind === 'failed' ? { kind: 'declined', failureCode: state.failureCode } : { kind: state.kind === 'canceled' ? 'succeeded' : 'pending' }),
  // A void has one connector, its payment's: the update names none.
  fromState: (_connector, state) => {
    const { connector: _, ...update } = reported(TO[state.kind as CancelState['kind']], '', state);
    return update as VoidUpdate;
  },
  nothingDone: (_connector: string | null, code: ConnectorErrorCode) => ({
    kind: 'failed',
    connectorReference: null,
    failureCode: 'processing_error',
    failureMessage: `The connector could not void the authorisation (${code}).`,
  }),
  unknown: () => ({ kind: 'pending', connectorReference: null }),
  waitsWhenUnreached: true,
  // The merchant asked about the payment: the answer is the payment as the void left it.
  answer: {
    status: 200,
    body: async (tx, row) => {
      const payment = await lockRow<PaymentRow>(tx, payments, row.accountId, row.livemode, row.paymentId);
      return PAYMENT_RULES.viewIn!(tx, payment!);
    },
  },
};

/**
 * The void as the authorisation's state tells it: a charge declined after its authorisation was
 * released (voided), captured (too late to void), or still held or in flight — `pending` where
 * the processor took our void (it has a reference: its notification will say), not there otherwise.
 */
function voidReport(charge: ChargeState | { kind: 'not_found' } | { kind: 'error' }, row: VoidRow, taken: string | null): Report<CancelState> {
  switch (charge.kind) {
    case 'error':
      return charge as Report<CancelState>;
    case 'declined':
      return { kind: 'canceled', connectorReference: taken ?? charge.connectorReference ?? row.paymentConnectorReference ?? '' };
    case 'succeeded':
      return { kind: 'failed', connectorReference: taken, failureCode: 'authorization_captured', message: 'The processor captured the payment: it can no longer be voided (refund it instead).' };
    default:
      return taken ? { kind: 'pending', connectorReference: taken } : { kind: 'not_found' };
  }
}

/** The void as its connector needs it, with the authorisation as that connector knows it. */
export function voidRequest(row: VoidRow & { paymentReference: string }, payment: { amount: number; currency: string }): CancelAuthorizationRequest {
  return {
    reference: toPublicId('void', row.id),
    // The attempt that holds the authorisation, under its own reference (a cascaded payment's pay_…_n).
    paymentReference: row.paymentReference,
    connectorPaymentReference: row.paymentConnectorReference,
    amount: payment.amount,
    currency: payment.currency,
    reason: row.reason as CancellationReason,
  };
}
