// The connector interface: what the core needs from a processor, in the service's own vocabulary.
// Each connector lives in its own folder with the processor's request/response mapping; the
// processor's words (its statuses, error codes, signature scheme) never leave that folder. The
// core (router.ts) owns timeouts, fallback, the circuit breaker and attempt records.

import { CONNECTOR_ERROR_CODES, type Answer, type ConnectorError, type ConnectorErrorCode, type Refused, type StatusAnswer, type Taken } from './answers.js';
import type { DeclineType } from '../kernel/decline-types.js';
import type { MandateFailureCode, PaymentFailureCode, PayoutFailureCode, RefundFailureCode } from './failure-codes.js';
import type { SettlementPeriod, SettlementRecord } from './settlements.js';
import type { DisputeReport, DisputeResponseRequest, DisputeResponseState } from './disputes.js';
import type { CancelAuthorizationRequest, CancelState, CaptureMethod, CaptureRequest, CaptureState, CaptureStatusRequest } from './captures.js';

export * from './answers.js';
export * from './captures.js';
export * from './failure-codes.js';
export * from './disputes.js';
export * from './settlements.js';

export const PAYMENT_METHOD_TYPES = ['card', 'mandate'] as const;
export type PaymentMethodType = (typeof PAYMENT_METHOD_TYPES)[number];

/** Card data as received; kept in memory for the call only, never stored or logged. */
export interface CardDetails {
  number: string;
  expMonth: number;
  expYear: number;
  cvc: string;
}

export interface ChargeRequest {
  /** Our payment id (pay_…): the processor's idempotency key, so a repeated call never charges twice. */
  reference: string;
  amount: number;
  currency: string;
  /** `manual`: authorise only; the charge stops at `authorized` until captured or voided (captures.ts). Unset: automatic. */
  captureMethod?: CaptureMethod;
  /** Card payments: the card data. Exactly one of `card` and `mandate` is set. */
  card?: CardDetails;
  /** Direct debits: the mandate as the processor knows it (no account data: the processor holds it). */
  mandate?: MandateDebitDetails;
  /**
   * The service's own return endpoint for this payment (built from PUBLIC_BASE_URL, never the
   * merchant's URL); absent when the payment has no return_url. Without it a connector starts no
   * redirect flow, and answers `declined` with `authentication_required` if the customer is needed.
   */
  returnUrl?: string;
  /**
   * Card payments that save the card (docs/customers.md): the first, customer-initiated payment of
   * a stored-credential series, flagged so (Stripe `setup_future_usage`, Adyen
   * `recurringProcessingModel` with `shopperInteraction: "Ecommerce"`), whose answer names the card
   * scheme's network transaction id (`ChargeState` succeeded).
   */
  storedCredential?: { kind: 'first'; usage: 'on_session' | 'off_session' };
  /**
   * A merchant-initiated payment with a saved card (the customer absent, `card.cvc` empty): the
   * network transaction id of the customer-initiated payment that set the card up, and why the
   * merchant charges it. Connectors send their processor's merchant-initiated flags; no customer
   * action can follow (no returnUrl).
   */
  merchantInitiated?: { networkTransactionId: string | null; reason: 'unscheduled' | 'subscription' };
  /**
   * Ask the issuer for 3-D Secure even where the processor would not: a cascade's retry of an
   * `authentication_required` decline (src/domain/payments/cascade.ts); only with a returnUrl.
   */
  threeDSecure?: 'requested';
}

/** Where the processor needs the customer (3-D Secure, a bank redirect): the page to send them to. */
export interface CustomerAction {
  url: string;
  method: 'GET' | 'POST';
  /** Form fields to post when method is POST (the service serves a page that posts them). */
  data?: Record<string, string>;
}

export interface MandateDebitDetails {
  /** The processor's own id of the mandate. */
  connectorReference: string;
  scheme: MandateScheme;
}

/** A card or debit refused, with what the refusal says about trying again (src/connectors/declines.ts). */
type Declined = Refused<'declined', PaymentFailureCode> & { declineType: DeclineType; merchantAdvice?: string } & Issued;

