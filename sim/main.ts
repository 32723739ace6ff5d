// npm run simulate -- --seeds N [--seed S] [--steps K] [--plant <defect>] [--trace]
// Runs seeds S, S+1, … S+N-1; prints one line per seed, then `digest <hex>` over all of them. Exits
// 1 at the first seed that breaks an invariant, naming it and the seed that replays it.
import { PLANTS, plant, type Plant } from '../src/kernel/plants.js';
import { runSeed } from './run.js';
import { openSimDatabase } from './service.js';
import crypto from 'node:crypto';
import { appendFileSync } from 'node:fs';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const seeds = Number(arg('seeds') ?? 1);
const first = Number(arg('seed') ?? 1);
const steps = Number(arg('steps') ?? 200);
const planted = arg('plant');
if (planted !== undefined && !(PLANTS as readonly string[]).includes(planted)) {
  console.error(`--plant must be one of ${PLANTS.join(', ')}`);
  process.exit(2);
}
if (planted) plant(planted as Plant);

const database = await openSimDatabase();
const all = crypto.createHash('sha256');
const started = Date.now();
for (let seed = first; seed < first + seeds; seed++) {
  const t0 = Date.now();
  const result = await runSeed({ seed, steps, database, dump: arg('dump') ? (l) => appendFileSync(arg('dump')!, `${l}\n`) : undefined, trace: process.argv.includes('--trace') ? (l) => console.log(`  ${l}`) : undefined });
  const ms = Date.now() - t0;
  if (!result.ok) {
    const f = result.failure!;
    console.log(`seed ${seed}: FAILED ${f.invariant} at step ${f.step} (${ms} ms)`);
    for (const d of f.details.slice(0, 10)) console.log(`  ${d}`);
    console.log(`replay: npm run simulate -- --seeds 1 --seed ${seed} --steps ${steps}${planted ? ` --plant ${planted}` : ''} --trace`);
    console.log(`digest ${result.digest}`);
    process.exit(1);
  }
  all.update(result.digest);
  console.log(`seed ${seed}: ok, ${steps} steps, digest ${result.digest.slice(0, 16)} (${ms} ms)`);
}
const minutes = (Date.now() - started) / 60_000;
console.log(`${seeds} seeds × ${steps} steps: all invariants held; ${(seeds / minutes).toFixed(1)} seeds per minute`);
console.log(`digest ${seeds === 1 ? '' : ''}${all.digest('hex')}`);
process.exit(0);
