// Small statistics helpers shared by the load generators.

/** Nearest-rank percentile of an ascending-sorted array (p in 0..100). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarise(values: number[]): LatencySummary {
  const sorted = Float64Array.from(values).sort();
  const sum = values.reduce((a, b) => a + b, 0);
  return {
    count: values.length,
    mean: values.length ? sum / values.length : NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
  };
}

export const round = (x: number, digits = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** digits) / 10 ** digits : x);

/** Every number of `o` rounded (latency summaries, CPU figures), for bench/results. */
export function roundAll<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === 'number' ? round(v) : v])) as T;
}

/** What bench/results keeps of a service's HTTP load: throughput, requests, latencies, statuses. */
export function loadDetails(okPerS: number, requests: number, latency: LatencySummary, statuses: Record<string, number>, errors: number) {
  return { okPerS: round(okPerS), requests, latencyMs: roundAll(latency), statuses, errors };
}