/** The card's issuing country (ISO 3166-1 alpha-2) where the processor's answer names it (Stripe's card.country, Adyen's issuerCountry). */
export interface Issued {
  issuingCountry?: string;
}

export type ChargeState =
  /** `networkTransactionId`: the card scheme's id of a customer-initiated card payment, when the processor gives it (kept on a saved card for later merchant-initiated payments). */
  | (Taken<'succeeded'> & { networkTransactionId?: string } & Issued)
  | Taken<'pending'>
  | Declined
  /** The processor waits for the customer (3-D Secure, a redirect) at `action`. */
  | { kind: 'requires_action'; connectorReference: string; action: CustomerAction }
  /** Manual capture: the processor holds the money until captured or voided, until `captureBefore` if it says. */
  | ({ kind: 'authorized'; connectorReference: string; captureBefore?: Date } & Issued)
  /**
   * Direct debits: the money came back from the payer's bank — a failure the bank reported, maybe
   * days after the debit was confirmed (a late failure), or a charge-back. It fails the payment
   * whatever it reached; a payment that had succeeded has its booking reversed.
   */
  | { kind: 'reversed'; connectorReference: string; failureCode: PaymentFailureCode; message: string };
export type ChargeResult = Answer<ChargeState>;
export type ChargeStatusResult = StatusAnswer<ChargeState>;

export interface RefundRequest {
  /** Our refund id (ref_…), the processor's idempotency key. */
  reference: string;
  /** Our payment id, as the processor knows the charge. */
  paymentReference: string;
  connectorPaymentReference: string | null;
  amount: number;
  currency: string;
}

export type RefundState = Taken<'succeeded' | 'pending'> | Refused<'failed', RefundFailureCode>;
export type RefundResult = Answer<RefundState>;
export type RefundStatusResult = StatusAnswer<RefundState>;

export interface StatusRequest {
  reference: string;
  connectorReference: string | null;
}

// ---- card verification (saving a card without paying) ----

export interface CardVerificationRequest {
  /** Our payment method id (pm_…): the processor's idempotency key, so a repeated call verifies once. */
  reference: string;
  currency: string;
  card: CardDetails;
  /** Whether the merchant may later charge it without the customer (the first of a stored-credential series). */
  usage: 'on_session' | 'off_session';
  /** The service's own return endpoint for this method; as for charges, absent means no customer action is possible. */
  returnUrl?: string;
}

export type VerificationState =
  /** The card scheme's id of this customer-initiated verification, when the processor gives one (merchant-initiated payments quote it). */
  | { kind: 'succeeded'; connectorReference: string; networkTransactionId: string | null }
  | Taken<'pending'>
  | Declined
  | { kind: 'requires_action'; connectorReference: string; action: CustomerAction };
export type VerificationResult = Answer<VerificationState>;
export type VerificationStatusResult = StatusAnswer<VerificationState>;

// ---- mandates (direct debit) ----

export const MANDATE_SCHEMES = ['sepa_core', 'bacs', 'ach'] as const;
export type MandateScheme = (typeof MANDATE_SCHEMES)[number];

/** A bank account in a request to a processor. */
export interface ConnectorBankAccount {
  country: string;
  currency: string;
  /** The IBAN or account number: in memory for the call only. */
  secret: string;
  bic: string | null;
  sortCode: string | null;
  routingNumber: string | null;
}

export interface MandateSetupRequest {
  /** Our mandate id (mdt_…): the processor's idempotency key. */
  reference: string;
  scheme: MandateScheme;
  currency: string;
  /** The account as the processor needs it to register the mandate with the customer's bank. */
  account: ConnectorBankAccount;
  customer: { email: string; name: string | null };
}

export type MandateState =
  | Taken<'active' | 'pending'>
  | Refused<'failed', MandateFailureCode>
  /** No longer usable: revoked by the customer through their bank (`bank`) or cancelled at our request (`merchant`). */
  | { kind: 'revoked'; connectorReference: string; by: 'bank' | 'merchant' }
  /** Lapsed at the processor (unused too long, or a single-use mandate consumed): no longer usable, revoked by nobody. */
  | { kind: 'expired'; connectorReference: string };
