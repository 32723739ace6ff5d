// Disputes (chargebacks) as processors report them, in our words: each connector maps its own
// reason codes onto DISPUTE_REASONS (one table in its folder) and its dispute events onto a
// DisputeReport. Reports are read to be applied in any order and any number of times
// (src/domain/disputes/report.ts): a status comes with the stage it belongs to, and the funds
// movements are the most the processor has reported so far, never a delta.

/** Why the cardholder disputes the payment, whichever processor reported it. */
export const DISPUTE_REASONS = [
  'fraudulent',
  'unrecognized',
  'duplicate',
  'subscription_canceled',
  'product_not_received',
  'product_unacceptable',
  'credit_not_processed',
  'processing_error',
  'general',
] as const;
export type DisputeReason = (typeof DISPUTE_REASONS)[number];

export const DISPUTE_STATUSES = ['warning_needs_response', 'needs_response', 'under_review', 'won', 'lost', 'accepted'] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

export interface DisputeReport {
  /** The processor's own id of the dispute: one dp_ per id. */
  connectorReference: string;
  /** The payment as the processor knows it besides our id (the event's `reference`): its own reference of the charge. */
  paymentConnectorReference: string | null;
  amount: number;
  currency: string;
  reason: DisputeReason;
  /** The processor's code, kept as sent. */
  processorReason: string | null;
  status: DisputeStatus;
  /**
   * Where the status stands in the processor's sequence of events: a report of an earlier stage
   * than the one applied (a late, re-sent or reordered webhook) changes no status.
   */
  stage: number;
  evidenceDueBy: Date | null;
  /** How many times the processor has taken the funds, and given them back, as far as this report tells. */
  withdrawals: number;
  reinstatements: number;
}

/** A stage above every processor's: set when the merchant accepted the dispute here, which nothing reported later undoes. */
export const ACCEPTED_STAGE = 1000;

/**
 * The merchant's answer to a dispute, sent to its processor (src/domain/disputes/responses): the
 * evidence submitted (Stripe's dispute update with `submit`; Adyen's supplyDefenseDocument then
 * defendDispute), or the dispute accepted (Stripe's close; Adyen's acceptDispute).
 */
export interface DisputeResponseRequest {
  /** Our response id: the processor's idempotency key, so a repeated call answers once. */
  reference: string;
  action: 'submit' | 'accept';
  /** The processor's id of the dispute. */
  disputeReference: string;
  /** The text evidence by field (src/domain/disputes/schema.ts EVIDENCE_FIELDS); empty when accepting. */
  evidence: Record<string, string>;
  /** Adyen's defense reason code; null: the first one Adyen says applies. */
  defenseReason: string | null;
}

/**
 * Where the answer stands at the processor: taken (`succeeded`: submitted or accepted), or refused
 * (the processor would not take it: the deadline passed there, the dispute was decided meanwhile).
 */
export type DisputeResponseState =
  | { kind: 'succeeded'; connectorReference: string }
  | { kind: 'failed'; connectorReference: string | null; failureCode: DisputeResponseFailureCode; message: string };

export const DISPUTE_RESPONSE_FAILURE_CODES = ['dispute_response_refused', 'processing_error'] as const;
export type DisputeResponseFailureCode = (typeof DISPUTE_RESPONSE_FAILURE_CODES)[number];
