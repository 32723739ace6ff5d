// Webhook delivery: events committed to the outbox → the delivery worker (a real service process,
// ROLES=api,worker) → a receiver on 127.0.0.1 that verifies every signature. Two figures:
//
//   latency    from an event's commit (as its INSERT returns to the producer) to the first
//              attempt reaching the receiver, with events committed one by one at a steady rate
//              (BENCH_WEBHOOK_RATE, default 200/s) — p50 and p99;
//   throughput a backlog of events committed in one transaction (2,500 × BENCH_DURATION_S) and
//              the time until the receiver has seen every one: deliveries/s, set beside the
//              receiver's own ceiling measured by autocannon in the same run (same body, same
//              signature check, as many connections as the worker's WEBHOOK_CONCURRENCY).
//
// The receiver runs in a process of its own, so it costs the same under both senders.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { createAccount } from '../src/domain/accounts/service.js';
import { createWebhookEndpoint } from '../src/domain/webhooks/service.js';
import { loadConfig } from '../src/config.js';
import { createEncryptor } from '../src/kernel/encryption.js';
import { newId, parseId } from '../src/kernel/ids.js';
import { openPostgres, runMigrations } from '../src/storage/db.js';
import { createSender } from '../src/domain/webhooks/sender.js';
import { signedHeaders } from '../src/domain/webhooks/signing.js';
import { onCleanup, onExitKill, withTimeout } from './lib/cleanup.js';
import { cpuMeter, type CpuUsage } from './lib/cpu.js';
import { createBenchDatabase } from './lib/database.js';
import { preloadForBench } from './lib/history-run.js';
import { runHttpLoad } from './lib/http-load.js';
import { ROOT, startServiceProcess } from './lib/service.js';
import { round, summarise } from './lib/stats.js';
import type { BenchOptions, BenchResult, Benchmark, Check } from './lib/types.js';

export const TARGET_P50_MS = 50;
/** Issue 29's target: at least 5,000 deliveries/s, or 0.4× the receiver's own ceiling. */
export const TARGET_DELIVERIES_PER_S = 5000;
export const TARGET_CEILING_RATIO = 0.4;

const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
const nowMs = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A payment order snapshot of realistic size, as the events of the orders benchmark carry. */
function snapshot(orderId: string) {
  const at = new Date().toISOString();
  return {
    object: {
      id: orderId,
      object: 'payment_order',
      livemode: false,
      status: 'open',
      amount: 4990,
      amount_paid: 0,
      currency: 'EUR',
      reference: `order-${orderId}`,
      customer: { email: 'jane.doe@example.com', name: 'Jane Doe' },
      description: 'Web shop order: 2 items, standard shipping',
      metadata: { cart_id: `cart_${orderId}`, channel: 'web' },
      expires_at: at,
      version: 1,
      created_at: at,
      updated_at: at,
    },
  };
}

interface Report {
  requests: number;
  invalid: number;
  arrivals: [string, number][];
}

