// Fee and settlement-date arithmetic, pure and in integers: amounts are minor units of whatever
// currency (yen, cents, fils), so nothing here needs to know how many decimals a currency has.

export interface FeeSchedule {
  /** Percentage part in basis points (290 = 2.9 %). */
  bps: number;
  /** Fixed part, minor units. */
  fixed: number;
  /** The fee is at least this much (minor units); null: no minimum. */
  minimum: number | null;
}

/**
 * The fee on `amount`: the percentage part rounded half up to the minor unit, plus the fixed
 * part, at least the minimum, and never more than the amount itself.
 */
export function feeFor(amount: number, schedule: FeeSchedule): number {
  // BigInt: amount (≤ 99 999 999 999) times bps (≤ 10 000) is past 2^53 only just, but exactly.
  const percentage = Number((BigInt(amount) * BigInt(schedule.bps) + 5000n) / 10000n);
  const fee = Math.max(percentage + schedule.fixed, schedule.minimum ?? 0);
  return Math.min(fee, amount);
}

/**
 * The part of a payment's fee that refunds totalling `refundedTotal` of its `amount` give back,
 * rounded half up: the parts of successive refunds add up to the whole fee once all is refunded.
 */
export function feeReturnedFor(fee: number, amount: number, refundedTotal: number): number {
  return Number((BigInt(fee) * BigInt(refundedTotal) * 2n + BigInt(amount)) / (2n * BigInt(amount)));
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * When money that arrived at `at` becomes available, `days` business days (Monday to Friday, UTC)
 * later: the start (00:00 UTC) of the `days`-th business day after the day of `at`.
 * Friday + 1 is Monday; Saturday + 1 is Monday too.
 */
export function availableOn(at: Date, days: number): Date {
  let day = Math.floor(at.getTime() / DAY_MS) * DAY_MS;
  for (let left = days; left > 0; ) {
    day += DAY_MS;
    const weekday = new Date(day).getUTCDay();
    if (weekday !== 0 && weekday !== 6) left--;
  }
  return new Date(day);
}
