// POST /v1/payment-orders: the service's throughput and latency under autocannon, against the
// database's own ceiling measured by pgbench in the same run, on the same database, at the same
// concurrency. Two ceilings: the issue's "equivalent transaction" (the same three inserts, written
// as a plain BEGIN/INSERT×3/COMMIT transaction; the target ratio applies to it) and the stricter
// very same single statement the service sends. When PgBouncer is installed, the service's figure
// is taken a second time through one in transaction mode (DATABASE_PREPARED_STATEMENTS=unnamed).
// The machine is small and shared, so the figures
// that count are the ratios, not the absolute numbers.
//
// Per request the service sends one statement (see bench/trace-sql.ts and
// src/domain/payment-orders/one-statement.ts): a data-modifying CTE inserting the finished
// idempotency record, the order and its event, as a named prepared statement (parsed and planned
// once per connection). Under load, concurrent requests' orders share one such statement and its
// commit (src/storage/coalesce.ts). The "same statement" pgbench script sends it with one order
// per client transaction, with -M prepared by default (BENCH_PGBENCH_PROTOCOL overrides),
// time-ordered ids like the service's UUIDv7 and the exact event snapshot and response body the
// service stored.
import { setUpTenant, type Tenant } from './lib/tenant.js';
import { checkpoint, createBenchDatabase, type BenchDatabase } from './lib/database.js';
import { startServiceProcess } from './lib/service.js';
import { preloadForBench } from './lib/history-run.js';
import { startPgBouncer } from './lib/pgbouncer.js';
import { runHttpLoad, type HttpLoadResult } from './lib/http-load.js';
import { runPgbench, type PgbenchResult } from './lib/pgbench.js';
import { cpuMeter, meanCpu, ownBackends, type CpuUsage } from './lib/cpu.js';
import { loadDetails, round, roundAll, summarise } from './lib/stats.js';
import type { BenchOptions, BenchResult, Benchmark, Check } from './lib/types.js';

import { ORDER_BODY, PGBENCH_SCRIPT, PGBENCH_TRANSACTION_SCRIPT, TARGET_NODE_SHARE, TARGET_P99_MS, TARGET_RATIO, sampleStoredRequest } from './orders-scripts.js';

const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
/** Other work above this many cores during a phase makes the ratio unreliable. */
const FOREIGN_LOAD_WARN_CORES = 0.3;

function describeCpu(c: CpuUsage): string {
  const parts = [`machine ${fmt(c.machineCores ?? NaN, 2)} cores busy`];
  if (c.processCores !== undefined) parts.push(`service ${fmt(c.processCores, 2)}`);
  parts.push(`postgres ${fmt(c.postgresCores ?? NaN, 2)}`);
  parts.push(c.pgbenchCores ? `pgbench ${fmt(c.pgbenchCores, 2)}` : `autocannon ${fmt(c.loadGeneratorCores, 2)}`);
  parts.push(`other ${fmt((c.foreignCores ?? 0) + (c.postgresOtherCores ?? 0), 2)}`);
  return parts.join(', ');
}

const otherLoad = (c: CpuUsage) => (c.foreignCores ?? 0) + (c.postgresOtherCores ?? 0);

