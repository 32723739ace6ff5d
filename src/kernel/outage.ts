// What "the database is unreachable" looks like, so that an outage (a PostgreSQL restart, a
// failover, a network cut) is answered as a typed, retryable 503 and waited out by the worker,
// instead of being mistaken for a bug (500) or killing the process.
import { ApiError } from './errors.js';

/** Socket errors of a connection that could not be opened or was cut. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is going away or not yet there: class 08 (connection exception),
 * 57P01–57P03 (administrator shutdown, crash shutdown, cannot connect now: a restart or failover)
 * and 53300 (too many connections), each of which a retry a moment later may get past.
 */
const SQLSTATES = /^(08...|57P0[123]|53300)$/;

/** node-postgres' own messages for a connection that ended, never opened, or is unusable. */
const DRIVER_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'timeout exceeded when trying to connect',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
];

function isUnavailableHere(err: object): boolean {
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SQLSTATES.test(code))) return true;
  return typeof message === 'string' && DRIVER_MESSAGES.some((m) => message.startsWith(m));
}

/**
 * The driver's error saying the database could not be reached, found in `err` or in what it wraps
 * (drizzle wraps the driver's error as `cause`; checks run side by side throw an AggregateError);
 * undefined when `err` is something else. Its message never holds query parameters.
 */
export function outageCause(err: unknown, depth = 0): { code?: string; message: string } | undefined {
  if (err === null || typeof err !== 'object' || depth > 8) return undefined;
  if (isUnavailableHere(err)) return err as { code?: string; message: string };
  if (err instanceof AggregateError) {
    for (const inner of err.errors) {
      const found = outageCause(inner, depth + 1);
      if (found) return found;
    }
  }
  return outageCause((err as { cause?: unknown }).cause, depth + 1);
}

export function isDatabaseUnavailable(err: unknown): boolean {
  return outageCause(err) !== undefined;
}

/**
 * Failures of the server, not of one statement's rows, that a statement sent again alone would meet
 * too: an outage, read-only after a failover (25006), out of resources (class 53); and the
 * driver's own read timeout (matched by its message, as it has no code), after which the batch's
 * outcome is not known. A batch failing so hands its error to every call in it
 * (src/storage/batched.ts). A statement timeout (57014) is not one of them: a batch that updates
 * rows can wait on one row's lock, which its calls sent one by one would meet only once.
 */
export function isServerWide(err: unknown): boolean {
  if (isDatabaseUnavailable(err)) return true;
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return (typeof code === 'string' && /^(25006|53...)$/.test(code)) || message === 'Query read timeout';
}

/** The longest pause of a loop that keeps failing while the database is away: its return is noticed within it. */
export const LONGEST_OUTAGE_BACKOFF_MS = 5000;

/** Seconds a client is asked to wait before retrying while the database is away. */
const OUTAGE_RETRY_AFTER_S = 2;

/** The answer to a request that met an outage: typed, retryable with the same Idempotency-Key. */
export function databaseUnavailableError(): ApiError {
  return new ApiError('service_unavailable', {
    message: 'The database is unreachable for the moment; retry after the time in Retry-After, with the same Idempotency-Key.',
    headers: { 'retry-after': String(OUTAGE_RETRY_AFTER_S) },
  });
}
