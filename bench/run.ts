// `npm run bench [-- <name> …]`: runs the benchmarks in sequence (all of them without names),
// prints one table per benchmark and writes bench/results/latest.json. A script, not a test: it
// exits 0 when the measurements were taken, whatever they show (BENCH_STRICT=1: exit 3 on FAIL),
// and 1 when a benchmark could not run.
//
// Options (environment):
//   BENCH_DURATION_S        measured seconds per phase            (default 10)
//   BENCH_WARMUP_S          unmeasured seconds before each phase  (default 3)
//   BENCH_ROUNDS            alternate service and pgbench phases this many times and pool the
//                           figures (default 1); more rounds spread a noisy neighbour's bursts
//   BENCH_CONNECTIONS       HTTP connections = pgbench clients    (default 32)
//   BENCH_DATABASE_URL      admin URL; a bench_<random> database is created and dropped through it
//                           (default postgres://postgres@127.0.0.1:5432/test)
//   BENCH_PGBENCH_THREADS   pgbench -j                            (default 2)
//   BENCH_PGBENCH_PROTOCOL  pgbench -M: extended | prepared | simple (default: what the measured path uses)
//   BENCH_SERVICE_NODE_ARGS extra node flags for the service, e.g. "--cpu-prof --cpu-prof-dir=bench/results/prof"
//   BENCH_SERVICE_ENTRY     service entry file (default src/main.ts)
//   BENCH_LOG_LEVEL         the service's LOG_LEVEL (default warn; info logs one line per request)
//   BENCH_REDIS_URL         give the service a Redis rate limiter (default: in-process)
//   BENCH_WAIT_QUIET_S      wait up to this long for the (shared) machine to be idle first (default 0)
//   BENCH_STRICT            1: exit code 3 when a target is missed
//   BENCH_ROUTING_STRATEGY  payments: pay under one rule of this strategy (bench/payments.ts)
//   BENCH_HISTORY           N units of history (200k, 2m): each benchmark runs on an empty database, then
//                           on one preloaded with them (bench/lib/history.ts), and the figures are compared
// Service settings such as DATABASE_POOL_SIZE are passed through from the environment.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { installExitHandlers, runCleanup } from './lib/cleanup.js';
import { serverInfo } from './lib/database.js';
import { machineBusyCores, waitForQuiet } from './lib/cpu.js';
import { ROOT } from './lib/service.js';
import type { BenchOptions, BenchResult, Benchmark } from './lib/types.js';
import { compareHistory, parseHistoryUnits, printComparison, setHistoryUnits } from './lib/history-run.js';
import type { HistoryReport } from './lib/history.js';

// In the order they run. Later milestones add theirs here (payments, webhook delivery, …).
const BENCHMARKS: Record<string, () => Promise<Benchmark>> = {
  orders: async () => (await import('./orders.js')).benchmark,
  webhooks: async () => (await import('./webhooks.js')).benchmark,
  payments: async () => (await import('./payments.js')).benchmark,
  passes: async () => (await import('./passes.js')).benchmark,
};

function intEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  return value;
}

function options(): BenchOptions {
    const protocol = process.env.BENCH_PGBENCH_PROTOCOL || undefined;
  if (protocol !== undefined && protocol !== 'simple' && protocol !== 'extended' && protocol !== 'prepared') {
    throw new Error(`BENCH_PGBENCH_PROTOCOL must be simple, extended or prepared, got ${JSON.stringify(protocol)}`);
  }
  return {
    durationS: intEnv('BENCH_DURATION_S', 10, 1),
    warmupS: intEnv('BENCH_WARMUP_S', 3, 0),
    rounds: intEnv('BENCH_ROUNDS', 1, 1),
    connections: intEnv('BENCH_CONNECTIONS', 32, 1),
    pgbenchThreads: intEnv('BENCH_PGBENCH_THREADS', 2, 1),
    pgbenchProtocol: protocol,
    adminUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test',
    serviceNodeArgs: (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
    serviceEntry: process.env.BENCH_SERVICE_ENTRY || 'src/main.ts',
    serviceLogLevel: process.env.BENCH_LOG_LEVEL || 'warn',
  };
}

/** Which code was measured: the commit and the uncommitted files under src/ (read-only git). */
function sourceState(): { commit?: string; uncommittedSrcFiles?: string[] } {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', timeout: 5000 }).trim();
    return { commit: git('rev-parse', 'HEAD'), uncommittedSrcFiles: git('status', '--porcelain', '--', 'src').split('\n').filter(Boolean) };
  } catch {
    return {};
  }
}

function printResult(r: BenchResult): void {
  const width = [
    Math.max(6, ...r.rows.map((x) => x.label.length)),
    Math.max(5, ...r.rows.map((x) => x.value.length)),
    Math.max(6, ...r.rows.map((x) => (x.target ?? '').length)),
  ] as const;
  const line = (a: string, b: string, c: string, d: string) =>
    `  ${a.padEnd(width[0])}  ${b.padStart(width[1])}  ${c.padEnd(width[2])}  ${d}`.trimEnd();
  const out = [`\n${r.name}: ${r.title}`, line('metric', 'value', 'target', ''), line('-'.repeat(width[0]), '-'.repeat(width[1]), '-'.repeat(width[2]), '')];
  for (const row of r.rows) out.push(line(row.label, row.value, row.target ?? '', row.pass === undefined ? '' : row.pass ? 'PASS' : 'FAIL'));
  const failed = r.checks.filter((c) => !c.pass).map((c) => `${c.name}: ${c.actual} (target ${c.target})`);
  out.push(`  result: ${r.pass ? 'PASS' : `FAIL — ${failed.join('; ')}`}`);
  for (const note of r.notes ?? []) out.push(`  ${note}`);
  process.stdout.write(out.join('\n') + '\n');
}

