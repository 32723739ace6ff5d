// The backtest (docs/backtest.md): the seed's stream (model.ts) through each strategy, without and
// with cascade (run.ts), one after the other on one embedded database emptied between them, and
// the table of what each did (report.ts).
import type { Database } from '../../src/storage/db.js';
import { paymentStream } from './model.js';
import { rowOf, table, type Row } from './report.js';
import { runStrategy, STRATEGIES } from './run.js';

export const DEFAULT_PAYMENTS = 1000;

export async function backtest(opts: { seed: number; payments: number; database: Database }): Promise<{ rows: Row[]; text: string }> {
  const stream = paymentStream(opts.seed, opts.payments);
  const rows: Row[] = [];
  for (const strategy of STRATEGIES) {
    for (const cascade of [false, true]) rows.push(rowOf(await runStrategy(opts.seed, stream, { strategy, cascade }, opts.database)));
  }
  return { rows, text: table(opts.seed, stream, rows) };
}
