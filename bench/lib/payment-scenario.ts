// One payment scenario measured the way bench/payments.ts measures each: the service's load and
// pgbench on the same statements alternate for the given rounds (each kind warmed up once), with
// the CPU of each party; then its figures as rows of the result table, checks and details.
import { checkpoint, type BenchDatabase } from './database.js';
import type { PgbenchResult } from './pgbench.js';
import { cpuMeter, meanCpu, ownBackends, type CpuUsage } from './cpu.js';
import { loadDetails, round, roundAll, summarise } from './stats.js';
import type { LoadResult } from './payment-load.js';
import type { BenchOptions, BenchResult, Check } from './types.js';

export const TARGET_P99_MS = 25;
/** Issue 29's targets: payments at least 0.8× pgbench on the same statements, node's CPU per payment at most 0.3× PostgreSQL's. */
export const TARGET_RATIO = 0.8;
export const TARGET_NODE_SHARE = 0.3;

export interface Scenario {
  /** Short name in the rows and logs, e.g. `typed card`. */
  label: string;
  load(durationS: number): Promise<LoadResult>;
  /** Called once, after the first measured service phase (so it can sample what the service stored). */
  pgbench(): Promise<(durationS: number) => Promise<PgbenchResult>>;
}

export interface Measured {
  rounds: LoadResult[];
  pgRounds: PgbenchResult[];
  serviceCpu: CpuUsage[];
  pgCpu: CpuUsage[];
  /** 201s in every phase, the warm-up included. */
  sent201: number;
  pgbenchTransactions: number;
}

export async function measureScenario(opts: BenchOptions, db: BenchDatabase, servicePid: number, s: Scenario, log: (msg: string) => void): Promise<Measured> {
  const m: Measured = { rounds: [], pgRounds: [], serviceCpu: [], pgCpu: [], sent201: 0, pgbenchTransactions: 0 };
  if (opts.warmupS > 0) {
    log(`${s.label}: warm-up ${opts.warmupS} s`);
    const warm = await s.load(opts.warmupS);
    m.sent201 += warm.statuses['201'] ?? 0;
    // A short warm-up on a busy machine may end before any answer; answers that are all errors stop the run.
    if (!warm.statuses['201'] && (warm.latencies.length > 0 || warm.errors > 0)) {
      throw new Error(`${s.label}: no 201 during warm-up (${JSON.stringify(warm.statuses)}, errors ${warm.errors}, timeouts ${warm.timeouts})`);
    }
    if (!warm.statuses['201']) log(`${s.label}: no answer within the ${opts.warmupS} s warm-up`);
  }
  let pgbench: ((durationS: number) => Promise<PgbenchResult>) | undefined;
  for (let round = 1; round <= opts.rounds; round++) {
    await checkpoint(opts.adminUrl);
    log(`${s.label}: autocannon ${opts.connections} connections, ${opts.durationS} s (round ${round}/${opts.rounds})`);
    const meter = cpuMeter(servicePid);
    const marking = ownBackends(db, meter, 1000);
    const load = await s.load(opts.durationS);
    await marking;
    m.serviceCpu.push(meter.stop());
    m.rounds.push(load);
    m.sent201 += load.statuses['201'] ?? 0;
    if (!pgbench) {
      const run = await s.pgbench();
      pgbench = async (durationS) => {
        const result = await run(durationS);
        m.pgbenchTransactions += result.transactions;
        return result;
      };
      if (opts.warmupS > 0) {
        log(`${s.label}: pgbench warm-up ${opts.warmupS} s`);
        await pgbench(opts.warmupS);
      }
    }
    await checkpoint(opts.adminUrl);
    log(`${s.label}: pgbench ${opts.connections} clients, ${opts.durationS} s`);
    const pgMeter = cpuMeter();
    const pgMarking = ownBackends(db, pgMeter, 1000);
    m.pgRounds.push(await pgbench(opts.durationS));
    await pgMarking;
    m.pgCpu.push(pgMeter.stop());
  }
  return m;
}

const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
const sum = <T>(xs: T[], f: (x: T) => number) => xs.reduce((a, x) => a + f(x), 0);
const otherLoad = (c: CpuUsage) => (c.foreignCores ?? 0) + (c.postgresOtherCores ?? 0);

export type Figures = Pick<BenchResult, 'rows' | 'checks' | 'notes' | 'details'> & { disturbed: boolean };

