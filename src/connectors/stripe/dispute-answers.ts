// The merchant's answer to a Stripe dispute: its text evidence sent with `submit: true` in one
// dispute update (https://docs.stripe.com/api/disputes/update), or the dispute closed (accepted:
// https://docs.stripe.com/api/disputes/close), our answer's id as the Idempotency-Key. Stripe's
// dispute says afterwards whether an answer reached it: evidence submitted (submission_count), or
// closed by the merchant (lost). A refusal (the dispute decided, or past its deadline at Stripe)
// is Stripe's invalid-request error, which names why.
import Stripe from 'stripe';
import type { ConnectorError, DisputeResponseRequest, DisputeResponseState } from '../types.js';

/** The connector's one way of calling Stripe (connector.ts): its deadline, its refusals, its errors. */
type Ask = <A, R, E = never>(signal: AbortSignal, call: () => Promise<A>, read: (answer: A) => R, refused?: (err: unknown) => R | E | undefined) => Promise<R | E | ConnectorError>;

const taken = (dispute: Stripe.Dispute): DisputeResponseState => ({ kind: 'succeeded', connectorReference: dispute.id });

function refusalOf(err: unknown): DisputeResponseState | undefined {
  if (!(err instanceof Stripe.errors.StripeInvalidRequestError) || err.code === 'resource_missing') return undefined;
  return { kind: 'failed', connectorReference: null, failureCode: 'dispute_response_refused', message: `Stripe refused the answer: ${err.message}` };
}

/** Whether the dispute shows this answer: evidence submitted, or closed by the merchant (Stripe marks it lost). */
function shows(dispute: Stripe.Dispute, action: DisputeResponseRequest['action']): boolean {
  return action === 'submit' ? (dispute.evidence_details?.submission_count ?? 0) > 0 : dispute.status === 'lost';
}

export function stripeDisputeAnswers(stripe: Stripe, ask: Ask) {
  return {
    respondToDispute: (request: DisputeResponseRequest, signal: AbortSignal) =>
      ask(
        signal,
        () =>
          request.action === 'submit'
            ? stripe.disputes.update(request.disputeReference, { evidence: request.evidence, submit: true }, { idempotencyKey: request.reference })
            : stripe.disputes.close(request.disputeReference, {}, { idempotencyKey: request.reference }),
        taken,
        refusalOf,
      ),
    // Not shown yet: sent again under the same key, which Stripe answers once.
    disputeResponseStatus: (request: DisputeResponseRequest, signal: AbortSignal) =>
      ask(signal, () => stripe.disputes.retrieve(request.disputeReference), (dispute): DisputeResponseState | { kind: 'not_found' } =>
        shows(dispute, request.action) ? taken(dispute) : { kind: 'not_found' },
      ),
  };
}
