// Adyen's words in ours: resultCodes and refusal reasons of /payments and /payments/details, the
// HTTP answers of its Checkout API as the core classifies calls, and standard webhook notification
// items. A retryable error only where Adyen certainly did nothing (429, or a refusal of the request
// itself, which is no charge); a 5xx is unknown — Adyen may have acted — and is verified, never
// re-sent to another processor.
import type { PaymentDetailsResponse, PaymentResponse } from '@adyen/api-library/lib/src/typings/checkout/models.js';
import type { NotificationRequestItem } from '@adyen/api-library/lib/src/typings/notification/models.js';
import type { HttpAnswer } from '../http.js';
import { verificationOf } from '../verifications.js';
import { adyenDeclineOf } from './declines.js';
import { decline, type Decline } from '../declines.js';
import { connectorError, type CancelState, type CaptureState, type ChargeState, type ConnectorError, type CustomerAction, type RefundState, type VerificationState } from '../types.js';

type ResultCode = `${PaymentResponse.ResultCodeEnum}`;
/** What /payments and /payments/details answer, as this connector reads it. */
export type PaymentAnswer = Pick<PaymentResponse | PaymentDetailsResponse, 'pspReference' | 'refusalReason' | 'refusalReasonCode' | 'merchantReference'> & {
  resultCode?: ResultCode;
  /** With the networkTxReference additional data enabled for the account: the card scheme's transaction id. */
  additionalData?: Record<string, string> | null;
  action?: { type?: string; url?: string; method?: string; data?: Record<string, string> } | null;
};

/** The page Adyen sends the customer to, when its action is one the service can present (a redirect). */
function customerActionOf(action: PaymentAnswer['action']): CustomerAction | undefined {
  if (!action?.url) return undefined;
  const method = action.method?.toUpperCase() === 'POST' ? 'POST' : 'GET';
  return { url: action.url, method, ...(method === 'POST' && action.data ? { data: action.data } : {}) };
}

/**
 * Where a payment stands after /payments or /payments/details. `Error` is Adyen's own failure to
 * process it (final, nothing charged); `Received` and `Pending` wait for the AUTHORISATION webhook.
 */
export function chargeStateOf(answer: PaymentAnswer, reference: string | null = answer.pspReference ?? null, manual = false): ChargeState {
  const connectorReference = reference ?? '';
  // The card's issuing country, from Adyen's BIN list (issuerCountry) or the card's (cardIssuingCountry), where the account returns them.
  const country = answer.additionalData?.issuerCountry ?? answer.additionalData?.cardIssuingCountry;
  const issued = country ? { issuingCountry: country } : {};
  const declined = (why: Decline, message: string): ChargeState => ({ kind: 'declined', connectorReference: reference, ...why, ...issued, message });
  const code = answer.resultCode;
  switch (code) {
    case 'Authorised': {
      // Under manualCapture Adyen holds the money until /captures (or /cancels).
      if (manual) return { kind: 'authorized', connectorReference, ...issued };
      const networkTransactionId = answer.additionalData?.networkTxReference;
      return { kind: 'succeeded', connectorReference, ...(networkTransactionId ? { networkTransactionId } : {}), ...issued };
    }
    case 'Refused':
      return declined(adyenDeclineOf(answer), `Adyen refused the payment${answer.refusalReason ? `: ${answer.refusalReason}` : ''}.`);
    case 'Cancelled':
      return declined(answer.refusalReasonCode === '16' ? adyenDeclineOf(answer) : decline('processing_error', 'processor'), 'The payment was cancelled at Adyen before it completed.');
    case 'Error':
      return declined(decline('processing_error', 'processor'), `Adyen could not process the payment${answer.refusalReason ? `: ${answer.refusalReason}` : ''}.`);
    case 'RedirectShopper':
    case 'IdentifyShopper':
    case 'ChallengeShopper': {
      const action = customerActionOf(answer.action);
      // A native 3-D Secure 2 action (no page to send the customer to) needs Adyen's own browser
      // component, which the service does not serve; it asks for redirects (nativeThreeDS disabled).
      if (!action) return declined(decline('authentication_required', 'authentication_required'), `Adyen asked for the customer (${code}) without a page to redirect them to.`);
      return { kind: 'requires_action', connectorReference, action };
    }
    default:
      // Received, Pending, PresentToShopper, PartiallyAuthorised (not requested), or a code of a
      // later version: not final while money could still move; the webhook settles it.
      return { kind: 'pending', connectorReference };
  }
}

/** Adyen's error body (ServiceError), as much as a message needs. */
function errorOf(body: unknown): string {
  const e = (body ?? {}) as { errorCode?: string; message?: string };
  return [e.errorCode, e.message].filter(Boolean).join(' ') || 'no details';
}

/** An answer other than success, as the core classifies it. */
export function callErrorOf(answer: HttpAnswer): ConnectorError {
  const { status } = answer;
  // Too many requests: Adyen did nothing and says so.
  if (status === 429) return connectorError('processor_error', 'Adyen answered 429 (rate limited); nothing was done');
  // Refused as such before acting: a bad key, a missing role, a request Adyen would not take.
  if (status >= 400 && status < 500) return connectorError('request_rejected', `Adyen refused the request (${status}): ${errorOf(answer.body)}`);
  return connectorError('invalid_response', `Adyen answered ${status} without saying whether it acted: ${errorOf(answer.body)}`);
}

