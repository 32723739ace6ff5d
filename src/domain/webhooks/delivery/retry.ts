// When the next attempt of a failed delivery happens: the configured schedule (by default the one
// the Standard Webhooks specification suggests), each delay spread by jitter so that an endpoint
// that was down does not receive its whole backlog in one burst when it comes back, and never
// sooner than the receiver's Retry-After.

export interface RetryPolicy {
  /** Delay in seconds before attempt n+1 (index n), counted from the previous failure; [0] is the first attempt. */
  scheduleS: readonly number[];
  /** ± share of each delay (0.2 = ±20 %). */
  jitterRatio: number;
  random: () => number;
}

/**
 * Milliseconds to wait after the `attemptsDone`-th failed attempt, or null when the schedule is
 * used up. Retry-After is honoured up to the longest delay of the schedule.
 */
export function nextRetryDelayMs(policy: RetryPolicy, attemptsDone: number, retryAfterS: number | null): number | null {
  if (attemptsDone >= policy.scheduleS.length) return null;
  const baseMs = policy.scheduleS[attemptsDone]! * 1000;
  const jittered = baseMs * (1 + policy.jitterRatio * (2 * policy.random() - 1));
  const ceilingMs = Math.max(...policy.scheduleS) * 1000;
  const floorMs = retryAfterS === null ? 0 : Math.min(retryAfterS * 1000, ceilingMs);
  return Math.round(Math.max(jittered, floorMs));
}
