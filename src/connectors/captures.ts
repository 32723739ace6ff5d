// Authorise now, capture later, in the connector interface's words (types.ts re-exports all of it;
// it lives apart only to keep types.ts readable). Under `captureMethod: 'manual'` a charge stops at
// `authorized`: the processor holds the money on the card until we capture it (once, or in parts
// where the processor allows it: catalogue capability `multiple_captures`) or void it. Each capture
// is our own object (cap_…), sent under its id as the processor's idempotency key, like a refund.

import type { CancelFailureCode, CaptureFailureCode } from './failure-codes.js';

export const CAPTURE_METHODS = ['automatic', 'manual'] as const;
export type CaptureMethod = (typeof CAPTURE_METHODS)[number];

export interface CaptureRequest {
  /** Our capture id (cap_…): the processor's idempotency key, so a repeated call never captures twice. */
  reference: string;
  /** Our payment id, as the processor knows the authorisation. */
  paymentReference: string;
  /** The processor's own id of the authorisation (Stripe's PaymentIntent, Adyen's pspReference), once known. */
  connectorPaymentReference: string | null;
  amount: number;
  currency: string;
  /** The last capture of this authorisation: the processor releases whatever it still holds. */
  finalCapture: boolean;
}

/** Locating a capture after a lost answer or a crash (captureStatus). */
export interface CaptureStatusRequest {
  reference: string;
  connectorReference: string | null;
  paymentReference: string;
  connectorPaymentReference: string | null;
}

/** Why an authorisation is voided (the payment's cancellation_reason); `expired`: it lapsed at capture_before. */
export const CANCELLATION_REASONS = ['requested_by_customer', 'duplicate', 'fraudulent', 'abandoned', 'expired'] as const;
export type CancellationReason = (typeof CANCELLATION_REASONS)[number];

/** Voiding an authorisation: the processor releases the money it holds for `paymentReference`. */
export interface CancelAuthorizationRequest {
  /** Our void's id: the processor's idempotency key (and Adyen's reference, which its CANCELLATION notification names). */
  reference: string;
  paymentReference: string;
  connectorPaymentReference: string | null;
  amount: number;
  currency: string;
  /** Why: a processor that records a reason (Stripe's cancellation_reason) is told it. */
  reason: CancellationReason;
}

/**
 * Where a capture stands. `pending`: taken, its outcome comes later (Adyen answers `received` and
 * reports by a CAPTURE or CAPTURE_FAILED notification).
 */
export type CaptureState =
  | { kind: 'succeeded' | 'pending'; connectorReference: string }
  | { kind: 'failed'; connectorReference: string | null; failureCode: CaptureFailureCode; message: string };

/** Where a void stands. `pending`: taken, its outcome comes later (Adyen's CANCELLATION notification). */
export type CancelState =
  | { kind: 'canceled' | 'pending'; connectorReference: string }
  | { kind: 'failed'; connectorReference: string | null; failureCode: CancelFailureCode; message: string };


/** The window a processor documents for capturing an authorisation, when it does not say per payment. */
export const DEFAULT_CAPTURE_WINDOW_MS = 7 * 24 * 3600 * 1000;
