// Pure mapping of the simulated processors' disputes (protocol.ts) onto ours (../disputes.ts):
// every reason and state, exhaustive like transformers.ts.
import type { DisputeReason, DisputeReport, DisputeResponseRequest, DisputeResponseState, DisputeStatus } from '../disputes.js';
import type { ConnectorError } from '../types.js';
import { answersOf } from './answers.js';
import { SIM_DISPUTE_REASONS, SIM_DISPUTE_STATES, type SimDispute, type SimDisputeAnswerRequest, type SimDisputeReason, type SimDisputeState } from './protocol.js';

const REASONS = {
  FRAUD: 'fraudulent',
  NOT_RECEIVED: 'product_not_received',
  NOT_AS_DESCRIBED: 'product_unacceptable',
  DUPLICATE: 'duplicate',
  CANCELLED_RECURRING: 'subscription_canceled',
  CREDIT_NOT_PROCESSED: 'credit_not_processed',
  UNRECOGNISED: 'unrecognized',
  OTHER: 'general',
} as const satisfies Record<SimDisputeReason, DisputeReason>;

/** Each state, ours and its stage; OPENING is never reported (the dispute is not open yet). */
const STATES = {
  OPENING: ['needs_response', 0],
  NEEDS_RESPONSE: ['needs_response', 1],
  UNDER_REVIEW: ['under_review', 2],
  WON: ['won', 3],
  LOST: ['lost', 3],
  ACCEPTED: ['accepted', 3],
} as const satisfies Record<SimDisputeState, readonly [DisputeStatus, number]>;

export function isDispute(body: unknown): body is SimDispute {
  const b = body as SimDispute | undefined;
  return (
    typeof b?.dispute_id === 'string' &&
    typeof b.merchant_reference === 'string' &&
    Number.isSafeInteger(b.amount_minor) &&
    typeof b.currency === 'string' &&
    (SIM_DISPUTE_STATES as readonly string[]).includes(b.state) &&
    (SIM_DISPUTE_REASONS as readonly string[]).includes(b.reason) &&
    typeof b.funds_withdrawn === 'boolean' &&
    typeof b.funds_reinstated === 'boolean' &&
    !Number.isNaN(Date.parse(b.evidence_due_at))
  );
}

export function disputeReportOf(dispute: SimDispute): DisputeReport {
  const [status, stage] = STATES[dispute.state];
  return {
    connectorReference: dispute.dispute_id,
    paymentConnectorReference: dispute.charge_id,
    amount: dispute.amount_minor,
    currency: dispute.currency,
    reason: REASONS[dispute.reason],
    processorReason: dispute.reason,
    status,
    stage,
    evidenceDueBy: new Date(dispute.evidence_due_at),
    // The processor's object says where its funds stand: taken, and maybe given back.
    withdrawals: dispute.funds_withdrawn || dispute.funds_reinstated ? 1 : 0,
    reinstatements: dispute.funds_reinstated ? 1 : 0,
  };
}

/** The processor's dispute read for our answer `reference`: taken when it is the dispute's answer, refused when it took none or another. */
function answerStateOf(reference: string, dispute: SimDispute): DisputeResponseState {
  if (dispute.answered_by === reference) return { kind: 'succeeded', connectorReference: dispute.dispute_id };
  const why = dispute.answered_by ? 'it was answered already' : `it is ${dispute.state}, no longer waiting for an answer`;
  return { kind: 'failed', connectorReference: null, failureCode: 'dispute_response_refused', message: `The processor refused the answer: ${why}.` };
}

export const disputeAnswerPath = (request: DisputeResponseRequest) => ['disputes', request.disputeReference, request.action];

export const toDisputeAnswer = (request: DisputeResponseRequest): SimDisputeAnswerRequest =>
  request.action === 'submit' ? { merchant_reference: request.reference, evidence: request.evidence } : { merchant_reference: request.reference };

export const disputeAnswerOf = (request: DisputeResponseRequest) => answersOf(isDispute, (dispute: SimDispute) => answerStateOf(request.reference, dispute)).answer;

/** Where our answer stands: found on the dispute, or not there (sent again under the same reference). */
export const disputeAnswerStatusOf =
  (request: DisputeResponseRequest) =>
  (status: number, body: unknown): DisputeResponseState | { kind: 'not_found' } | ConnectorError => {
    const found = answersOf(isDispute, (dispute: SimDispute) => ({ kind: 'found' as const, dispute })).statusAnswer(status, body);
    if (found.kind !== 'found') return found;
    return found.dispute.answered_by === request.reference ? answerStateOf(request.reference, found.dispute) : { kind: 'not_found' };
  };
