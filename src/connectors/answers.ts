// The shapes every connector call answers in (types.ts re-exports all of it): why a call failed,
// and the two forms a processor's state takes.

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

// The states a processor reports have one of two forms: taken (it holds the operation under its
// own reference), or refused with a reason (a reference only if it got that far).
export type Taken<Kind extends string> = Kind extends string ? { kind: Kind; connectorReference: string } : never;
export type Refused<Kind extends string, Code extends string> = { kind: Kind; connectorReference: string | null; failureCode: Code; message: string };
/** The answer to a call that acts: the state it led to, or why the call itself failed. */
export type Answer<State> = State | ConnectorError;
/** The answer to a status question, which may also be that the processor never heard of it. */
export type StatusAnswer<State> = State | { kind: 'not_found' } | ConnectorError;