export type MandateResult = Answer<MandateState>;
export type MandateStatusResult = StatusAnswer<MandateState>;

// ---- payouts (money sent to a beneficiary's bank account) ----

export interface PayoutRequest {
  /** Our payout id (po_…): the processor's idempotency key, so a repeated call never pays twice. */
  reference: string;
  amount: number;
  currency: string;
  /** The beneficiary's account as the bank needs it. */
  account: ConnectorBankAccount & { ifsc: string | null };
  /** `type` where the processor distinguishes people from companies (Adyen's account holder). */
  beneficiary: { name: string; type?: 'individual' | 'business' };
}

export type PayoutState =
  /** `pending`: accepted by the bank, not settled yet. */
  | Taken<'pending' | 'paid'>
  | Refused<'failed', PayoutFailureCode>
  /** Paid, then sent back by the beneficiary's bank. */
  | { kind: 'returned'; connectorReference: string; failureCode: PayoutFailureCode; message: string };
export type PayoutResult = Answer<PayoutState>;
export type PayoutStatusResult = StatusAnswer<PayoutState>;

/** An asynchronous outcome reported by a processor, verified and normalised. */
export type InboundEvent =
  | { eventId: string; object: 'payment'; reference: string; state: ChargeState }
  | { eventId: string; object: 'payment_method'; reference: string; state: VerificationState }
  | { eventId: string; object: 'refund'; reference: string; state: RefundState }
  | { eventId: string; object: 'mandate'; reference: string; state: MandateState }
  | { eventId: string; object: 'payout'; reference: string; state: PayoutState }
  /**
   * A capture's outcome confirmed later (Adyen's CAPTURE / CAPTURE_FAILED), named by our capture id
   * (the reference we sent with it); `paymentConnectorReference` names the authorisation.
   */
  | { eventId: string; object: 'capture'; reference: string; paymentConnectorReference: string | null; state: CaptureState }
  /** A void's outcome confirmed later (Adyen's CANCELLATION), named by our void id (the reference we sent with it). */
  | { eventId: string; object: 'void'; reference: string; state: CancelState }
  /** `reference`: our payment id when the processor echoes it, else '' (the report names the payment its own way). */
  | { eventId: string; object: 'dispute'; reference: string; state: DisputeReport };

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: 'signature_invalid' | 'timestamp_stale' | 'payload_invalid',
    message: string,
  ) {
    super(message);
  }
}

export interface InboundWebhook {
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
  now: Date;
}

