// A dispute's answer as a movement (src/movement), shaped like a void: sent to the one connector
// the dispute came from, our answer's id (dpr_…) being the processor's idempotency key; asked
// first where it stands before it is sent again (Stripe's dispute shows its submission or its
// closing; a processor with nothing to ask answers not_found and dedupes the resend by our key).
import { connectorError, type ConnectorErrorCode, type DisputeResponseRequest, type DisputeResponseState } from '../../connectors/types.js';
import { ApiError } from '../../kernel/errors.js';
import { toPublicId } from '../../kernel/ids.js';
import { reported, type MovementKind } from '../../movement/kind.js';
import { lockDisputeOf, RESPONSE_RULES, type ResponseRow, type ResponseUpdate } from './response-rules.js';
import { disputeView } from './transitions.js';

/** What the processor is sent, rebuilt from the stored row alone (the evidence as submitted). */
export function responseRequest(row: ResponseRow): DisputeResponseRequest {
  return {
    reference: toPublicId('dpr', row.id),
    action: row.action,
    disputeReference: row.disputeConnectorReference,
    evidence: row.evidence,
    defenseReason: row.defenseReason,
  };
}

export const responseKind: MovementKind<ResponseRow, DisputeResponseState, ResponseUpdate, DisputeResponseRequest> = {
  object: 'dispute_response',
  prefix: 'dpr',
  createdEvent: null,
  rules: RESPONSE_RULES,
  route: (row) => [row.connector],
  resumeBy: 'sending',
  locatesBeforeSending: true,
  heldAs: "the dispute's answer",
  send: async (connector, request, signal) =>
    connector.respondToDispute ? connector.respondToDispute(request, signal) : connectorError('request_rejected', `${connector.name} cannot answer a dispute here`),
  status: async (connector, _request, signal, row) =>
    connector.disputeResponseStatus ? connector.disputeResponseStatus(responseRequest(row), signal) : { kind: 'not_found' },
  attempt: (state) => (state.kind === 'failed' ? { kind: 'declined', failureCode: state.failureCode } : { kind: 'succeeded' }),
  // An answer has one connector, its dispute's: the update names none.
  fromState: (_connector, state) => {
    const { connector: _, ...update } = reported(state.kind, '', state);
    return update as ResponseUpdate;
  },
  nothingDone: (_connector: string | null, code: ConnectorErrorCode) => ({
    kind: 'failed',
    connectorReference: null,
    failureCode: 'processing_error',
    failureMessage: `The processor could not be reached (${code}); nothing was sent. Try again with a new Idempotency-Key.`,
  }),
  unknown: () => ({ kind: 'pending', connectorReference: null }),
  waitsWhenUnreached: true,
  // The merchant asked about the dispute: the answer is the dispute as its answer left it.
  answer: { status: 200, body: async (tx, row) => disputeView(await lockDisputeOf(tx, row)) },
  // Refused, or certainly never sent (processing_error): a typed 422 kept on the key, the dispute unchanged; a new key may try again.
  refusal: (row) => (row.status === 'failed' ? new ApiError('dispute_response_refused', { message: row.failureMessage ?? undefined }) : undefined),
};
