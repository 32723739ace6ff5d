// Pure mapping between the simulated processors' vocabulary (protocol.ts) and ours (types.ts).
// Every processor word is mapped exhaustively: a new processor state or code fails to compile
// here until it is given a meaning.
import { disputeReportOf, isDispute } from './dispute-transformers.js';
import {
  DEFAULT_CAPTURE_WINDOW_MS,
  type CardVerificationRequest,
  type ChargeRequest,
  type ChargeState,
  type InboundEvent,
  type MandateFailureCode,
  type MandateScheme,
  type MandateSetupRequest,
  type MandateState,
  type PaymentFailureCode,
  type RefundFailureCode,
  type RefundRequest,
  type RefundState,
} from '../types.js';
import {
  SIM_CHARGE_STATES,
  SIM_REFUND_STATES,
  type SimCharge,
  type SimChargeRequest,
  type SimChargeState,
  type SimRefund,
  type SimRefundRefusal,
  type SimRefundRequest,
  type SimRefundState,
  type SimRefusal,
  type SimWebhook,
  SIM_MANDATE_STATES,
  type SimMandate,
  type SimMandateRejection,
  type SimMandateRequest,
  type SimMandateState,
  type SimScheme,
} from './protocol.js';
import { isPayout, payoutStateOf } from './payout-transformers.js';
import { answersOf } from './answers.js';
import { DECLINE_OF_REFUSAL } from './declines.js';

const MESSAGE_OF_FAILURE = {
  card_declined: 'The card was declined.',
  insufficient_funds: 'The card has insufficient funds.',
  expired_card: 'The card has expired.',
  incorrect_cvc: 'The card security code is incorrect.',
  authentication_required: 'The card issuer requires 3-D Secure, and the payment has no return_url.',
  authentication_failed: 'The customer did not complete 3-D Secure.',
  processing_error: 'The processor could not process the payment.',
  debit_declined: "The customer's bank returned the direct debit.",
  mandate_invalid: 'The processor does not hold the mandate as active.',
  charged_back: 'The payer disputed the debit and their bank took the money back.',
  retry_limit_reached: "A reattempt past the card networks' limits; nothing was sent.",
} as const satisfies Record<PaymentFailureCode, string>;

/** Refusals that share a failure code but tell the integrator something else (the soft decline's card, docs/test-mode.md). */
const MESSAGE_OF_REFUSAL: Partial<Record<SimRefusal, string>> = {
  AUTHENTICATION_NOT_REQUESTED: 'The card issuer requires 3-D Secure, which the payment did not request.',
};

const FAILURE_OF_REFUND_REFUSAL = {
  CHARGE_NOT_CAPTURED: 'charge_not_refundable',
  AMOUNT_EXCEEDS_CHARGE: 'amount_above_refundable',
} as const satisfies Record<SimRefundRefusal, RefundFailureCode>;

/** A verification as the simulator takes it: a zero-amount charge of the card, flagged. */
export function toVerificationRequest(request: CardVerificationRequest): SimChargeRequest {
  return { ...toChargeRequest({ reference: request.reference, amount: 0, currency: request.currency, card: request.card, returnUrl: request.returnUrl }), verification: true };
}

export function toChargeRequest(request: ChargeRequest): SimChargeRequest {
  return {
    merchant_reference: request.reference,
    amount_minor: request.amount,
    currency: request.currency,
    ...(request.mandate
      ? { mandate_id: request.mandate.connectorReference }
      : {
          card: {
            pan: request.card!.number,
            expiry_month: request.card!.expMonth,
            expiry_year: request.card!.expYear,
            security_code: request.card!.cvc,
          },
        }),
    ...(request.returnUrl === undefined ? {} : { return_url: request.returnUrl }),
    ...(request.captureMethod === 'manual' ? { capture: 'MANUAL' as const } : {}),
    ...(request.threeDSecure ? { three_d_secure: 'REQUESTED' as const } : {}),
  };
}

export function toRefundRequest(request: RefundRequest): SimRefundRequest {
  return { merchant_reference: request.reference, charge_reference: request.paymentReference, amount_minor: request.amount };
}

