// Stripe's words in ours for captures and voids of a PaymentIntent made with capture_method manual:
// POST /v1/payment_intents/{id}/capture (amount_to_capture) and /cancel. A PaymentIntent is
// captured once here (Stripe releases what a partial capture leaves), so the capture's state is
// the PaymentIntent's: succeeded once captured, its id as the capture's reference.
import Stripe from 'stripe';
import type { CancellationReason, CancelState, CaptureState } from '../types.js';

type Intent = Pick<Stripe.PaymentIntent, 'id' | 'status' | 'latest_charge'>;

export function captureStateOf(intent: Intent): CaptureState {
  const connectorReference = typeof intent.latest_charge === 'string' ? intent.latest_charge : (intent.latest_charge?.id ?? intent.id);
  switch (intent.status) {
    case 'succeeded':
      return { kind: 'succeeded', connectorReference };
    case 'processing':
      return { kind: 'pending', connectorReference };
    case 'canceled':
      return { kind: 'failed', connectorReference: null, failureCode: 'authorization_expired', message: 'The PaymentIntent was canceled at Stripe before the capture.' };
    default:
      return { kind: 'failed', connectorReference: null, failureCode: 'processing_error', message: `Stripe left the PaymentIntent ${intent.status} after the capture.` };
  }
}

/** What a status question learns of a capture: captured, or not made (requires_capture: nothing was taken). */
export function capturedStateOf(intent: Intent): CaptureState | { kind: 'not_found' } {
  return intent.status === 'requires_capture' ? { kind: 'not_found' } : captureStateOf(intent);
}

/** Capture errors Stripe answers before acting that are refusals of the capture itself. */
export function captureRefusalOf(err: unknown): CaptureState | undefined {
  if (err instanceof Stripe.errors.StripeCardError) return { kind: 'failed', connectorReference: null, failureCode: 'capture_declined', message: `Stripe declined the capture: ${err.message}` };
  if (!(err instanceof Stripe.errors.StripeInvalidRequestError)) return undefined;
  if (err.code === 'amount_too_large') return { kind: 'failed', connectorReference: null, failureCode: 'amount_above_capturable', message: 'Stripe says the amount is above what the PaymentIntent holds.' };
  if (err.code === 'payment_intent_unexpected_state') return { kind: 'failed', connectorReference: null, failureCode: 'authorization_expired', message: `Stripe cannot capture the PaymentIntent: ${err.message}` };
  return undefined;
}

/**
 * Our cancellation_reason in Stripe's words (PaymentIntent cancel takes duplicate, fraudulent,
 * requested_by_customer or abandoned): an authorisation left to lapse was abandoned by the merchant.
 */
export const STRIPE_CANCELLATION_REASON = {
  requested_by_customer: 'requested_by_customer',
  duplicate: 'duplicate',
  fraudulent: 'fraudulent',
  abandoned: 'abandoned',
  expired: 'abandoned',
} as const satisfies Record<CancellationReason, Stripe.PaymentIntentCancelParams.CancellationReason>;

export function cancelStateOf(intent: Intent): CancelState {
  return intent.status === 'canceled'
    ? { kind: 'canceled', connectorReference: intent.id }
    : { kind: 'failed', connectorReference: intent.id, failureCode: 'processing_error', message: `Stripe left the PaymentIntent ${intent.status} after the cancel.` };
}

/** A PaymentIntent already captured cannot be cancelled: Stripe says so before acting. */
export function cancelRefusalOf(err: unknown): CancelState | undefined {
  if (err instanceof Stripe.errors.StripeInvalidRequestError && err.code === 'payment_intent_unexpected_state') {
    return { kind: 'failed', connectorReference: null, failureCode: 'authorization_captured', message: `Stripe cannot cancel the PaymentIntent: ${err.message}` };
  }
  return undefined;
}
