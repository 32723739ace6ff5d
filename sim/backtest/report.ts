// The backtest's table: one row per strategy, without and with cascade. Only figures of the
// simulated run — no wall times, dates or ids — so the same seed prints the same bytes.
import type { Outcome, StrategyResult } from './run.js';
import type { Stream } from './model.js';

export interface Row {
  strategy: string;
  cascade: boolean;
  payments: number;
  authRate: number;
  outageAuthRate: number;
  attemptsPerPayment: number;
  fees: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
}

/** The nearest-rank percentile. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const rate = (outcomes: readonly Outcome[]) => (outcomes.length === 0 ? 0 : outcomes.filter((o) => o.authorised).length / outcomes.length);

export function rowOf(result: StrategyResult): Row {
  const { outcomes } = result;
  const latencies = outcomes.map((o) => o.latencyMs).sort((a, b) => a - b);
  return {
    strategy: result.config.strategy,
    cascade: result.config.cascade,
    payments: outcomes.length,
    authRate: rate(outcomes),
    outageAuthRate: rate(outcomes.filter((o) => o.inOutage)),
    attemptsPerPayment: outcomes.reduce((sum, o) => sum + o.calls, 0) / Math.max(1, outcomes.length),
    fees: result.fees,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
const money = (minor: number | undefined) => ((minor ?? 0) / 100).toFixed(2);

/** A Markdown table (it reads as a table in a terminal too). */
export function table(seed: number, stream: Stream, rows: readonly Row[]): string {
  const currencies = [...new Set(rows.flatMap((r) => Object.keys(r.fees)))].sort();
  const head = ['strategy', 'cascade', 'payments', 'authorised', 'in outage', 'attempts/payment', ...currencies.map((c) => `fees ${c}`), 'p50 ms', 'p99 ms'];
  const lines = rows.map((r) => [
    r.strategy,
    r.cascade ? 'yes' : 'no',
    String(r.payments),
    pct(r.authRate),
    pct(r.outageAuthRate),
    r.attemptsPerPayment.toFixed(3),
    ...currencies.map((c) => money(r.fees[c])),
    String(r.p50Ms),
    String(r.p99Ms),
  ]);
  const outage = stream.payments.filter((p) => p.atMs >= stream.outage.fromMs && p.atMs < stream.outage.toMs).length;
  const minutes = (ms: number) => (ms / 60_000).toFixed(1);
  return [
    `backtest seed ${seed}: ${stream.payments.length} payments over ${minutes(stream.payments.at(-1)?.atMs ?? 0)} simulated minutes; ` +
      `outage of simulator_a from minute ${minutes(stream.outage.fromMs)} to ${minutes(stream.outage.toMs)} (${outage} payments)`,
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`,
    ...lines.map((l) => `| ${l.join(' | ')} |`),
  ].join('\n');
}
