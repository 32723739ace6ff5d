// Reading a simulated processor's answer: its errors in our words, and the shape every answer
// about one object shares (the object, or an error; a status query may also find nothing).
import { connectorError, type ConnectorError, type ConnectorErrorCode } from '../types.js';
import { SIM_ERROR_CODES, type SimError, type SimErrorCode } from './protocol.js';

const ERROR_OF_CODE = {
  INTERNAL_ERROR: 'processor_error',
  BAD_REQUEST: 'request_rejected',
  NOT_FOUND: 'request_rejected',
  // The processor holds something under our reference already: not a refusal to act, so the
  // object is verified (status) rather than failed and tried elsewhere.
  IDEMPOTENCY_CONFLICT: 'invalid_response',
} as const satisfies Record<SimErrorCode, ConnectorErrorCode>;

export function errorCodeOf(body: unknown): SimErrorCode | undefined {
  const code = (body as SimError | undefined)?.error?.code;
  return (SIM_ERROR_CODES as readonly string[]).includes(code as string) ? (code as SimErrorCode) : undefined;
}

export function errorOf(status: number, body: unknown): ConnectorError {
  const code = errorCodeOf(body);
  if (code) return connectorError(ERROR_OF_CODE[code], `the processor answered ${status} ${code}`);
  // Only the processor's own INTERNAL_ERROR says nothing was done. A bare 5xx may come from a proxy
  // after the processor acted, so it is not retryable elsewhere: the outcome is verified later.
  if (status >= 500) return connectorError('invalid_response', `the processor answered ${status} without saying whether it acted`);
  return connectorError('invalid_response', `unexpected answer ${status} from the processor`);
}

/** The answer to a request about one kind of object (`is` checks its wire shape, `stateOf` maps it), and to a status query. */
export function answersOf<W, S>(is: (body: unknown) => body is W, stateOf: (object: W) => S) {
  const answer = (status: number, body: unknown): S | ConnectorError => ((status === 200 || status === 201) && is(body) ? stateOf(body) : errorOf(status, body));
  const statusAnswer = (status: number, body: unknown): S | { kind: 'not_found' } | ConnectorError =>
    status === 404 && errorCodeOf(body) === 'NOT_FOUND' ? { kind: 'not_found' } : answer(status, body);
  return { answer, statusAnswer };
}
