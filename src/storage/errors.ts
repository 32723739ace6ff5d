// Database errors told apart by SQLSTATE (and constraint name), never by message text. Through
// drizzle the driver's error is the `cause` of a DrizzleQueryError, so the chain is walked.

export const UNIQUE_VIOLATION = '23505';

export function isDatabaseError(err: unknown, code: string, constraintPrefix?: string): boolean {
  for (let e = err as { code?: unknown; constraint?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.code !== code) continue;
    return constraintPrefix === undefined || (typeof e.constraint === 'string' && e.constraint.startsWith(constraintPrefix));
  }
  return false;
}
