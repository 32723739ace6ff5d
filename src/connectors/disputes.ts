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