/** A capture Adyen took (`received`): its outcome comes by the CAPTURE or CAPTURE_FAILED webhook. */
export function captureTaken(body: { pspReference?: string }): CaptureState {
  if (!body.pspReference) throw new Error('Adyen took the capture without a pspReference');
  return { kind: 'pending', connectorReference: body.pspReference };
}

/** A cancel Adyen took (`received`): its outcome comes by the CANCELLATION webhook. */
export function cancelTaken(body: { pspReference?: string }): CancelState {
  if (!body.pspReference) throw new Error('Adyen took the cancel without a pspReference');
  return { kind: 'pending', connectorReference: body.pspReference };
}

/** A refund Adyen took (`received`): its outcome comes by the REFUND webhook. */
export function refundTaken(body: { pspReference?: string; status?: string }): RefundState {
  if (!body.pspReference) throw new Error('Adyen took the refund without a pspReference');
  return { kind: 'pending', connectorReference: body.pspReference };
}

// ---- standard webhooks ----

/** A notification item in our words: the object it settles (by our id, its merchantReference) and how. */
export type NotificationReading =
  | { object: 'payment'; reference: string; state: ChargeState }
  | { object: 'payment_method'; reference: string; state: VerificationState }
  | { object: 'refund'; reference: string; state: RefundState }
  | { object: 'capture'; reference: string; paymentConnectorReference: string | null; state: CaptureState }
  | { object: 'void'; reference: string; state: CancelState }
  | undefined;

/** The metadata key a manual payment carries, which Adyen echoes in its AUTHORISATION notification. */
export const CAPTURE_METHOD_KEY = 'captureMethod';

/**
 * A manual payment's AUTHORISATION, by the metadata it carries: Adyen's webhook document describes
 * the keys as prefixed (`metadata.captureMethod`) and models them as one `metadata` object; either is read.
 */
function isManual(item: NotificationRequestItem): boolean {
  const data = (item.additionalData ?? {}) as Record<string, unknown>;
  const nested = data.metadata as Record<string, unknown> | undefined;
  return (data[`metadata.${CAPTURE_METHOD_KEY}`] ?? nested?.[CAPTURE_METHOD_KEY]) === 'manual';
}

/**
 * What a verified notification item says about our payments and refunds; undefined for events that
 * change nothing we hold (reports, disputes, …). A CAPTURE of an automatic payment names no
 * capture of ours (its reference is the payment's): the capture kind finds none and applies nothing.
 */
export function readNotification(item: NotificationRequestItem): NotificationReading {
  const success = item.success === 'true';
  const reason = item.reason && item.reason !== 'null' ? `: ${item.reason}` : '';
  switch (`${item.eventCode}`) {
    case 'AUTHORISATION': {
      const state: ChargeState = success
        ? { kind: isManual(item) ? 'authorized' : 'succeeded', connectorReference: item.pspReference }
        : { kind: 'declined', connectorReference: item.pspReference, ...adyenDeclineOf({ refusalReason: item.reason, additionalData: item.additionalData as Record<string, string> | undefined }), message: `Adyen refused the payment${reason}.` };
      // A card verification (a zero-value authorisation) is named by our pm_ id.
      if (item.merchantReference.startsWith('pm_')) return { object: 'payment_method', reference: item.merchantReference, state: verificationOf(state) };
      return { object: 'payment', reference: item.merchantReference, state };
    }
    case 'CANCELLATION':
      // The outcome of /cancels, named by our void id (its reference): the authorisation released, nothing charged.
      return {
        object: 'void',
        reference: item.merchantReference,
        state: success
          ? { kind: 'canceled', connectorReference: item.pspReference }
          : { kind: 'failed', connectorReference: item.pspReference, failureCode: 'processing_error', message: `Adyen could not cancel the authorisation${reason}.` },
      };
    case 'TECHNICAL_CANCEL':
      // The authorisation was cancelled before capture: nothing was charged.
      return success
        ? { object: 'payment', reference: item.merchantReference, state: { kind: 'declined', connectorReference: item.originalReference ?? item.pspReference, failureCode: 'processing_error', declineType: 'processor', message: `The payment was cancelled at Adyen${reason}.` } }
        : undefined;
    case 'CAPTURE':
    case 'CAPTURE_FAILED': {
      // The outcome of /captures, named by our capture id (its reference); CAPTURE_FAILED: the scheme refused it after Adyen took it.
      const captured = success && `${item.eventCode}` === 'CAPTURE';
      const state: CaptureState = captured
        ? { kind: 'succeeded', connectorReference: item.pspReference }
        : { kind: 'failed', connectorReference: item.pspReference, failureCode: 'capture_declined', message: `Adyen could not capture the payment${reason}.` };
      return { object: 'capture', reference: item.merchantReference, paymentConnectorReference: item.originalReference ?? null, state };
    }
    case 'REFUND':
      return {
        object: 'refund',
        reference: item.merchantReference,
        state: success
          ? { kind: 'succeeded', connectorReference: item.pspReference }
          : { kind: 'failed', connectorReference: item.pspReference, failureCode: 'processing_error', message: `Adyen refused the refund${reason}.` },
      };
    case 'REFUND_FAILED':
      // The card scheme sent a refund Adyen had accepted back.
      return { object: 'refund', reference: item.merchantReference, state: { kind: 'failed', connectorReference: item.pspReference, failureCode: 'processing_error', message: `The card scheme rejected the refund${reason}.` } };
    default:
      return undefined;
  }
}
