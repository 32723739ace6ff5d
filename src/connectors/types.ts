// The connector interface: what the core needs from a processor, in the service's own vocabulary.
// Each connector lives in its own folder with the processor's request/response mapping; the
// processor's words (its statuses, error codes, signature scheme) never leave that folder. The
// core (router.ts) owns timeouts, fallback, the circuit breaker and attempt records.

export type PaymentMethodType = 'card';

/** Card data as received; kept in memory for the call only, never stored or logged. */
export interface CardDetails {
  number: string;
  expMonth: number;
  expYear: number;
  cvc: string;
}

export const PAYMENT_FAILURE_CODES = [
  'card_declined',
  'insufficient_funds',
  'expired_card',
  'incorrect_cvc',
  /** No connector could take the payment (errors, open circuits) or a processor refused the request itself. */
  'processing_error',
] as const;
export type PaymentFailureCode = (typeof PAYMENT_FAILURE_CODES)[number];

export const REFUND_FAILURE_CODES = ['charge_not_refundable', 'amount_above_refundable', 'processing_error'] as const;
export type RefundFailureCode = (typeof REFUND_FAILURE_CODES)[number];

/**
 * Failures of a call, in our words. Retryable ones are certain not to have reached the processor's
 * books (it answered with an error of its own, or the connection never opened), so the router
 * may try the next connector; `timeout` is not: the processor may have acted.
 */
export const CONNECTOR_ERROR_CODES = {
  processor_error: { retryable: true },
  connection_refused: { retryable: true },
  connect_timeout: { retryable: true },
  timeout: { retryable: false },
  connection_lost: { retryable: false },
  invalid_response: { retryable: false },
  request_rejected: { retryable: false },
} as const satisfies Record<string, { retryable: boolean }>;
export type ConnectorErrorCode = keyof typeof CONNECTOR_ERROR_CODES;

export interface ConnectorError {
  kind: 'error';
  code: ConnectorErrorCode;
  message: string;
}

export interface ChargeRequest {
  /** Our payment id (pay_…): the processor's idempotency key, so a repeated call never charges twice. */
  reference: string;
  amount: number;
  currency: string;
  card: CardDetails;
}

export type ChargeState =
  | { kind: 'succeeded'; connectorReference: string }
  | { kind: 'pending'; connectorReference: string }
  | { kind: 'declined'; connectorReference: string | null; failureCode: PaymentFailureCode; message: string };

export type ChargeResult = ChargeState | ConnectorError;
export type ChargeStatusResult = ChargeState | { kind: 'not_found' } | ConnectorError;

export interface RefundRequest {
  /** Our refund id (ref_…), the processor's idempotency key. */
  reference: string;
  /** Our payment id, as the processor knows the charge. */
  paymentReference: string;
  connectorPaymentReference: string | null;
  amount: number;
  currency: string;
}

export type RefundState =
  | { kind: 'succeeded'; connectorReference: string }
  | { kind: 'pending'; connectorReference: string }
  | { kind: 'failed'; connectorReference: string | null; failureCode: RefundFailureCode; message: string };

export type RefundResult = RefundState | ConnectorError;
export type RefundStatusResult = RefundState | { kind: 'not_found' } | ConnectorError;

export interface StatusRequest {
  reference: string;
  connectorReference: string | null;
}

/** An asynchronous outcome reported by a processor, verified and normalised. */
export type InboundEvent =
  | { eventId: string; object: 'payment'; reference: string; state: ChargeState }
  | { eventId: string; object: 'refund'; reference: string; state: RefundState };

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

export interface Connector {
  readonly name: string;
  /** Modes whose payments may use it: simulators serve test mode only. */
  readonly modes: readonly ('test' | 'live')[];
  readonly paymentMethodTypes: readonly PaymentMethodType[];
  /** Authorises and captures in one step. */
  charge(request: ChargeRequest, signal: AbortSignal): Promise<ChargeResult>;
  chargeStatus(request: StatusRequest, signal: AbortSignal): Promise<ChargeStatusResult>;
  refund(request: RefundRequest, signal: AbortSignal): Promise<RefundResult>;
  refundStatus(request: StatusRequest, signal: AbortSignal): Promise<RefundStatusResult>;
  /** Verifies with the connector's secret and normalises; throws WebhookVerificationError. */
  parseWebhook(input: InboundWebhook): InboundEvent;
  /** Test processors only: settle a pending charge now (POST /v1/test-helpers/payments/{id}/resolve). */
  resolvePendingCharge?(reference: string, outcome: 'succeeded' | 'failed', signal: AbortSignal): Promise<ChargeStatusResult>;
}

/** Thrown by transports; the core turns it into a ConnectorError. */
export class TransportError extends Error {
  constructor(
    readonly code: 'connection_refused' | 'connect_timeout' | 'timeout' | 'connection_lost',
    message: string,
  ) {
    super(message);
  }
}

export function connectorError(code: ConnectorErrorCode, message: string): ConnectorError {
  return { kind: 'error', code, message };
}

export function isRetryable(result: { kind: string; code?: ConnectorErrorCode }): boolean {
  return result.kind === 'error' && result.code !== undefined && CONNECTOR_ERROR_CODES[result.code].retryable;
}
