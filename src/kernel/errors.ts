// The closed catalogue of every error the API can answer with. Each code has one category (the
// specification's five), one HTTP status and a default message; everything that renders an error
// body goes through `ApiError`, so the shape is the same everywhere.

export type ErrorType = 'validation' | 'authentication' | 'eligibility' | 'processing' | 'rate-limit';

interface CatalogueEntry {
  type: ErrorType;
  status: number;
  message: string;
}

export const ERROR_CATALOGUE = {
  // validation
  parameter_missing: { type: 'validation', status: 400, message: 'A required parameter is missing.' },
  parameter_invalid: { type: 'validation', status: 400, message: 'A parameter has an invalid value.' },
  parameter_unknown: { type: 'validation', status: 400, message: 'The request contains an unknown parameter.' },
  body_invalid_json: { type: 'validation', status: 400, message: 'The request body is not valid JSON.' },
  body_missing: { type: 'validation', status: 400, message: 'The request needs a JSON body.' },
  idempotency_key_missing: {
    type: 'validation',
    status: 400,
    message: 'This request moves money and needs an Idempotency-Key header.',
  },
  idempotency_key_invalid: {
    type: 'validation',
    status: 400,
    message: 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.',
  },
  idempotency_key_reused: {
    type: 'validation',
    status: 422,
    message: 'This Idempotency-Key was already used with a different request.',
  },
  resource_missing: { type: 'validation', status: 404, message: 'No such resource.' },
  route_missing: { type: 'validation', status: 404, message: 'No such route.' },
  unsupported_api_version: { type: 'validation', status: 404, message: 'This API version is not supported; use /v1.' },
  method_not_allowed: { type: 'validation', status: 405, message: 'This method is not allowed on this route.' },
  body_too_large: { type: 'validation', status: 413, message: 'The request body is larger than 1 MiB.' },
  unsupported_media_type: {
    type: 'validation',
    status: 415,
    message: 'The request body must be sent as application/json.',
  },
  invalid_state: { type: 'validation', status: 422, message: 'The object is not in a state that allows this operation.' },

  // authentication
  api_key_missing: {
    type: 'authentication',
    status: 401,
    message: 'No API key was provided; send it as "Authorization: Bearer <key>".',
  },
  api_key_invalid: { type: 'authentication', status: 401, message: 'The API key is invalid, revoked or expired.' },
  account_suspended: { type: 'authentication', status: 403, message: 'This account is suspended.' },
  permission_denied: { type: 'authentication', status: 403, message: 'This key may not perform this operation.' },
  connector_webhook_signature_invalid: {
    type: 'authentication',
    status: 401,
    message: "The webhook signature does not verify with this connector's secret.",
  },
  connector_webhook_timestamp_stale: {
    type: 'authentication',
    status: 401,
    message: 'The webhook timestamp is outside the tolerated window; it may be a replay.',
  },

  // eligibility
  currency_not_enabled: { type: 'eligibility', status: 422, message: 'This currency is not enabled for the account.' },
  amount_above_limit: { type: 'eligibility', status: 422, message: 'The amount is above the allowed limit.' },
  live_mode_not_enabled: {
    type: 'eligibility',
    status: 422,
    message: 'Live mode is not enabled for this account; complete onboarding first.',
  },
  order_not_payable: { type: 'eligibility', status: 422, message: 'The payment order is not open for payment.' },
  routing_no_match: {
    type: 'eligibility',
    status: 422,
    message: 'No routing rule of this account and mode matches the payment (currency, amount, method); see GET /v1/routing.',
  },
  amount_above_refundable: { type: 'eligibility', status: 422, message: 'The amount is above what remains refundable on the payment.' },
  mandate_not_active: { type: 'eligibility', status: 422, message: 'The mandate is not active; only an active mandate can be debited.' },
  payouts_not_enabled: {
    type: 'eligibility',
    status: 422,
    message: 'Payouts are not enabled for this account in live mode; onboarding enables them.',
  },
  insufficient_balance: { type: 'eligibility', status: 422, message: 'The available balance in this currency is too low for this payout or refund.' },
  beneficiary_disabled: { type: 'eligibility', status: 422, message: 'The beneficiary is disabled and cannot receive payouts.' },
  /** The money's currency is not the one its counterpart works in (a beneficiary's account, a mandate). */
  currency_mismatch: {
    type: 'eligibility',
    status: 422,
    message: "The currency is not the counterpart's: a payout must be in its beneficiary account's currency, a debit in its mandate's.",
  },
  webhook_endpoint_limit_reached: {
    type: 'eligibility',
    status: 422,
    message: 'The account has as many webhook endpoints as allowed in this mode; delete one first.',
  },

  // processing
  idempotency_key_in_use: {
    type: 'processing',
    status: 409,
    message: 'A request with this Idempotency-Key is still being processed; retry later.',
  },
  processor_unavailable: {
    type: 'processing',
    status: 502,
    message: 'No processor could take the request; nothing was created.',
  },
  service_unavailable: { type: 'processing', status: 503, message: 'The service is temporarily unavailable; retry later.' },
  internal_error: { type: 'processing', status: 500, message: 'An internal error occurred; retry later.' },

  // rate-limit
  rate_limited: { type: 'rate-limit', status: 429, message: 'Too many requests; retry after the time in Retry-After.' },
} as const satisfies Record<string, CatalogueEntry>;

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
