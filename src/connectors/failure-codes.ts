// Every failure a connector may report of a movement, in our words, per kind of movement: the
// codes the API shows in `failure_code`. Apart from types.ts (which re-exports them) only to keep
// that file readable.

export const PAYMENT_FAILURE_CODES = [
  'card_declined',
  'insufficient_funds',
  'expired_card',
  'incorrect_cvc',
  /** The processor needs the customer (3-D Secure) but the payment has no return_url. */
  'authentication_required',
  /** The customer failed or abandoned the challenge. */
  'authentication_failed',
  /** Direct debit: the customer's bank refused the debit (insufficient funds, account closed, disputed). */
  'debit_declined',
  /** Direct debit: the processor no longer holds the mandate as active (revoked, expired, cancelled). */
  'mandate_invalid',
  /** Direct debit: the payer disputed a debit that had succeeded, and their bank took the money back. */
  'charged_back',
  /** No connector could take the payment (errors, open circuits) or a processor refused the request itself. */
  'processing_error',
  /** A reattempt of a declined card past the card networks' limits (docs/declines.md): nobody was called. */
  'retry_limit_reached',
] as const;
export type PaymentFailureCode = (typeof PAYMENT_FAILURE_CODES)[number];

export const REFUND_FAILURE_CODES = ['charge_not_refundable', 'amount_above_refundable', 'processing_error'] as const;
export type RefundFailureCode = (typeof REFUND_FAILURE_CODES)[number];

export const MANDATE_FAILURE_CODES = [
  /** The customer's bank reports the account closed or unable to take direct debits. */
  'account_closed',
  /** The customer's bank refused the mandate. */
  'mandate_declined',
  /** No connector could set the mandate up (errors, open circuits), or the request ended before one took it. */
  'processing_error',
] as const;
export type MandateFailureCode = (typeof MANDATE_FAILURE_CODES)[number];

export const PAYOUT_FAILURE_CODES = [
  /** The beneficiary's bank reports the account closed. */
  'account_closed',
  /** The bank refused the payout for another reason. */
  'payout_declined',
  /** No connector could take the payout (errors, open circuits), or a processor refused the request itself. */
  'processing_error',
] as const;
export type PayoutFailureCode = (typeof PAYOUT_FAILURE_CODES)[number];

export const CAPTURE_FAILURE_CODES = [
  /** The issuer or the processor refused to take the money held. */
  'capture_declined',
  /** More than the authorisation still holds (what earlier captures left, or nothing after a final one). */
  'amount_above_capturable',
  /** The authorisation lapsed or was voided before the capture reached it. */
  'authorization_expired',
  'processing_error',
] as const;
export type CaptureFailureCode = (typeof CAPTURE_FAILURE_CODES)[number];

export const CANCEL_FAILURE_CODES = [
  /** Money was captured already: the authorisation can no longer be voided (refund it instead). */
  'authorization_captured',
  'processing_error',
] as const;
export type CancelFailureCode = (typeof CANCEL_FAILURE_CODES)[number];
