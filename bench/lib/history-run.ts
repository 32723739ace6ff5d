// BENCH_HISTORY=N (bench/run.ts): every benchmark runs twice, on an empty database and then on one
// preloaded with N units of history (lib/history.ts), and each figure is set beside its empty
// figure. A benchmark calls preloadForBench right after its own set-up, before its service starts.
import { preloadHistory, type HistoryReport } from './history.js';
import type { BenchDatabase } from './database.js';
import type { BenchResult } from './types.js';

let units = 0;

/** The units the next benchmark run preloads (0: none). */
export function setHistoryUnits(n: number): void {
  units = n;
}

/** Preloads this run's history (none on the empty run) into the benchmark's database, owned partly by `ownAccounts`. */
export async function preloadForBench(db: BenchDatabase, ownAccounts: string[], log: (msg: string) => void): Promise<HistoryReport | null> {
  if (units === 0) return null;
  log(`preloading ${units} units of history (BENCH_HISTORY)`);
  return preloadHistory(db.url, { units, ownAccounts, log });
}

/** BENCH_HISTORY: a whole number, with an optional k or m (`2m` = 2,000,000 units). */
export function parseHistoryUnits(raw: string | undefined): number {
  if (raw === undefined || raw === '' || raw === '0') return 0;
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(raw.trim());
  if (!m) throw new Error(`BENCH_HISTORY must be a number of units such as 200000, 200k or 2m, got ${JSON.stringify(raw)}`);
  return Math.round(Number(m[1]) * ({ '': 1, k: 1e3, m: 1e6 } as Record<string, number>)[m[2]!.toLowerCase()]!);
}

type Figure = [label: string, path: string, better: 'higher' | 'lower'];

/** The figures compared per benchmark: where each is in the result's details, and which way is better. */
const FIGURES: Record<string, Figure[]> = {
  orders: [
    ['orders/s', 'service.okPerS', 'higher'],
    ['p99 ms', 'service.latencyMs.p99', 'lower'],
    ['pgbench equivalent tx, tps', 'equivalentTransaction.tps', 'higher'],
    ['ratio service / equivalent tx', 'ratio', 'higher'],
  ],
  payments: [
    ['typed card: payments/s', 'service.okPerS', 'higher'],
    ['typed card: pgbench tps', 'pgbench.tps', 'higher'],
    ['typed card: ratio service / pgbench', 'ratio', 'higher'],
    ['saved card: payments/s', 'savedCardOffSession.service.okPerS', 'higher'],
    ['saved card: pgbench tps', 'savedCardOffSession.pgbench.tps', 'higher'],
    ['saved card: ratio service / pgbench', 'savedCardOffSession.ratio', 'higher'],
  ],
  webhooks: [
    ['deliveries/s (backlog)', 'throughput.deliveriesPerS', 'higher'],
    ['backlog sent and recorded, ms', 'throughput.recordedMs', 'lower'],
    ['commit → first attempt p50 ms', 'latencyMs.p50', 'lower'],
    ['ratio deliveries / receiver ceiling', 'ratio', 'higher'],
  ],
};

const at = (o: unknown, path: string): number => Number(path.split('.').reduce<unknown>((x, k) => (x as Record<string, unknown> | undefined)?.[k], o));

/** Rows of `label, empty, preloaded, preloaded/empty, verdict`; the passes benchmark names its own figures. */
export function compareHistory(empty: BenchResult, full: BenchResult, tolerance = 0.1) {
  const figures: Figure[] =
    FIGURES[empty.name] ?? Object.keys((empty.details.passes as Record<string, unknown>) ?? {}).map((k): Figure => [`${k} ms`, `passes.${k}.medianMs`, 'lower']);
  return figures.map(([label, path, better]) => {
    const a = at(empty.details, path);
    const b = at(full.details, path);
    const change = b / a;
    const flat = better === 'higher' ? change >= 1 - tolerance : change <= 1 + tolerance;
    return { label, empty: a, preloaded: b, change, better, flat };
  });
}

export function printComparison(empty: BenchResult, full: BenchResult, history: HistoryReport | undefined): string {
  const rows = compareHistory(empty, full);
  const fmt = (x: number) => (Number.isFinite(x) ? (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2)) : String(x));
  const width = Math.max(6, ...rows.map((r) => r.label.length));
  const out = [
    `\n${empty.name}: empty database against ${history ? `${history.units} units of history (${history.rows.events} events)` : 'history'}`,
    `  ${'figure'.padEnd(width)}  ${'empty'.padStart(9)}  ${'history'.padStart(9)}  ${'history/empty'.padStart(13)}  within 10%`,
  ];
  for (const r of rows) {
    out.push(`  ${r.label.padEnd(width)}  ${fmt(r.empty).padStart(9)}  ${fmt(r.preloaded).padStart(9)}  ${fmt(r.change).padStart(13)}  ${r.flat ? 'yes' : `NO (${r.better} is better)`}`);
  }
  return out.join('\n') + '\n';
}