/** The scenario's rows (labels prefixed with its label), checks, notes and details. */
export function figures(label: string, m: Measured, script: string): Figures {
  const ok = sum(m.rounds, (r) => r.statuses['201'] ?? 0);
  const requests = sum(m.rounds, (r) => r.latencies.length);
  const errors = sum(m.rounds, (r) => r.errors + r.timeouts);
  const okPerS = ok / sum(m.rounds, (r) => r.durationS);
  const latency = summarise(m.rounds.flatMap((r) => r.latencies));
  const tps = sum(m.pgRounds, (p) => p.tps * p.durationS) / sum(m.pgRounds, (p) => p.durationS);
  const pgLatency = summarise(m.pgRounds.flatMap((p) => p.latencies));
  const ratio = okPerS / tps;
  const statuses: Record<string, number> = {};
  for (const r of m.rounds) for (const [code, n] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  const non201 = requests - ok + errors;
  const svc = meanCpu(m.serviceCpu);
  const pgc = meanCpu(m.pgCpu);
  const nodeMs = ((svc.processCores ?? NaN) / okPerS) * 1000;
  const postgresMs = ((svc.postgresCores ?? NaN) / okPerS) * 1000;
  const pgbenchPostgresMs = ((pgc.postgresCores ?? NaN) / tps) * 1000;
  const phases = [...m.serviceCpu, ...m.pgCpu];
  const disturbed = phases.some((c) => otherLoad(c) > 0.3);
  const checks: Check[] = [
    { name: `${label}: service p99 latency`, target: `< ${TARGET_P99_MS} ms`, actual: `${fmt(latency.p99)} ms`, pass: latency.p99 < TARGET_P99_MS },
    { name: `${label}: ratio service / pgbench`, target: `>= ${TARGET_RATIO}`, actual: fmt(ratio, 3), pass: ratio >= TARGET_RATIO },
    // No answer at all is a failure too (a service that hangs answers nothing wrong).
    { name: `${label}: non-201 responses and errors`, target: '0 (and some 201)', actual: String(non201), pass: non201 === 0 && ok > 0 },
    { name: `${label}: node cpu / postgres cpu per payment`, target: `<= ${TARGET_NODE_SHARE}`, actual: fmt(nodeMs / postgresMs, 2), pass: nodeMs / postgresMs <= TARGET_NODE_SHARE },
  ];
  const statusText = Object.entries(statuses).map(([c, n]) => `${c}×${n}`).join(' ');
  return {
    rows: [
      { label: `${label}: payments/s (201)`, value: fmt(okPerS) },
      { label: `${label}: p50 / p99`, value: `${fmt(latency.p50, 2)} / ${fmt(latency.p99, 2)} ms`, target: `p99 < ${TARGET_P99_MS} ms`, pass: checks[0]!.pass },
      { label: `${label}: pgbench tps (same SQL)`, value: fmt(tps) },
      { label: `${label}: pgbench p50 / p99`, value: `${fmt(pgLatency.p50, 2)} / ${fmt(pgLatency.p99, 2)} ms` },
      { label: `${label}: ratio service / pgbench`, value: fmt(ratio, 3), target: `>= ${TARGET_RATIO}`, pass: checks[1]!.pass },
      { label: `${label}: cpu per payment`, value: `node ${fmt(nodeMs, 2)} ms, pg ${fmt(postgresMs, 2)} ms; pgbench's pg ${fmt(pgbenchPostgresMs, 2)} ms` },
      { label: `${label}: node cpu / postgres cpu`, value: fmt(nodeMs / postgresMs, 2), target: `<= ${TARGET_NODE_SHARE}`, pass: checks[3]!.pass },
      { label: `${label}: responses`, value: `${statusText || 'none'}${errors ? ` errors×${errors}` : ''}`, target: 'all 201', pass: checks[2]!.pass },
    ],
    checks,
    notes: [
      `${label}, cpu in the service phase: machine ${fmt(svc.machineCores ?? NaN, 2)} cores busy, service ${fmt(svc.processCores ?? NaN, 2)}, postgres ${fmt(svc.postgresCores ?? NaN, 2)}, autocannon ${fmt(svc.loadGeneratorCores, 2)}, other ${fmt(otherLoad(svc), 2)}`,
      `${label}, cpu in the pgbench phase: machine ${fmt(pgc.machineCores ?? NaN, 2)} cores busy, postgres ${fmt(pgc.postgresCores ?? NaN, 2)}, pgbench ${fmt(pgc.pgbenchCores ?? NaN, 2)}, other ${fmt(otherLoad(pgc), 2)}`,
      ...(disturbed ? [`WARNING (${label}): other work used up to ${fmt(Math.max(...phases.map(otherLoad)), 2)} cores during a phase; the figures are skewed by it — rerun on a quieter machine`] : []),
    ],
    disturbed,
    details: {
      ratio: round(ratio, 3),
      disturbed,
      service: {
        ...loadDetails(okPerS, requests, latency, statuses, errors),
        cpu: svc,
        nodeMsPerPayment: round(nodeMs, 3),
        postgresMsPerPayment: round(postgresMs, 3),
      },
      pgbench: {
        tps: round(tps),
        latencyMs: roundAll(pgLatency),
        failed: sum(m.pgRounds, (p) => p.failed),
        cpu: pgc,
        postgresMsPerPayment: round(pgbenchPostgresMs, 3),
        command: m.pgRounds[0]?.command,
        script,
      },
    },
  };
}
