// Two checkouts' services side by side on one database, under the orders' load in alternating short
// turns: node's CPU per order and orders/s of each, turn by turn, and the median of their ratios.
// On a shared machine whose speed drifts by a fifth within minutes, back-to-back benchmark runs
// cannot tell a change of a few per cent; paired turns a few seconds apart can. Both checkouts must
// share the database schema (this checkout's migrations run), and the other needs node_modules.
// Run: npx tsx bench/tools/ab-orders.ts <other checkout> [turns=8] [seconds=3]
// BENCH_AB_NODE_ARGS gives this checkout's service node flags the other's has not (e.g. a GC setting),
// BENCH_AB_NODE another node binary (e.g. Node 24; BENCH_SERVICE_NODE would apply to both); the
// other checkout may then be this one's own worktree.
import path from 'node:path';
import { createBenchDatabase } from '../lib/database.js';
import { setUpTenant } from '../lib/tenant.js';
import { installExitHandlers, runCleanup, runScript } from '../lib/cleanup.js';
import { startServiceProcess, type ServiceProcess } from '../lib/service.js';
import { runHttpLoad } from '../lib/http-load.js';
import { cpuMeter } from '../lib/cpu.js';
import { ORDER_BODY } from '../orders-scripts.js';

const [otherArg, turnsArg, secondsArg] = process.argv.slice(2);
if (!otherArg) {
  process.stderr.write('usage: tsx bench/tools/ab-orders.ts <other checkout> [turns] [seconds]\n');
  process.exit(2);
}
const other = otherArg;
const turns = Number(turnsArg ?? 8);
const seconds = Number(secondsArg ?? 3);
if (!(Number.isInteger(turns) && turns > 0 && seconds > 0)) {
  process.stderr.write('turns must be a whole number above 0, seconds a number above 0\n');
  process.exit(2);
}
const adminUrl = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!;
};

async function main() {
  installExitHandlers(30 * 60_000);
  const db = await createBenchDatabase(adminUrl);
  const tenant = await setUpTenant(db, 'a/b');
  const env = { LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn' };
  const services: [string, ServiceProcess][] = [
    [path.basename(path.resolve(other)), await startServiceProcess({ databaseUrl: db.url, env, root: path.resolve(other) })],
    ['this checkout', await startServiceProcess({ databaseUrl: db.url, env, nodeArgs: process.env.BENCH_AB_NODE_ARGS?.split(/\s+/).filter(Boolean), node: process.env.BENCH_AB_NODE || undefined })],
  ];
  const load = (service: ServiceProcess, durationS: number) =>
    runHttpLoad({
      url: `${service.url}/v1/payment-orders`,
      method: 'POST',
      connections: 32,
      durationS,
      headers: { authorization: `Bearer ${tenant.secret}`, 'content-type': 'application/json', 'idempotency-key': 'ab-[<id>]' },
      body: JSON.stringify(ORDER_BODY),
    });
  for (const [, service] of services) await load(service, 3);
  const cpu: number[][] = [[], []];
  const rate: number[][] = [[], []];
  for (let turn = 0; turn < turns; turn++) {
    // Alternating which goes first, so that neither always follows the other's warm caches.
    for (const i of turn % 2 ? [1, 0] : [0, 1]) {
      const meter = cpuMeter(services[i]![1].pid);
      const r = await load(services[i]![1], seconds);
      const used = meter.stop();
      cpu[i]!.push(((used.processCores ?? NaN) / r.okPerS) * 1000);
      rate[i]!.push(r.okPerS);
    }
    process.stdout.write(
      `turn ${turn + 1}: ${services.map(([name], i) => `${name} ${cpu[i]![turn]!.toFixed(3)} ms/order ${rate[i]![turn]!.toFixed(0)}/s`).join(' | ')}\n`,
    );
  }
  const cpuRatios = cpu[1]!.map((c, t) => c / cpu[0]![t]!);
  const rateRatios = rate[1]!.map((r, t) => r / rate[0]![t]!);
  process.stdout.write(
    `median of this checkout / ${services[0]![0]}: node CPU per order ${median(cpuRatios).toFixed(3)} (turns ${cpuRatios.map((x) => x.toFixed(2)).join(' ')}), ` +
      `orders/s ${median(rateRatios).toFixed(3)} (turns ${rateRatios.map((x) => x.toFixed(2)).join(' ')})\n`,
  );
  for (const [, service] of services) await service.stop();
  await runCleanup();
}

runScript(main);
