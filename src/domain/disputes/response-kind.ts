// A dispute's answer as a movement (src/movement), shaped like a void: sent to the one connector
// the dispute came from, our answer's id (dpr_…) being the processor's idempotency key; asked
// first where it stands before it is sent again (Stripe's dispute shows its submission or its
// closing; a processor with nothing to ask answers not_found and dedupes the resend by our key).
// Its calls: src/connectors/movements/children.ts.
import type { DisputeResponseRequest, DisputeResponseState } from '../../connectors/types.js';
import { DISPUTE_RESPONSE_CALLS } from '../../connectors/movements/children.js';
import { ApiError } from '../../kernel/errors.js';
import { parentsConnector, type MovementKind } from '../../movement/kind.js';
import { lockDisputeOf, RESPONSE_RULES, type ResponseRow, type ResponseUpdate } from './response-rules.js';
import { disputeView } from './transitions.js';

export const responseKind: MovementKind<ResponseRow, DisputeResponseState, ResponseUpdate, DisputeResponseRequest> = {
  ...DISPUTE_RESPONSE_CALLS,
  object: 'dispute_response',
  prefix: 'dpr',
  createdEvent: null,
  rules: RESPONSE_RULES,
  route: parentsConnector,
  resumeBy: 'sending',
  locatesBeforeSending: true,
  heldAs: "the dispute's answer",
  waitsWhenUnreached: true,
  // The merchant asked about the dispute: the answer is the dispute as its answer left it.
  answer: { status: 200, body: async (tx, row) => disputeView(await lockDisputeOf(tx, row)) },
  // Refused, or certainly never sent (processing_error): a typed 422 kept on the key, the dispute unchanged; a new key may try again.
  refusal: (row) => (row.status === 'failed' ? new ApiError('dispute_response_refused', { message: row.failureMessage ?? undefined }) : undefined),
};