async function run(opts: BenchOptions): Promise<BenchResult> {
  const log = (msg: string) => process.stderr.write(`[orders] ${msg}\n`);
  const db = await createBenchDatabase(opts.adminUrl);
  try {
    log(`database ${db.name}`);
    const tenant = await setUpTenant(db);
    const history = await preloadForBench(db, [tenant.accountUuid], log);

    const service = await startServiceProcess({
      databaseUrl: db.url,
      nodeArgs: opts.serviceNodeArgs,
      entry: opts.serviceEntry,
      env: { LOG_LEVEL: opts.serviceLogLevel },
    });
    log(`service pid ${service.pid} on ${service.url}`);
    const loadAt = (baseUrl: string, durationS: number) =>
      runHttpLoad({
        url: `${baseUrl}/v1/payment-orders`,
        method: 'POST',
        connections: opts.connections,
        durationS,
        headers: {
          authorization: `Bearer ${tenant.secret}`,
          'content-type': 'application/json',
          'idempotency-key': 'bench-[<id>]',
        },
        body: JSON.stringify(ORDER_BODY),
      });
    const load = (durationS: number) => loadAt(service.url, durationS);

    const httpRounds: HttpLoadResult[] = [];
    const pgRounds: PgbenchResult[] = [];
    const txRounds: PgbenchResult[] = [];
    const serviceCpu: CpuUsage[] = [];
    const pgbenchCpu: CpuUsage[] = [];
    let created = 0;
    let pgbench: ((durationS: number, script?: string) => Promise<PgbenchResult>) | undefined;
    try {
      if (opts.warmupS > 0) {
        log(`warm-up ${opts.warmupS} s`);
        const warm = await load(opts.warmupS);
        created += warm.statuses['201'] ?? 0;
        if (!warm.statuses['201']) {
          throw new Error(`no 201 during warm-up (statuses ${JSON.stringify(warm.statuses)}, errors ${warm.errors}):\n${service.output()}`);
        }
      }
      for (let round = 1; round <= opts.rounds; round++) {
        const tag = opts.rounds > 1 ? ` (round ${round}/${opts.rounds})` : '';
        // --- the service ----------------------------------------------------------------
        await checkpoint(opts.adminUrl);
        log(`autocannon: ${opts.connections} connections, ${opts.durationS} s${tag}`);
        const meter = cpuMeter(service.pid);
        const marking = ownBackends(db, meter, 1000);
        const http = await load(opts.durationS);
        await marking;
        serviceCpu.push(meter.stop());
        httpRounds.push(http);
        created += http.statuses['201'] ?? 0;

        // --- the ceiling ----------------------------------------------------------------
        if (!pgbench) {
          const sample = await sampleStoredRequest(db);
          const vars = {
            acct: tenant.accountUuid,
            fingerprint: sample.key.fingerprint,
            amount: String(ORDER_BODY.amount),
            currency: ORDER_BODY.currency,
            // the service's is 'order-' + a 33-character unique id; this one gets :r (≤ 19 digits)
            // appended, for about the same length, and does not match 'order-%'
            reference: 'pgbench-order-xxxxxx',
            email: ORDER_BODY.customer.email,
            name: ORDER_BODY.customer.name,
            description: ORDER_BODY.description,
            metadata: sample.order.metadata,
            object_id: sample.event.object_id,
            data: sample.event.data,
            response_body: sample.key.response_body,
          };
          pgbench = (durationS: number, script = PGBENCH_SCRIPT) =>
            runPgbench({
              url: db.url,
              script,
              clients: opts.connections,
              threads: opts.pgbenchThreads,
              durationS,
              vars,
              protocol: opts.pgbenchProtocol ?? 'prepared',
            });
          if (opts.warmupS > 0) {
            log(`pgbench warm-up ${opts.warmupS} s`);
            await pgbench(opts.warmupS);
          }
        }
        await checkpoint(opts.adminUrl);
        log(`pgbench: ${opts.connections} clients, ${opts.pgbenchThreads} threads, ${opts.durationS} s, -M ${opts.pgbenchProtocol ?? 'prepared'}${tag}`);
        const pgMeter = cpuMeter();
        const pgMarking = ownBackends(db, pgMeter, 1000);
        pgRounds.push(await pgbench(opts.durationS));
        await pgMarking;
        pgbenchCpu.push(pgMeter.stop());
        await checkpoint(opts.adminUrl);
        log(`pgbench, equivalent transaction (BEGIN; 3 INSERTs; COMMIT): ${opts.durationS} s${tag}`);
        txRounds.push(await pgbench(opts.durationS, PGBENCH_TRANSACTION_SCRIPT));
      }
    } finally {
      await service.stop();
    }

    // --- the same load through PgBouncer (transaction mode), when it is installed -----------
    let pooled: HttpLoadResult | undefined;
    const pgbouncer = await startPgBouncer();
    if (pgbouncer) {
      const pooledService = await startServiceProcess({
        databaseUrl: pgbouncer.through(db.url),
        nodeArgs: opts.serviceNodeArgs,
        entry: opts.serviceEntry,
        env: { LOG_LEVEL: opts.serviceLogLevel, DATABASE_PREPARED_STATEMENTS: 'unnamed' },
      });
      try {
        if (opts.warmupS > 0) created += (await loadAt(pooledService.url, opts.warmupS)).statuses['201'] ?? 0;
        await checkpoint(opts.adminUrl);
        log(`autocannon through PgBouncer (transaction mode, unnamed statements): ${opts.connections} connections, ${opts.durationS} s`);
        pooled = await loadAt(pooledService.url, opts.durationS);
        created += pooled.statuses['201'] ?? 0;
      } finally {
        await pooledService.stop();
        await pgbouncer.stop();
      }
    } else {
      log('PgBouncer is not installed: no figure through it');
    }
    const [{ count: stored } = { count: 0 }] = await db.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM payment_orders WHERE reference LIKE $1',
      ['order-%'],
    );

    // --- pooled figures and verdict -------------------------------------------------------
    const sum = <T>(xs: T[], f: (x: T) => number) => xs.reduce((a, x) => a + f(x), 0);
    const ok = sum(httpRounds, (h) => h.statuses['201'] ?? 0);
    const requests = sum(httpRounds, (h) => h.requests);
    const errors = sum(httpRounds, (h) => h.errors);
    const timeouts = sum(httpRounds, (h) => h.timeouts);
    const okPerS = ok / sum(httpRounds, (h) => h.durationS);
    const latency = summarise(httpRounds.flatMap((h) => h.latencies));
    const statuses: Record<string, number> = {};
    for (const h of httpRounds) for (const [code, n] of Object.entries(h.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
    const tps = sum(pgRounds, (p) => p.tps * p.durationS) / sum(pgRounds, (p) => p.durationS);
    const pgLatency = summarise(pgRounds.flatMap((p) => p.latencies));
    const sameStatementRatio = okPerS / tps;
    const txTps = sum(txRounds, (p) => p.tps * p.durationS) / sum(txRounds, (p) => p.durationS);
    const txLatency = summarise(txRounds.flatMap((p) => p.latencies));
    const ratio = okPerS / txTps;
    const roundRatios = httpRounds.map((h, i) => (h.statuses['201'] ?? 0) / h.durationS / txRounds[i]!.tps);
    const non201 = requests - ok + errors + timeouts;
    // Requests in flight when autocannon stops (at most one per connection per load phase) commit
    // without being counted, so stored may exceed the 201s by that much, never fall short.
    const phases = (opts.rounds + (opts.warmupS > 0 ? 1 : 0)) * (pooled ? 2 : 1);
    const slack = opts.connections * phases;
    const pooledOk = pooled ? (pooled.statuses['201'] ?? 0) : 0;
    const pooledNon201 = pooled ? pooled.requests - pooledOk + pooled.errors + pooled.timeouts : 0;
    const pooledLatency = pooled ? summarise(pooled.latencies) : undefined;
    const svcCpu = meanCpu(serviceCpu);
    const pgCpu = meanCpu(pgbenchCpu);
    const nodeShare = (svcCpu.processCores ?? NaN) / (svcCpu.postgresCores ?? NaN);
    const checks: Check[] = [
      { name: 'ratio service / pgbench (equivalent transaction)', target: `>= ${TARGET_RATIO}`, actual: fmt(ratio, 3), pass: ratio >= TARGET_RATIO },
      { name: 'service p99 latency', target: `< ${TARGET_P99_MS} ms`, actual: `${fmt(latency.p99)} ms`, pass: latency.p99 < TARGET_P99_MS },
      { name: 'non-201 responses and errors', target: '0', actual: String(non201), pass: non201 === 0 },
      { name: 'non-201 responses and errors through PgBouncer', target: '0', actual: pooled ? String(pooledNon201) : 'not run', pass: pooledNon201 === 0 },
      { name: 'node cpu / postgres cpu per order', target: `<= ${TARGET_NODE_SHARE}`, actual: fmt(nodeShare, 2), pass: nodeShare <= TARGET_NODE_SHARE },
      { name: 'orders stored vs. 201 answers', target: `${created}..${created + slack}`, actual: String(stored), pass: stored >= created && stored <= created + slack },
    ];
    const statusText = Object.entries(statuses)
      .map(([code, n]) => `${code}×${n}`)
      .join(' ');
    const notes = [
      `cpu, service phase: ${describeCpu(svcCpu)}`,
      `cpu, pgbench phase: ${describeCpu(pgCpu)}`,
      `service cpu per order: node ${fmt(((svcCpu.processCores ?? NaN) / okPerS) * 1000, 2)} ms, postgres ${fmt(((svcCpu.postgresCores ?? NaN) / okPerS) * 1000, 2)} ms; ` +
        `pgbench: postgres ${fmt(((pgCpu.postgresCores ?? NaN) / tps) * 1000, 2)} ms per transaction`,
    ];
    if (opts.rounds > 1) notes.push(`per-round ratios: ${roundRatios.map((r) => fmt(r, 3)).join(', ')}`);
    const disturbed = [...serviceCpu, ...pgbenchCpu].some((c) => otherLoad(c) > FOREIGN_LOAD_WARN_CORES);
    if (disturbed) {
      notes.push(
        `WARNING: other work used up to ${fmt(Math.max(...[...serviceCpu, ...pgbenchCpu].map(otherLoad)), 2)} cores during a phase; ` +
          'the ratio is skewed by it — rerun on a quieter machine or with BENCH_ROUNDS=3',
      );
    }
    return {
      name: 'orders',
      title: `POST /v1/payment-orders — ${opts.connections} connections, ${opts.rounds > 1 ? `${opts.rounds} × ` : ''}${opts.durationS} s`,
      rows: [
        { label: 'service orders/s (201)', value: fmt(okPerS) },
        { label: 'service p50 latency', value: `${fmt(latency.p50, 2)} ms` },
        { label: 'service p99 latency', value: `${fmt(latency.p99, 2)} ms`, target: `< ${TARGET_P99_MS} ms`, pass: checks[1]!.pass },
        { label: 'pgbench tps, equivalent tx', value: fmt(txTps) },
        { label: '  p50 / p99', value: `${fmt(txLatency.p50, 2)} / ${fmt(txLatency.p99, 2)} ms` },
        { label: 'ratio service / equivalent tx', value: fmt(ratio, 3), target: `>= ${TARGET_RATIO}`, pass: checks[0]!.pass },
        { label: 'pgbench tps, same statement', value: fmt(tps) },
        { label: '  p50 / p99', value: `${fmt(pgLatency.p50, 2)} / ${fmt(pgLatency.p99, 2)} ms` },
        { label: 'ratio service / same stmt', value: fmt(sameStatementRatio, 3) },
        { label: 'node cpu / postgres cpu per order', value: fmt(nodeShare, 2), target: `<= ${TARGET_NODE_SHARE}`, pass: checks[4]!.pass },
        ...(pooled
          ? [
              { label: 'through PgBouncer: orders/s', value: fmt(pooledOk / pooled.durationS) },
              { label: '  p50 / p99', value: `${fmt(pooledLatency!.p50, 2)} / ${fmt(pooledLatency!.p99, 2)} ms` },
              { label: '  ratio to direct', value: fmt(pooledOk / pooled.durationS / okPerS, 3) },
              { label: '  non-201 and errors', value: String(pooledNon201), target: '0', pass: pooledNon201 === 0 },
            ]
          : [{ label: 'through PgBouncer', value: 'not installed' }]),
        {
          label: 'responses',
          value: `${statusText || 'none'}${errors ? ` errors×${errors}` : ''}${timeouts ? ` timeouts×${timeouts}` : ''}`,
          target: 'all 201',
          pass: checks[2]!.pass,
        },
      ],
      checks,
      pass: checks.every((c) => c.pass),
      notes,
      details: {
        ratio: round(ratio, 3),
        throughPgbouncer: pooled ? { ordersPerS: round(pooledOk / pooled.durationS), non201: pooledNon201, latencyMs: roundAll(pooledLatency!) } : null,
        sameStatementRatio: round(sameStatementRatio, 3),
        equivalentTransaction: {
          tps: round(txTps),
          latencyMs: roundAll(txLatency),
          perRound: txRounds.map((p) => ({ tps: round(p.tps), p50: round(p.latencyMs.p50), p99: round(p.latencyMs.p99) })),
          script: PGBENCH_TRANSACTION_SCRIPT,
        },
        roundRatios: roundRatios.map((r) => round(r, 3)),
        disturbed,
        service: {
          ...loadDetails(okPerS, requests, latency, statuses, errors),
          timeouts,
          cpu: roundAll(svcCpu),
          cpuPerRound: serviceCpu.map(roundAll),
          perRound: httpRounds.map((h) => ({ okPerS: round(h.okPerS), p50: round(h.latencyMs.p50), p99: round(h.latencyMs.p99) })),
          nodeArgs: opts.serviceNodeArgs,
          entry: opts.serviceEntry,
          poolSize: process.env.DATABASE_POOL_SIZE ?? 'default (20)',
          logLevel: opts.serviceLogLevel,
        },
        pgbench: {
          tps: round(tps),
          transactions: sum(pgRounds, (p) => p.transactions),
          failed: sum(pgRounds, (p) => p.failed),
          latencyMs: roundAll(pgLatency),
          cpu: roundAll(pgCpu),
          cpuPerRound: pgbenchCpu.map(roundAll),
          perRound: pgRounds.map((p) => ({ tps: round(p.tps), p50: round(p.latencyMs.p50), p99: round(p.latencyMs.p99) })),
          command: pgRounds[0]?.command,
          protocol: opts.pgbenchProtocol ?? 'prepared',
          script: PGBENCH_SCRIPT,
        },
        ordersStored: stored,
        created201: created,
        requestBody: ORDER_BODY,
        history,
      },
    };
  } finally {
    await db.drop();
  }
}


export const benchmark: Benchmark = {
  name: 'orders',
  description: 'POST /v1/payment-orders throughput and latency vs. pgbench on the equivalent transaction and on the same statement',
  run,
};
