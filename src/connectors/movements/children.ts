// The calls of the movements sent to the one connector holding their parent — a payment's refund,
// capture and void, a dispute's answer —, all of one shape (one factory): our id is the
// processor's idempotency key, the update names no connector (it is the parent's), and nothing
// done anywhere fails it.
import { toPublicId } from '../../kernel/ids.js';
import type {
  CancelAuthorizationRequest,
  CancelState,
  CaptureRequest,
  CaptureState,
  ChargeState,
  Connector,
  ConnectorError,
  ConnectorErrorCode,
  DisputeResponseRequest,
  DisputeResponseState,
  RefundRequest,
  RefundState,
  StatusRequest,
} from '../types.js';
import { lacks, reported, type MovementCalls, type Report } from './calls.js';

/** A child movement's update: its status, its reference at its parent's connector, and a failure in our words. */
export type ChildUpdate<F extends string> =
  | { kind: 'succeeded'; connectorReference: string }
  | { kind: 'pending'; connectorReference: string | null }
  | { kind: 'failed'; connectorReference: string | null; failureCode: F; failureMessage: string };

type ChildState = { kind: string; connectorReference: string | null; failureCode?: string; message?: string };
type FailureOf<S> = S extends { failureCode: infer F extends string } ? F : never;

function childCalls<Row, S extends ChildState, Request>(spec: {
  send(connector: Connector, request: Request, signal: AbortSignal): Promise<S | ConnectorError>;
  status(connector: Connector, request: StatusRequest, signal: AbortSignal, row: Row): Promise<Report<S>>;
  /** What the update is called for each state the processor reports, where it is not the state's own name (a void's `canceled`). */
  to?: Record<S['kind'], 'succeeded' | 'pending' | 'failed'>;
  /** The failure message of a movement no connector acted on. */
  nothingDone(code: ConnectorErrorCode): string;
}): MovementCalls<Row, S, ChildUpdate<FailureOf<S>>, Request> {
  const to = (state: S) => (spec.to ? spec.to[state.kind as S['kind']] : (state.kind as 'succeeded' | 'pending' | 'failed'));
  return {
    send: spec.send,
    status: spec.status,
    attempt: (state) => (state.kind === 'failed' ? { kind: 'declined', failureCode: state.failureCode! } : { kind: to(state) as 'succeeded' | 'pending' }),
    fromState: (_connector, state) => {
      const { connector: _, ...update } = reported(to(state), '', state);
      return update as ChildUpdate<FailureOf<S>>;
    },
    nothingDone: (_connector, code) => ({ kind: 'failed', connectorReference: null, failureCode: 'processing_error' as FailureOf<S>, failureMessage: spec.nothingDone(code) }),
    unknown: () => ({ kind: 'pending', connectorReference: null }),
  };
}

export const REFUND_CALLS = childCalls<unknown, RefundState, RefundRequest>({
  send: (connector, request, signal) => connector.refund(request, signal),
  status: (connector, request, signal) => connector.refundStatus(request, signal),
  nothingDone: (code) => `The connector could not process the refund (${code}).`,
});

/** The row a capture's or a void's status reads: its payment's attempt reference completed beforehand (the kind's statusRow). */
type OfAuthorisation = { paymentReference?: string | null; paymentConnectorReference?: string | null };

export const CAPTURE_CALLS = childCalls<OfAuthorisation, CaptureState, CaptureRequest>({
  send: async (connector, request, signal) => (connector.capture ? connector.capture(request, signal) : lacks(connector, 'cannot capture an authorisation')),
  // The payment as the processor knows it, under the attempt that took it: a processor without a lookup of captures (Stripe) answers from it.
  status: async (connector, request, signal, row) =>
    connector.captureStatus
      ? connector.captureStatus({ ...request, paymentReference: row.paymentReference!, connectorPaymentReference: null }, signal)
      : lacks(connector, 'cannot capture an authorisation'),
  nothingDone: (code) => `The connector could not process the capture (${code}).`,
});

export const VOID_CALLS = childCalls<OfAuthorisation, CancelState, CancelAuthorizationRequest>({
  send: async (connector, request, signal) =>
    connector.cancelAuthorization ? connector.cancelAuthorization(request, signal) : lacks(connector, 'cannot void an authorisation'),
  // The authorisation as the processor knows it: released (voided), still held (the void is not there), or captured.
  status: async (connector, request, signal, row) => {
    const charge = await connector.chargeStatus({ reference: row.paymentReference!, connectorReference: row.paymentConnectorReference ?? null }, signal);
    return voidReport(charge, row, request.connectorReference);
  },
  to: { canceled: 'succeeded', pending: 'pending', failed: 'failed' },
  nothingDone: (code) => `The connector could not void the authorisation (${code}).`,
});

/**
 * The void as the authorisation's state tells it: a charge declined after its authorisation was
 * released (voided), captured (too late to void), or still held or in flight — `pending` where
 * the processor took our void (it has a reference: its notification will say), not there otherwise.
 */
function voidReport(charge: Report<ChargeState>, row: OfAuthorisation, taken: string | null): Report<CancelState> {
  switch (charge.kind) {
    case 'error':
      return charge as Report<CancelState>;
    case 'declined':
      return { kind: 'canceled', connectorReference: taken ?? (charge as { connectorReference: string | null }).connectorReference ?? row.paymentConnectorReference ?? '' };
    case 'succeeded':
      return { kind: 'failed', connectorReference: taken, failureCode: 'authorization_captured', message: 'The processor captured the payment: it can no longer be voided (refund it instead).' };
    default:
      return taken ? { kind: 'pending', connectorReference: taken } : { kind: 'not_found' };
  }
}

/** A dispute's answer as stored: what its processor is sent, rebuilt from the row alone (the evidence as submitted). */
export interface StoredResponse {
  id: string;
  action: DisputeResponseRequest['action'];
  disputeConnectorReference: string;
  evidence: Record<string, string>;
  defenseReason: string | null;
}

/** What the processor is sent, rebuilt from the stored row alone (the evidence as submitted). */
export function responseRequest(row: StoredResponse): DisputeResponseRequest {
  return {
    reference: toPublicId('dpr', row.id),
    action: row.action,
    disputeReference: row.disputeConnectorReference,
    evidence: row.evidence,
    defenseReason: row.defenseReason,
  };
}

export const DISPUTE_RESPONSE_CALLS = childCalls<StoredResponse, DisputeResponseState, DisputeResponseRequest>({
  send: async (connector, request, signal) =>
    connector.respondToDispute ? connector.respondToDispute(request, signal) : lacks(connector, 'cannot answer a dispute here'),
  status: async (connector, _request, signal, row) =>
    connector.disputeResponseStatus ? connector.disputeResponseStatus(responseRequest(row), signal) : { kind: 'not_found' },
  nothingDone: (code) => `The processor could not be reached (${code}); nothing was sent. Try again with a new Idempotency-Key.`,
});
