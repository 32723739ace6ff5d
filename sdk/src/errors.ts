// The one error type of the SDK: every answer outside 2xx becomes a PaymentApiError carrying the
// service's typed body, so callers switch on `code` (a closed union from the document).
import type { components } from './openapi.js';

export type ApiErrorBody = components['schemas']['Error']['error'];
export type ErrorCode = ApiErrorBody['code'];
export type ErrorType = ApiErrorBody['type'];

export class PaymentApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly type: ErrorType;
  readonly param: string | undefined;
  readonly requestId: string | undefined;
  readonly headers: Headers;

  constructor(status: number, body: ApiErrorBody, headers: Headers) {
    super(body.message);
    this.name = 'PaymentApiError';
    this.status = status;
    this.code = body.code;
    this.type = body.type;
    this.param = body.param;
    this.requestId = body.request_id;
    this.headers = headers;
  }
}

/** The typed error of an answer; a body that is not the service's (a proxy's page) becomes internal_error. */
export function toApiError(status: number, body: unknown, headers: Headers): PaymentApiError {
  const error = (body as { error?: ApiErrorBody } | undefined)?.error;
  if (error && typeof error.code === 'string' && typeof error.message === 'string') return new PaymentApiError(status, error, headers);
  const requestId = headers.get('request-id') ?? '';
  return new PaymentApiError(status, { type: 'processing', code: 'internal_error', message: `HTTP ${status} without a typed error body.`, request_id: requestId }, headers);
}
