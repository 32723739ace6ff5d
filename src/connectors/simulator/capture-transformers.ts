// Pure mapping of the simulated processors' capture and void vocabulary (protocol.ts) onto ours
// (captures.ts), exhaustive like transformers.ts.
import type { CancelAuthorizationRequest, CancelState, CaptureFailureCode, CaptureRequest, CaptureState, InboundEvent } from '../types.js';
import { SIM_CAPTURE_STATES, type SimCapture, type SimCaptureRefusal, type SimCaptureRequest, type SimCaptureState, type SimCharge, type SimChargeState, type SimWebhook } from './protocol.js';
import { answersOf } from './answers.js';
import { isCharge } from './transformers.js';

/** Each refusal of a capture: our failure code and what it means. */
const REFUSALS = {
  CAPTURE_DECLINED: ['capture_declined', 'The issuer declined the capture.'],
  AMOUNT_EXCEEDS_AUTHORISATION: ['amount_above_capturable', 'The amount is more than the authorisation still holds.'],
  NOT_AUTHORISED: ['processing_error', 'The processor holds no authorisation to capture for this payment.'],
  AUTHORISATION_VOIDED: ['authorization_expired', 'The authorisation was voided before the capture.'],
} as const satisfies Record<SimCaptureRefusal, readonly [CaptureFailureCode, string]>;

export function toCaptureRequest(request: CaptureRequest): SimCaptureRequest {
  return { merchant_reference: request.reference, charge_reference: request.paymentReference, amount_minor: request.amount, currency: request.currency, final: request.finalCapture };
}

function isCapture(body: unknown): body is SimCapture {
  const b = body as SimCapture | undefined;
  return (
    typeof b?.capture_id === 'string' &&
    typeof b.merchant_reference === 'string' &&
    (SIM_CAPTURE_STATES as readonly string[]).includes(b.state) &&
    (b.refusal == null || Object.hasOwn(REFUSALS, b.refusal))
  );
}

export function captureStateOf(capture: SimCapture): CaptureState {
  const state: SimCaptureState = capture.state;
  switch (state) {
    case 'CAPTURED':
      return { kind: 'succeeded', connectorReference: capture.capture_id };
    case 'CAPTURE_PENDING':
      return { kind: 'pending', connectorReference: capture.capture_id };
    case 'CAPTURE_REFUSED': {
      const refusal = capture.refusal ?? 'CAPTURE_DECLINED';
      return { kind: 'failed', connectorReference: capture.capture_id, failureCode: REFUSALS[refusal][0], message: REFUSALS[refusal][1] };
    }
    default:
      return state satisfies never;
  }
}

export const { answer: captureAnswer, statusAnswer: captureStatusAnswer } = answersOf(isCapture, captureStateOf);

/** A webhook reporting a capture confirmed later (the pending-capture card), as our inbound event; undefined for any other. */
export function captureEventOf(webhook: unknown): InboundEvent | undefined {
  const w = webhook as SimWebhook | undefined;
  if (typeof w?.event_id !== 'string' || w.event_id.length === 0 || w.event_id.length > 200) return undefined;
  if (w.event_type !== 'capture.state_changed' || !isCapture(w.capture)) return undefined;
  return { eventId: w.event_id, object: 'capture', reference: w.capture.merchant_reference, paymentConnectorReference: null, state: captureStateOf(w.capture) };
}

/** The void's answer is the charge as it then stands. */
export function cancelStateOf(charge: SimCharge): CancelState {
  const state: SimChargeState = charge.state;
  const failed = (failureCode: 'authorization_captured' | 'processing_error', message: string): CancelState => ({ kind: 'failed', connectorReference: charge.charge_id, failureCode, message });
  switch (state) {
    case 'VOIDED':
      return { kind: 'canceled', connectorReference: charge.charge_id };
    case 'CAPTURED':
      return failed('authorization_captured', 'The charge was captured: it can no longer be voided.');
    case 'AUTHORISED':
      // Still authorised after a void: some of it was captured already.
      return failed('authorization_captured', 'Part of the authorisation was captured: it can no longer be voided.');
    case 'PENDING':
    case 'AWAITING_AUTHENTICATION':
    case 'REFUSED':
      return failed('processing_error', `The processor holds no authorisation to void (${state}).`);
    default:
      return state satisfies never;
  }
}

export const { answer: cancelAnswer } = answersOf(isCharge, cancelStateOf);

export const cancelPath = (request: CancelAuthorizationRequest) => ['charges', request.paymentReference, 'void'];
