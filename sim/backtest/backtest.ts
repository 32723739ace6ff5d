// The backtest (docs/backtest.md): the seed's stream (model.ts) through each strategy, without and
// with cascade (run.ts), one after the other on one service, and the table of what each did (report.ts).
import type { Database } from '../../src/storage/db.js';
import { paymentStream } from './model.js';
import { rowOf, table, type Row } from './report.js';
import { closeBench, runStrategy, startBench, STRATEGIES, type StrategyResult } from './run.js';

export const DEFAULT_PAYMENTS = 300;

export async function backtest(opts: { seed: number; payments: number; database: Database }): Promise<{ rows: Row[]; results: StrategyResult[]; text: string }> {
  const stream = paymentStream(opts.seed, opts.payments);
  const results: StrategyResult[] = [];
  const bench = await startBench(opts.seed, stream, opts.database);
  try {
    for (const strategy of STRATEGIES) {
      for (const cascade of [false, true]) results.push(await runStrategy(bench, stream, { strategy, cascade }));
    }
  } finally {
    await closeBench(bench);
  }
  const rows = results.map(rowOf);
  return { rows, results, text: table(opts.seed, stream, rows) };
}