/** The version of the node the service runs on (BENCH_SERVICE_NODE, else this one). */
function serviceNodeVersion(): string {
  const node = process.env.BENCH_SERVICE_NODE;
  return node ? execFileSync(node, ['--version'], { encoding: 'utf8' }).trim() : process.version;
}

async function main(): Promise<number> {
  const names = process.argv.slice(2).filter((a) => a !== '--');
  const unknown = names.filter((n) => !(n in BENCHMARKS));
  if (unknown.length) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}; available: ${Object.keys(BENCHMARKS).join(', ')}\n`);
    return 2;
  }
  const selected = names.length ? names : Object.keys(BENCHMARKS);
  const opts = options();
  const historyUnits = parseHistoryUnits(process.env.BENCH_HISTORY);
  // Two load phases with warm-ups per benchmark, plus set-up and teardown.
  const waitQuietS = intEnv('BENCH_WAIT_QUIET_S', 0, 0);
  // With BENCH_HISTORY each benchmark runs twice, the second after a preload (allowed 5 ms a unit).
  const perBenchmarkS = 2 * (opts.warmupS + opts.rounds * opts.durationS) + 180;
  installExitHandlers((waitQuietS + 10 + selected.length * (historyUnits ? 2 * perBenchmarkS + historyUnits * 0.005 : perBenchmarkS)) * 1000);

  const quiet = waitQuietS > 0 ? await waitForQuiet(waitQuietS) : { busy: await machineBusyCores(1000), waitedS: 0 };
  const startedAt = new Date();
  const server = await serverInfo(opts.adminUrl);
  const machine = {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverage1m: os.loadavg()[0],
    busyCoresBeforeStart: quiet.busy,
    source: sourceState(),
    node: process.version,
    serviceNode: serviceNodeVersion(),
    postgres: server,
  };
  process.stdout.write(
    `bench: ${selected.join(', ')} — ${opts.connections} connections, ${opts.rounds > 1 ? `${opts.rounds} × ` : ''}${opts.durationS} s (+${opts.warmupS} s warm-up), ` +
      `${machine.cpus} cpus (${quiet.busy?.toFixed(2) ?? '?'} busy before start${quiet.waitedS ? ` after waiting ${Math.round(quiet.waitedS)} s` : ''}), ` +
      `service on node ${machine.serviceNode}, PostgreSQL ${server.server_version} ` +
      `(synchronous_commit=${server.synchronous_commit}, fsync=${server.fsync})\n`,
  );

  const results: BenchResult[] = [];
  const failures: { name: string; error: string }[] = [];
  const comparisons: Record<string, ReturnType<typeof compareHistory>> = {};
  for (const name of selected) {
    // BENCH_HISTORY: the empty database first, then the preloaded one, then the two side by side.
    const runs = historyUnits ? [0, historyUnits] : [0];
    const pair: BenchResult[] = [];
    for (const units of runs) {
      setHistoryUnits(units);
      try {
        const benchmark = await BENCHMARKS[name]!();
        const result = await benchmark.run(opts);
        if (historyUnits) result.title += units ? ` — over ${units} units of history` : ' — empty database';
        results.push(result);
        pair.push(result);
        printResult(result);
      } catch (err) {
        const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
        failures.push({ name: units ? `${name} (history)` : name, error });
        process.stderr.write(`\n${name}: could not run:\n${error}\n`);
      } finally {
        await runCleanup();
      }
    }
    if (pair.length === 2) {
      comparisons[name] = compareHistory(pair[0]!, pair[1]!);
      process.stdout.write(printComparison(pair[0]!, pair[1]!, pair[1]!.details.history as HistoryReport | undefined));
    }
  }

  const record = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    command: `${historyUnits ? `BENCH_HISTORY=${historyUnits} ` : ''}npm run bench${names.length ? ` -- ${names.join(' ')}` : ''}`,
    history: historyUnits ? { units: historyUnits, comparisons } : undefined,
    options: opts,
    machine,
    results: results.map((r) => ({ name: r.name, pass: r.pass, checks: r.checks, ...r.details })),
    failures,
  };
  const dir = path.join(ROOT, 'bench', 'results');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'latest.json'), JSON.stringify(record, null, 2) + '\n');
  await fs.appendFile(path.join(dir, 'history.jsonl'), JSON.stringify(record) + '\n');
  process.stdout.write(`\nresults: ${path.relative(process.cwd(), path.join(dir, 'latest.json'))}\n`);

  if (failures.length) return 1;
  if (process.env.BENCH_STRICT === '1' && results.some((r) => !r.pass)) return 3;
  return 0;
}

main()
  .then((code) => process.exit(code))
  .catch(async (err) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await runCleanup();
    process.exit(1);
  });
