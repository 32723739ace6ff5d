// npm run backtest [-- --seed S --payments N]
// Replays the seed's stream of card payments through each routing strategy, without and with
// cascade, and prints one table (docs/backtest.md). The same seed prints the same bytes.
import { openSimDatabase } from '../service.js';
import { backtest, DEFAULT_PAYMENTS } from './backtest.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const seed = Number(arg('seed') ?? 7);
const payments = Number(arg('payments') ?? DEFAULT_PAYMENTS);
if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(payments) || payments < 1) {
  console.error('usage: npm run backtest -- [--seed S] [--payments N] (integers, N ≥ 1)');
  process.exit(2);
}

const database = await openSimDatabase();
const { text } = await backtest({ seed, payments, database });
console.log(text);
await database.close();
process.exit(0);