/** A processor as the core uses it in production; test processors add TestControls (test-controls.ts). */
export interface Connector {
  readonly name: string;
  /** Modes whose payments may use it: simulators serve test mode only. */
  readonly modes: readonly ('test' | 'live')[];
  readonly paymentMethodTypes: readonly PaymentMethodType[];
  /** Authorises and captures in one step, or (captureMethod manual) authorises only. */
  charge(request: ChargeRequest, signal: AbortSignal): Promise<ChargeResult>;
  chargeStatus(request: StatusRequest, signal: AbortSignal): Promise<ChargeStatusResult>;
  refund(request: RefundRequest, signal: AbortSignal): Promise<RefundResult>;
  refundStatus(request: StatusRequest, signal: AbortSignal): Promise<RefundStatusResult>;
  /**
   * Called when the customer comes back to the service's return endpoint, with the query and form
   * parameters the processor appended; connectors without it get a plain status check instead.
   */
  completeAction?(request: StatusRequest & { params: Record<string, string> }, signal: AbortSignal): Promise<ChargeStatusResult>;
  /**
   * Verifies with the connector's secret and normalises; throws WebhookVerificationError. A
   * processor that sends its events in batches (GoCardless) answers one per event, each applied
   * (and deduplicated by its id) on its own.
   */
  parseWebhook(input: InboundWebhook): InboundEvent | InboundEvent[];
  /**
   * Set where the processor keeps our reference as its idempotency key for this long: a repeated
   * send within it answers the first outcome instead of acting again. For a processor that cannot
   * be asked for a status (Adyen), sending the same request again is how a lost answer is recovered.
   */
  readonly replaysSendsForMs?: number;
  /** The plain-text body the processor expects in answer to a webhook it sent (Adyen: `[accepted]`); unset: our JSON receipt. */
  readonly webhookAcknowledgement?: string;
  /** Card processors: an account-verification (zero-amount) authorisation of a card to be saved (idempotent by `reference`). */
  verifyCard?(request: CardVerificationRequest, signal: AbortSignal): Promise<VerificationResult>;
  /**
   * Where a verification stands; `params`: when the customer is back from the processor's page
   * (3-D Secure), what the processor appended to our return endpoint, to submit as completeAction does.
   */
  verificationStatus?(request: StatusRequest & { params?: Record<string, string> }, signal: AbortSignal): Promise<VerificationStatusResult>;
  /** Direct debit processors: registers a mandate with the customer's bank (idempotent by `reference`). */
  setupMandate?(request: MandateSetupRequest, signal: AbortSignal): Promise<MandateResult>;
  mandateStatus?(request: StatusRequest, signal: AbortSignal): Promise<MandateStatusResult>;
  /** Cancels a mandate at our request (the merchant revoked it); later debits on it are refused. */
  cancelMandate?(request: StatusRequest, signal: AbortSignal): Promise<MandateStatusResult>;
  /** Payout processors: sends money to a bank account (idempotent by `reference`). */
  payout?(request: PayoutRequest, signal: AbortSignal): Promise<PayoutResult>;
  payoutStatus?(request: StatusRequest, signal: AbortSignal): Promise<PayoutStatusResult>;
  /** Manual capture (captures.ts): takes `amount` of an authorisation (idempotent by `reference`, our cap_ id). */
  capture?(request: CaptureRequest, signal: AbortSignal): Promise<CaptureResult>;
  /**
   * Locates a capture after a lost answer. A processor without a lookup of its own answers from
   * the authorisation (Stripe: the PaymentIntent's status) or, knowing nothing (Adyen), `pending`
   * when it took the capture and `not_found` otherwise: the capture is then sent again under the
   * same idempotency key, and the processor answers what it did.
   */
  captureStatus?(request: CaptureStatusRequest, signal: AbortSignal): Promise<CaptureStatusResult>;
  /** Voids an authorisation (nothing captured yet): the processor releases the money it holds. */
  cancelAuthorization?(request: CancelAuthorizationRequest, signal: AbortSignal): Promise<CancelResult>;
  /** Processors whose settlement records can be fetched (reconciliation): every record created in `period`, all pages. */
  settlementRecords?(period: SettlementPeriod, signal: AbortSignal): Promise<SettlementRecord[] | ConnectorError>;
  /** Card processors: the merchant's answer to a dispute (disputes.ts), idempotent by `reference`. */
  respondToDispute?(request: DisputeResponseRequest, signal: AbortSignal): Promise<Answer<DisputeResponseState>>;
  /** Where an answer stands after a lost reply: `not_found` when the processor shows nothing of it (it is then sent again under the same key). */
  disputeResponseStatus?(request: DisputeResponseRequest, signal: AbortSignal): Promise<StatusAnswer<DisputeResponseState>>;
}

export type CaptureResult = Answer<CaptureState>;
export type CaptureStatusResult = StatusAnswer<CaptureState>;
export type CancelResult = Answer<CancelState>;

/** Thrown by transports; the core turns it into a ConnectorError. */
export class TransportError extends Error {
  constructor(
    readonly code: 'connection_refused' | 'connect_timeout' | 'timeout' | 'connection_lost',
    message: string,
  ) {
    super(message);
  }
}

/** `answer`, or a timeout TransportError when `signal` aborts first; the listener goes when `answer` settles. */
export function beforeAbort<T>(answer: Promise<T>, signal: AbortSignal, message: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const fail = () => reject(new TransportError('timeout', message));
    signal.addEventListener('abort', fail, { once: true });
    answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', fail));
  });
}

export function connectorError(code: ConnectorErrorCode, message: string): ConnectorError {
  return { kind: 'error', code, message };
}

export function isRetryable(result: { kind: string; code?: ConnectorErrorCode }): boolean {
  return result.kind === 'error' && result.code !== undefined && CONNECTOR_ERROR_CODES[result.code].retryable;
}