// Signed payloads are still checked field by field: a well-signed but malformed one (a numeric
// reference, an unknown refusal) must be refused, not crash the handler or store `undefined`.
export function isCharge(body: unknown): body is SimCharge {
  const b = body as SimCharge | undefined;
  return (
    typeof b?.charge_id === 'string' &&
    typeof b.merchant_reference === 'string' &&
    (SIM_CHARGE_STATES as readonly string[]).includes(b.state) &&
    (b.refusal == null || Object.hasOwn(DECLINE_OF_REFUSAL, b.refusal))
  );
}

function isRefund(body: unknown): body is SimRefund {
  const b = body as SimRefund | undefined;
  return (
    typeof b?.refund_id === 'string' &&
    typeof b.merchant_reference === 'string' &&
    (SIM_REFUND_STATES as readonly string[]).includes(b.state) &&
    (b.refusal == null || Object.hasOwn(FAILURE_OF_REFUND_REFUSAL, b.refusal))
  );
}

/** Where the cardholder answers a charge's 3-D Secure challenge: a page the service serves for this sandbox. */
export type ChallengePages = (charge: SimCharge & { challenge_id: string }) => string;

/** The card's issuing country, where the charge names one (a test card's). */
const issued = (charge: SimCharge) => (typeof charge.issuer_country === 'string' ? { issuingCountry: charge.issuer_country } : {});

export function chargeStateOf(charge: SimCharge, pages: ChallengePages): ChargeState {
  const state: SimChargeState = charge.state;
  switch (state) {
    case 'CAPTURED':
      return charge.network_transaction_id === undefined
        ? { kind: 'succeeded', connectorReference: charge.charge_id, ...issued(charge) }
        : { kind: 'succeeded', connectorReference: charge.charge_id, networkTransactionId: charge.network_transaction_id, ...issued(charge) };
    case 'PENDING':
      return { kind: 'pending', connectorReference: charge.charge_id };
    case 'AWAITING_AUTHENTICATION':
      // A challenge without its id cannot be answered: still pending, as far as we can tell.
      if (typeof charge.challenge_id !== 'string') return { kind: 'pending', connectorReference: charge.charge_id };
      return { kind: 'requires_action', connectorReference: charge.charge_id, action: { method: 'GET', url: pages({ ...charge, challenge_id: charge.challenge_id }) } };
    case 'AUTHORISED':
      return { kind: 'authorized', connectorReference: charge.charge_id, captureBefore: new Date(Date.parse(charge.created_at) + DEFAULT_CAPTURE_WINDOW_MS), ...issued(charge) };
    case 'VOIDED':
      // Released at our request: nothing was taken; the void's own answer said so first.
      return { kind: 'declined', connectorReference: charge.charge_id, failureCode: 'processing_error', declineType: 'processor', message: 'The authorisation was voided at the processor.' };
    case 'REFUSED': {
      const refusal = charge.refusal ?? 'DO_NOT_HONOUR';
      const why = DECLINE_OF_REFUSAL[refusal];
      return { kind: 'declined', connectorReference: charge.charge_id, ...why, ...issued(charge), message: MESSAGE_OF_REFUSAL[refusal] ?? MESSAGE_OF_FAILURE[why.failureCode] };
    }
    default:
      return state satisfies never;
  }
}

export function refundStateOf(refund: SimRefund): RefundState {
  const state: SimRefundState = refund.state;
  switch (state) {
    case 'REFUNDED':
      return { kind: 'succeeded', connectorReference: refund.refund_id };
    case 'REFUND_PENDING':
      return { kind: 'pending', connectorReference: refund.refund_id };
    case 'REFUND_REFUSED': {
      const failureCode = FAILURE_OF_REFUND_REFUSAL[refund.refusal ?? 'CHARGE_NOT_CAPTURED'];
      return { kind: 'failed', connectorReference: refund.refund_id, failureCode, message: `The processor refused the refund (${failureCode}).` };
    }
    default:
      return state satisfies never;
  }
}

export const chargeAnswers = (pages: ChallengePages) => answersOf(isCharge, (charge: SimCharge) => chargeStateOf(charge, pages));
export const { answer: refundAnswer, statusAnswer: refundStatusAnswer } = answersOf(isRefund, refundStateOf);

