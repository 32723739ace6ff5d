// The closed catalogue of every error the API can answer with. Each code has one category (the
// specification's five), one HTTP status and a default message; everything that renders an error
// body goes through `ApiError`, so the shape is the same everywhere.

export type ErrorType = 'validation' | 'authentication' | 'eligibility' | 'processing' | 'rate-limit';

interface CatalogueEntry {
  type: ErrorType;
  status: number;
  message: string;
}

// One maker per category, so that each row of the catalogue reads as code, status, message.
const category =
  (type: ErrorType) =>
  (status: number, message: string): CatalogueEntry => ({ type, status, message });
const validation = category('validation');
const authentication = category('authentication');
const eligibility = category('eligibility');
const processing = category('processing');
const rateLimit = category('rate-limit');

export const ERROR_CATALOGUE = {
  parameter_missing: validation(400, 'A required parameter is missing.'),
  parameter_invalid: validation(400, 'A parameter has an invalid value.'),
  parameter_unknown: validation(400, 'The request contains an unknown parameter.'),
  body_invalid_json: validation(400, 'The request body is not valid JSON.'),
  body_missing: validation(400, 'The request needs a JSON body.'),
  idempotency_key_missing: validation(400, 'This request moves money and needs an Idempotency-Key header.'),
  idempotency_key_invalid: validation(400, 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.'),
  idempotency_key_reused: validation(422, 'This Idempotency-Key was already used with a different request.'),
  resource_missing: validation(404, 'No such resource.'),
  route_missing: validation(404, 'No such route.'),
  path_invalid: validation(400, 'The request path has a malformed %-escape (a % not followed by two hex digits, or bytes that are not UTF-8).'),
  path_too_long: validation(414, 'A segment of the request path is longer than 100 characters; no id or name is that long.'),
  request_malformed: validation(400, 'The request is not valid HTTP/1.1 and was not read.'),
  headers_too_large: validation(431, 'The request headers are larger than 16 KiB.'),
  request_timeout: validation(408, 'The request did not arrive in time; the connection was closed.'),
  unsupported_api_version: validation(404, 'This API version is not supported; use /v1.'),
  method_not_allowed: validation(405, 'This method is not allowed on this route.'),
  body_too_large: validation(413, 'The request body is larger than 1 MiB.'),
  unsupported_media_type: validation(415, 'The request body must be sent as application/json.'),
  /** An uploaded settlement report (reconciliation) that cannot be read as a whole; the message names the line or column. */
  report_invalid: validation(400, 'The settlement report is malformed, truncated, lacks a required column or is not this connector account\'s; nothing was booked.'),
  invalid_state: validation(422, 'The object is not in a state that allows this operation.'),
  /** A unique merchant-chosen value (a customer's reference) clashes with another object's; 422, not 409, as 409 means "retry later" here. */
  reference_already_used: validation(422, 'Another object of this account and mode already has this reference.'),
  connector_account_in_use: validation(422, "The connector account is named by this mode's routing rules; take it out of them (PUT /v1/routing) first."),

  api_key_missing: authentication(401, 'No API key was provided; send it as "Authorization: Bearer <key>".'),
  api_key_invalid: authentication(401, 'The API key is invalid, revoked or expired.'),
  account_suspended: authentication(403, 'This account is suspended.'),
  permission_denied: authentication(403, 'This key may not perform this operation.'),
  connector_webhook_signature_invalid: authentication(401, "The webhook signature does not verify with this connector's secret."),
  connector_webhook_timestamp_stale: authentication(401, 'The webhook timestamp is outside the tolerated window; it may be a replay.'),

  currency_not_enabled: eligibility(422, 'This currency is not enabled for the account.'),
  amount_above_limit: eligibility(422, 'The amount is above the allowed limit.'),
  live_mode_not_enabled: eligibility(422, 'Live mode is not enabled for this account; complete onboarding first.'),
  order_not_payable: eligibility(422, 'The payment order is not open for payment.'),
  routing_no_match: eligibility(422, 'No routing rule of this account and mode matches the payment (currency, amount, method); see GET /v1/routing.'),
  amount_above_refundable: eligibility(422, 'The amount is above what remains refundable on the payment.'),
  amount_above_capturable: eligibility(422, 'The amount is above what the authorisation still holds (amount_capturable).'),
  authorization_expired: eligibility(422, 'The authorisation lapsed (capture_before passed); nothing can be captured.'),
  capture_not_supported: eligibility(422, "The payment's connector captures an authorisation once: a capture that is not final is refused."),
  charge_disputed: eligibility(422, 'The payment has an open or lost dispute: the cardholder gets the money back through their bank, so it cannot be refunded.'),
  dispute_response_refused: eligibility(422, "The processor refused the dispute's answer (its evidence or its acceptance): the message says why; the dispute is as it was."),
  dispute_evidence_closed: eligibility(422, "The dispute's evidence deadline (evidence_due_by) has passed, or the dispute is no longer waiting for evidence."),
  mandate_not_active: eligibility(422, 'The mandate is not active; only an active mandate can be debited.'),
  payouts_not_enabled: eligibility(422, 'Payouts are not enabled for this account in live mode; onboarding enables them.'),
  insufficient_balance: eligibility(422, 'The available balance in this currency is too low for this payout or refund.'),
  payment_method_on_session_only: eligibility(422, 'The payment method was saved for on_session use: the customer must be present (no off_session payment).'),
  payment_method_not_active: eligibility(422, 'The payment method is not active (its verification failed or waits for the customer); it cannot be charged.'),
  payment_method_detached: eligibility(422, 'The payment method is detached: its card data is erased and it can no longer be used or changed.'),
  beneficiary_disabled: eligibility(422, 'The beneficiary is disabled and cannot receive payouts.'),
  /** The money's currency is not the one its counterpart works in (a beneficiary's account, a mandate). */
  currency_mismatch: eligibility(422, "The currency is not the counterpart's: a payout must be in its beneficiary account's currency, a debit in its mandate's."),
  webhook_endpoint_limit_reached: eligibility(422, 'The account has as many webhook endpoints as allowed in this mode; delete one first.'),

  idempotency_key_in_use: processing(409, 'A request with this Idempotency-Key is still being processed; retry later.'),
  processor_unavailable: processing(502, 'No processor could take the request; nothing was created.'),
  service_unavailable: processing(503, 'The service is temporarily unavailable; retry later.'),
  internal_error: processing(500, 'An internal error occurred; retry later.'),

  rate_limited: rateLimit(429, 'Too many requests; retry after the time in Retry-After.'),
} satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface ErrorBody {
  error: { type: ErrorType; code: ErrorCode; message: string; param?: string; request_id: string };
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly type: ErrorType;
  readonly status: number;
  readonly param: string | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, opts: { message?: string; param?: string; headers?: Record<string, string> } = {}) {
    const entry: CatalogueEntry = ERROR_CATALOGUE[code];
    super(opts.message ?? entry.message);
    this.code = code;
    this.type = entry.type;
    this.status = entry.status;
    this.param = opts.param;
    this.headers = opts.headers ?? {};
  }

  body(requestId: string): ErrorBody {
    return {
      error: {
        type: this.type,
        code: this.code,
        message: this.message,
        ...(this.param === undefined ? {} : { param: this.param }),
        request_id: requestId,
      },
    };
  }
}

export function invalidState(objectName: string, current: string, allowed: readonly string[], operation: string): ApiError {
  const allowedText = allowed.length ? allowed.join(', ') : 'none';
  return new ApiError('invalid_state', {
    message: `Cannot ${operation} a ${objectName} whose status is ${current}; allowed from: ${allowedText}.`,
  });
}
