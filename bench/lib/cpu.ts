// CPU accounting from /proc (Linux): how much of the machine each party used during a phase.
// On a 2-core box shared by load generator, service and PostgreSQL this explains most results.
// Processes are sampled every 250 ms, so short-lived ones (pgbench and its backends, which exit
// with the run) are counted up to their last sample.
import fs from 'node:fs';
import os from 'node:os';
import type { BenchDatabase } from './database.js';

const TICK_S = 0.01; // USER_HZ is 100 on every mainstream Linux
const WATCHED = ['postgres', 'pgbench'] as const;

interface ProcSample {
  comm: string;
  ppid: number;
  ticks: number;
}

function readProc(pid: string): ProcSample | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    return { comm, ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) }; // utime + stime
  } catch {
    return undefined;
  }
}

function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    const total = v.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

export interface CpuUsage {
  /** Cores busy on the whole machine (0..cores), whoever used them. */
  machineCores?: number;
  /** Cores used by the watched process (the service). */
  processCores?: number;
  /** Cores used by this benchmark's postgres backends (those connected to its database). */
  postgresCores?: number;
  /** Cores used by every other postgres process: other databases' backends, walwriter, checkpointer, … */
  postgresOtherCores?: number;
  /** Cores used by pgbench processes. */
  pgbenchCores?: number;
  /** Cores used by this process (autocannon runs in it). */
  loadGeneratorCores: number;
  /** Busy cores used by no postgres process and none of ours: other work on a shared machine. */
  foreignCores?: number;
}

export interface CpuMeter {
  /** Declares postgres backend pids as this benchmark's own (from pg_stat_activity). */
  ownPostgres(pids: number[]): void;
  stop(): CpuUsage;
}

/** Starts measuring; call stop() at the end of the phase. */
export function cpuMeter(pid?: number): CpuMeter {
  const t0 = process.hrtime.bigint();
  const self0 = process.cpuUsage();
  const m0 = machineTicks();
  // pid -> [ticks at first sight (0 if born during the phase), ticks at last sight]
  const seen = new Map<string, { comm: string; first: number; last: number }>();
  // The service process and its direct children (node:cluster workers) count as the service.
  const label = (e: string, sample: ProcSample): string | undefined => {
    if (pid !== undefined && (e === String(pid) || sample.ppid === pid)) return 'service';
    return (WATCHED as readonly string[]).includes(sample.comm) ? sample.comm : undefined;
  };
  const ignored = new Set<string>();
  const sample = (initial: boolean) => {
    let entries: string[] = [];
    try {
      entries = fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e));
    } catch {
      return;
    }
    for (const e of entries) {
      if (ignored.has(e)) continue;
      const known = seen.get(e);
      const s = readProc(e);
      if (!s) continue;
      if (known) {
        known.last = s.ticks;
        continue;
      }
      const comm = label(e, s);
      // A process first seen after the start was born during the phase: all its time counts.
      if (comm) seen.set(e, { comm, first: initial ? s.ticks : 0, last: s.ticks });
      else ignored.add(e);
    }
  };
  sample(true);
  const timer = setInterval(() => sample(false), 250);
  timer.unref();
  const own = new Set<string>();
  const ownPostgres = (pids: number[]) => {
    for (const p of pids) {
      own.add(String(p));
      const s = seen.get(String(p));
      if (s && s.comm === 'postgres') s.comm = 'postgres-own';
    }
  };
  const stop = (): CpuUsage => {
    sample(false);
    clearInterval(timer);
    const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
    const self = process.cpuUsage(self0);
    const m1 = machineTicks();
    ownPostgres([...own].map(Number));
    const used = (comm: string) => {
      let ticks = 0;
      for (const s of seen.values()) if (s.comm === comm) ticks += s.last - s.first;
      return (ticks * TICK_S) / wallS;
    };
    const out: CpuUsage = { loadGeneratorCores: (self.user + self.system) / 1e6 / wallS };
    if (m0 && m1 && m1.total > m0.total) out.machineCores = ((m1.busy - m0.busy) / (m1.total - m0.total)) * os.availableParallelism();
    if (pid !== undefined) out.processCores = used('service');
    out.postgresCores = used('postgres-own');
    out.postgresOtherCores = used('postgres');
    out.pgbenchCores = used('pgbench');
    if (out.machineCores !== undefined) {
      const accounted = (out.processCores ?? 0) + out.postgresCores + out.postgresOtherCores + out.pgbenchCores + out.loadGeneratorCores;
      out.foreignCores = Math.max(0, out.machineCores - accounted);
    }
    return out;
  };
  return { ownPostgres, stop };
}

/** Busy cores on the whole machine over the next `ms` milliseconds. */
export async function machineBusyCores(ms = 2000): Promise<number | undefined> {
  const a = machineTicks();
  await new Promise((r) => setTimeout(r, ms));
  const b = machineTicks();
  if (!a || !b || b.total <= a.total) return undefined;
  return ((b.busy - a.busy) / (b.total - a.total)) * os.availableParallelism();
}

/** Waits (up to maxS) until the machine has been nearly idle for one 3-second sample. */
export async function waitForQuiet(maxS: number, thresholdCores = 0.3): Promise<{ busy: number | undefined; waitedS: number }> {
  const t0 = Date.now();
  for (;;) {
    const busy = await machineBusyCores(3000);
    const waitedS = (Date.now() - t0) / 1000;
    if (busy === undefined || busy <= thresholdCores || waitedS >= maxS) return { busy, waitedS };
  }
}

/** The mean of per-phase CPU figures (phases of equal length). */
export function meanCpu(list: CpuUsage[]): CpuUsage {
  const keys = new Set(list.flatMap((c) => Object.keys(c))) as Set<keyof CpuUsage>;
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = list.reduce((a, c) => a + (c[k] ?? 0), 0) / list.length;
  return out as unknown as CpuUsage;
}

/** Marks the database's backends as the measured party's postgres, once the load is under way. */
export async function ownBackends(db: BenchDatabase, meter: CpuMeter, afterMs: number): Promise<void> {
  await new Promise((r) => setTimeout(r, afterMs));
  const rows = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()').catch(() => []);
  meter.ownPostgres(rows.map((r) => r.pid));
}
