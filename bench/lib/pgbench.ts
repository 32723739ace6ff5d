// pgbench with a custom script: the database's own ceiling for a transaction, measured with the
// per-transaction log so that its latency percentiles can be set beside the service's.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { onCleanup, onExitKill, withTimeout } from './cleanup.js';
import { summarise, type LatencySummary } from './stats.js';

export interface PgbenchOptions {
  url: string;
  script: string;
  clients: number;
  threads: number;
  durationS: number;
  /** -D name=value; with the extended protocol these travel as bind parameters, like the service's. */
  vars?: Record<string, string>;
  /** simple | extended | prepared (default extended: unnamed statements, parsed per execution, like node-postgres). */
  protocol?: 'simple' | 'extended' | 'prepared';
}

export interface PgbenchResult {
  tps: number;
  transactions: number;
  failed: number;
  latencyMs: LatencySummary;
  durationS: number;
  command: string;
  output: string;
  /** Every transaction's latency in ms (for pooling rounds). */
  latencies: number[];
}

export async function runPgbench(opts: PgbenchOptions): Promise<PgbenchResult> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-pgbench-'));
  const removeDir = onCleanup(`remove ${dir}`, () => fs.rm(dir, { recursive: true, force: true }));
  try {
    const scriptPath = path.join(dir, 'script.sql');
    await fs.writeFile(scriptPath, opts.script);
    const url = new URL(opts.url);
    const args = [
      '-n',
      '-c', String(opts.clients),
      '-j', String(opts.threads),
      '-T', String(opts.durationS),
      '-M', opts.protocol ?? 'extended',
      '-l', `--log-prefix=${path.join(dir, 'txlog')}`,
      '-f', scriptPath,
      ...Object.entries(opts.vars ?? {}).flatMap(([k, v]) => ['-D', `${k}=${v}`]),
      '-h', url.hostname,
      '-p', url.port || '5432',
      '-U', decodeURIComponent(url.username || 'postgres'),
      url.pathname.slice(1),
    ];
    const env = { ...process.env, ...(url.password ? { PGPASSWORD: decodeURIComponent(url.password) } : {}) };
    const child = spawn('pgbench', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const unregisterKill = onExitKill(() => child.kill('SIGKILL'));
    // On an interrupt, stop pgbench before the database under it is dropped.
    const stopChild = onCleanup(`stop pgbench pid ${child.pid}`, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-200_000)));
    const code = await withTimeout(
      new Promise<number | null>((resolve, reject) => {
        child.on('error', reject);
        child.on('exit', (c) => resolve(c));
      }),
      (opts.durationS + 60) * 1000,
      'pgbench',
    ).catch((err) => {
      child.kill('SIGKILL');
      throw err;
    }).finally(() => {
      unregisterKill();
      void stopChild();
    });
    if (code !== 0) throw new Error(`pgbench exited with ${code}:\n${output.slice(-4000)}`);

    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(output)?.[1]);
    const transactions = Number(/number of transactions actually processed: (\d+)/.exec(output)?.[1]);
    const failed = Number(/number of failed transactions: (\d+)/.exec(output)?.[1] ?? 0);
    if (!Number.isFinite(tps)) throw new Error(`could not read tps from pgbench:\n${output.slice(-4000)}`);

    // Log lines: client_id transaction_no time_us script_no time_epoch time_us_fraction
    const latencies: number[] = [];
    for (const file of await fs.readdir(dir)) {
      if (!file.startsWith('txlog')) continue;
      for (const line of (await fs.readFile(path.join(dir, file), 'utf8')).split('\n')) {
        const us = Number(line.split(' ')[2]);
        if (line && Number.isFinite(us)) latencies.push(us / 1000);
      }
    }
    // -D values (JSON snapshots) would drown the command line: show their names only.
    const shown = args.map((a, i) => (args[i - 1] === '-D' ? `${a.split('=')[0]}=…` : a));
    return {
      tps,
      transactions,
      failed,
      latencyMs: summarise(latencies),
      durationS: opts.durationS,
      command: `pgbench ${shown.join(' ')}`,
      output,
      latencies,
    };
  } finally {
    await removeDir();
  }
}