interface Receiver {
  url: string;
  pid: number;
  setSecret(secret: string): void;
  report(): Promise<Report>;
  reset(): void;
  stop(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const child: ChildProcess = fork(path.join(ROOT, 'bench/webhook-receiver.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const unregisterKill = onExitKill(() => child.kill('SIGKILL'));
  const stop = onCleanup(`stop webhook receiver pid ${child.pid}`, async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    unregisterKill();
  });
  const port = await withTimeout(
    new Promise<number>((resolve, reject) => {
      child.once('message', (m) => resolve((m as { port: number }).port));
      child.once('exit', (code) => reject(new Error(`the webhook receiver exited (${code})`)));
    }),
    30_000,
    'webhook receiver start',
  );
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    pid: child.pid!,
    setSecret: (secret) => child.send({ secret }),
    reset: () => child.send('reset'),
    report: () =>
      withTimeout(
        new Promise<Report>((resolve) => {
          child.once('message', (m) => resolve(m as Report));
          child.send('report');
        }),
        30_000,
        'webhook receiver report',
      ),
    stop,
  };
}

async function run(opts: BenchOptions): Promise<BenchResult> {
  const log = (msg: string) => process.stderr.write(`[webhooks] ${msg}\n`);
  const rate = Number(process.env.BENCH_WEBHOOK_RATE || 200);
  const backlog = 2500 * opts.durationS;
  const config = loadConfig(process.env);
  const concurrency = config.webhooks.concurrency;
  const db = await createBenchDatabase(opts.adminUrl);
  const producer = new pg.Client({ connectionString: db.url });
  try {
    log(`database ${db.name}`);
    const receiver = await startReceiver();

    // --- set-up: an account with one endpoint subscribed to everything ------------------------
    const database = await openPostgres(db.url, { poolSize: 2 });
    let accountUuid: string;
    let secret: string;
    try {
      await runMigrations(database);
      const account = await createAccount(database.db, 'Webhook benchmark');
      accountUuid = parseId('acct', account.id)!;
      const sender = createSender();
      const created = await createWebhookEndpoint(
        database.db,
        { config: config.webhooks, encryptor: createEncryptor(config.encryptionKeys), sender },
        { accountId: accountUuid, livemode: false, requestId: 'bench' },
        { url: receiver.url, enabled_events: ['*'] },
      );
      sender.close();
      secret = (JSON.parse(created.body) as { secret: string }).secret;
    } finally {
      await database.close();
    }
    receiver.setSecret(secret);
    const history = await preloadForBench(db, [accountUuid], log);
    await producer.connect();

    const commitTimes = new Map<string, number>();
    const insertOne = async () => {
      const { id, uuid } = newId('evt');
      const order = newId('ord').id;
      await producer.query(
        `INSERT INTO events (account_id, id, livemode, type, object_id, data, request_id, idempotency_key, created_at)
         VALUES ($1, $2, false, 'payment_order.created', $3, $4, $5, $6, now())`,
        [accountUuid, uuid, order, JSON.stringify(snapshot(order)), newId('req').id, `bench-${uuid}`],
      );
      commitTimes.set(id, nowMs());
    };
    const steady = async (seconds: number) => {
      const intervalMs = 1000 / rate;
      const start = nowMs();
      for (let i = 0; i < seconds * rate; i++) {
        const wait = start + i * intervalMs - nowMs();
        if (wait > 0) await sleep(wait);
        await insertOne();
      }
    };
    const waitForAll = async (ids: string[], timeoutS: number): Promise<Report> => {
      const deadline = Date.now() + timeoutS * 1000;
      for (;;) {
        const report = await receiver.report();
        const seen = new Set(report.arrivals.map(([id]) => id));
        if (ids.every((id) => seen.has(id))) return report;
        if (Date.now() > deadline) throw new Error(`only ${ids.filter((id) => seen.has(id)).length} of ${ids.length} events arrived within ${timeoutS} s`);
        await sleep(100);
      }
    };

    // --- the service: api + worker, default delivery settings --------------------------------
    const service = await startServiceProcess({
      databaseUrl: db.url,
      env: { ROLES: 'api,worker' },
      nodeArgs: opts.serviceNodeArgs,
      entry: opts.serviceEntry,
    });
    log(`service pid ${service.pid} on ${service.url}, receiver pid ${receiver.pid}`);
    let latencies: number[];
    let throughput: { deliveriesPerS: number; elapsedMs: number; requests: number; invalid: number; recordedMs: number };
    let serviceCpu: CpuUsage;
    try {
      // --- latency: one event per transaction at a steady rate -------------------------------
      if (opts.warmupS > 0) {
        log(`warm-up ${opts.warmupS} s at ${rate} events/s`);
        await steady(opts.warmupS);
        await waitForAll([...commitTimes.keys()], 60);
      }
      commitTimes.clear();
      receiver.reset();
      log(`latency: ${opts.durationS} s at ${rate} events/s, one per transaction`);
      await steady(opts.durationS);
      const latencyReport = await waitForAll([...commitTimes.keys()], 60);
      const arrivals = new Map(latencyReport.arrivals);
      latencies = [...commitTimes].map(([id, committed]) => arrivals.get(id)! - committed);

      // --- throughput: a backlog committed at once --------------------------------------------
      receiver.reset();
      commitTimes.clear();
      log(`throughput: ${backlog} events committed in one transaction`);
      const ids: string[] = [];
      const uuids: string[] = [];
      const orders: string[] = [];
      for (let i = 0; i < backlog; i++) {
        const { id, uuid } = newId('evt');
        ids.push(id);
        uuids.push(uuid);
        orders.push(newId('ord').id);
      }
      await producer.query('BEGIN');
      for (let i = 0; i < backlog; i += 2000) {
        const slice = (a: string[]) => a.slice(i, i + 2000);
        await producer.query(
          `INSERT INTO events (account_id, id, livemode, type, object_id, data, request_id, idempotency_key, created_at)
           SELECT $1, u.id, false, 'payment_order.created', u.object_id, u.data::jsonb, NULL, NULL, now()
           FROM unnest($2::uuid[], $3::text[], $4::text[]) AS u(id, object_id, data)`,
          [accountUuid, slice(uuids), slice(orders), slice(orders).map((o) => JSON.stringify(snapshot(o)))],
        );
      }
      const meter = cpuMeter(service.pid);
      await producer.query('COMMIT');
      const committedAt = nowMs();
      const report = await waitForAll(ids, 300);
      serviceCpu = meter.stop();
      const last = Math.max(...report.arrivals.filter(([id]) => ids.includes(id)).map(([, at]) => at));
      // every attempt recorded as well (the worker's last transaction), not only sent
      let recordedMs = NaN;
      for (let i = 0; i < 600; i++) {
        // this run's deliveries only (a preloaded history is at least three hours old), through the finished-deliveries index
        const { rows } = await producer.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'succeeded' AND updated_at > now() - interval '1 hour'`);
        if (rows[0]!.n >= backlog + latencies.length + (opts.warmupS > 0 ? opts.warmupS * rate : 0)) {
          recordedMs = nowMs() - committedAt;
          break;
        }
        await sleep(50);
      }
      throughput = {
        deliveriesPerS: backlog / ((last - committedAt) / 1000),
        elapsedMs: last - committedAt,
        requests: report.requests,
        invalid: report.invalid,
        recordedMs,
      };
    } finally {
      await service.stop();
    }

    // --- the ceiling: autocannon straight at the receiver ---------------------------------------
    const sampleId = newId('evt').id;
    const body = JSON.stringify({ id: sampleId, object: 'event', type: 'payment_order.created', livemode: false, created_at: new Date().toISOString(), data: snapshot(newId('ord').id), request: { id: null, idempotency_key: null } });
    const headers = { 'content-type': 'application/json', ...signedHeaders([secret], sampleId, Math.floor(Date.now() / 1000), body) };
    receiver.reset();
    log(`ceiling: autocannon → receiver, ${concurrency} connections, ${opts.durationS} s`);
    if (opts.warmupS > 0) await runHttpLoad({ url: receiver.url, method: 'POST', connections: concurrency, durationS: opts.warmupS, headers, body });
    const ceiling = await runHttpLoad({ url: receiver.url, method: 'POST', connections: concurrency, durationS: opts.durationS, headers, body });
    const ceilingReport = await receiver.report();
    await receiver.stop();

    // --- verdict ----------------------------------------------------------------------------------
    const latency = summarise(latencies);
    const ratio = throughput.deliveriesPerS / ceiling.okPerS;
    const duplicates = throughput.requests - backlog;
    const checks: Check[] = [
      { name: 'commit → first attempt p50', target: `< ${TARGET_P50_MS} ms`, actual: `${fmt(latency.p50, 2)} ms`, pass: latency.p50 < TARGET_P50_MS },
      {
        name: 'deliveries/s',
        target: `>= ${TARGET_DELIVERIES_PER_S} or ${TARGET_CEILING_RATIO}× the ceiling`,
        actual: `${fmt(throughput.deliveriesPerS)} (${fmt(ratio, 3)}×)`,
        pass: throughput.deliveriesPerS >= TARGET_DELIVERIES_PER_S || ratio >= TARGET_CEILING_RATIO,
      },
      { name: 'invalid signatures', target: '0', actual: String(throughput.invalid + ceilingReport.invalid), pass: throughput.invalid + ceilingReport.invalid === 0 },
    ];
    return {
      name: 'webhooks',
      title: `webhook delivery — latency at ${rate} events/s, throughput of a ${backlog}-event backlog`,
      rows: [
        { label: 'commit → first attempt p50', value: `${fmt(latency.p50, 2)} ms`, target: `< ${TARGET_P50_MS} ms`, pass: checks[0]!.pass },
        { label: 'commit → first attempt p99', value: `${fmt(latency.p99, 2)} ms` },
        { label: 'deliveries/s (backlog)', value: fmt(throughput.deliveriesPerS), target: `>= ${TARGET_DELIVERIES_PER_S} or ${TARGET_CEILING_RATIO}×`, pass: checks[1]!.pass },
        { label: 'receiver ceiling req/s (autocannon)', value: fmt(ceiling.okPerS) },
        { label: 'ratio deliveries / ceiling', value: fmt(ratio, 3) },
        { label: 'backlog sent / recorded', value: `${fmt(throughput.elapsedMs / 1000, 2)} s / ${fmt(throughput.recordedMs / 1000, 2)} s` },
        { label: 'duplicate requests', value: String(duplicates) },
        { label: 'invalid signatures', value: String(throughput.invalid + ceilingReport.invalid), target: '0', pass: checks[2]!.pass },
      ],
      checks,
      pass: checks.every((c) => c.pass),
      notes: [
        `cpu during backlog: machine ${fmt(serviceCpu.machineCores ?? NaN, 2)} cores busy, service ${fmt(serviceCpu.processCores ?? NaN, 2)}, postgres ${fmt(serviceCpu.postgresCores ?? NaN, 2)}+${fmt(serviceCpu.postgresOtherCores ?? NaN, 2)}`,
        `worker settings: WEBHOOK_CONCURRENCY=${concurrency}, WEBHOOK_BATCH_SIZE=${config.webhooks.batchSize}, WEBHOOK_POLL_INTERVAL_MS=${config.webhooks.pollIntervalMs}`,
      ],
      details: {
        rate,
        backlog,
        latencyMs: Object.fromEntries(Object.entries(latency).map(([k, v]) => [k, round(v)])),
        throughput: { ...throughput, deliveriesPerS: round(throughput.deliveriesPerS) },
        ceiling: { okPerS: round(ceiling.okPerS), latencyMs: ceiling.latencyMs, connections: concurrency, statuses: ceiling.statuses },
        ratio: round(ratio, 3),
        duplicates,
        cpu: serviceCpu,
        settings: { concurrency, batchSize: config.webhooks.batchSize, pollIntervalMs: config.webhooks.pollIntervalMs },
        history,
      },
    };
  } finally {
    await producer.end().catch(() => {});
    await db.drop();
  }
}

export const benchmark: Benchmark = {
  name: 'webhooks',
  description: 'webhook delivery: commit → first attempt latency and deliveries/s vs. the receiver ceiling',
  run,
};