// ---- mandates ----

const SCHEME_OF = { sepa_core: 'SEPA_CORE', bacs: 'BACS', ach: 'ACH' } as const satisfies Record<MandateScheme, SimScheme>;

const FAILURE_OF_REJECTION = {
  ACCOUNT_CLOSED: 'account_closed',
  REFUSED_BY_BANK: 'mandate_declined',
} as const satisfies Record<SimMandateRejection, MandateFailureCode>;

const MESSAGE_OF_MANDATE_FAILURE = {
  account_closed: "The customer's bank reports the account closed.",
  mandate_declined: "The customer's bank refused the mandate.",
  processing_error: 'The processor could not register the mandate.',
} as const satisfies Record<MandateFailureCode, string>;

export function toMandateRequest(request: MandateSetupRequest): SimMandateRequest {
  const a = request.account;
  return {
    merchant_reference: request.reference,
    scheme: SCHEME_OF[request.scheme],
    currency: request.currency,
    account: { country: a.country, number: a.secret, bank_code: a.sortCode ?? a.routingNumber ?? a.bic },
    payer: { email: request.customer.email, name: request.customer.name },
  };
}

function isMandate(body: unknown): body is SimMandate {
  const b = body as SimMandate | undefined;
  return typeof b?.mandate_id === 'string' && typeof b.merchant_reference === 'string' && (SIM_MANDATE_STATES as readonly string[]).includes(b.state);
}

export function mandateStateOf(mandate: SimMandate): MandateState {
  const state: SimMandateState = mandate.state;
  switch (state) {
    case 'ACTIVE':
      return { kind: 'active', connectorReference: mandate.mandate_id };
    case 'SUBMITTED':
      return { kind: 'pending', connectorReference: mandate.mandate_id };
    case 'REJECTED': {
      const failureCode = FAILURE_OF_REJECTION[mandate.rejection ?? 'REFUSED_BY_BANK'];
      return { kind: 'failed', connectorReference: mandate.mandate_id, failureCode, message: MESSAGE_OF_MANDATE_FAILURE[failureCode] };
    }
    case 'REVOKED_BY_PAYER':
      return { kind: 'revoked', connectorReference: mandate.mandate_id, by: 'bank' };
    case 'CANCELLED':
      return { kind: 'revoked', connectorReference: mandate.mandate_id, by: 'merchant' };
    default:
      return state satisfies never;
  }
}

export const { answer: mandateAnswer, statusAnswer: mandateStatusAnswer } = answersOf(isMandate, mandateStateOf);

/** Undefined when the payload is not one of the processor's event shapes. */
export function inboundEventOf(webhook: unknown, pages: ChallengePages): InboundEvent | undefined {
  const w = webhook as SimWebhook | undefined;
  if (typeof w?.event_id !== 'string' || w.event_id.length === 0 || w.event_id.length > 200) return undefined;
  if (w.event_type === 'charge.state_changed' && isCharge(w.charge)) {
    return { eventId: w.event_id, object: 'payment', reference: w.charge.merchant_reference, state: chargeStateOf(w.charge, pages) };
  }
  if (w.event_type === 'refund.state_changed' && isRefund(w.refund)) {
    return { eventId: w.event_id, object: 'refund', reference: w.refund.merchant_reference, state: refundStateOf(w.refund) };
  }
  if (w.event_type === 'mandate.state_changed' && isMandate(w.mandate)) {
    return { eventId: w.event_id, object: 'mandate', reference: w.mandate.merchant_reference, state: mandateStateOf(w.mandate) };
  }
  if (w.event_type === 'dispute.state_changed' && isDispute(w.dispute)) {
    return { eventId: w.event_id, object: 'dispute', reference: w.dispute.merchant_reference, state: disputeReportOf(w.dispute) };
  }
  if (w.event_type === 'payout.state_changed' && isPayout(w.payout)) {
    return { eventId: w.event_id, object: 'payout', reference: w.payout.merchant_reference, state: payoutStateOf(w.payout) };
  }
  return undefined;
}
