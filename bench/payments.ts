// POST /v1/payments that succeed (test card 4242…, the in-process simulated processor answering
// at once): the service's throughput, p50/p99 and CPU per payment, against the database's own
// ceiling for the very same SQL measured by pgbench in the same run, at the same concurrency.
//
// A card payment is three statements (src/domain/payments/one-statement.ts), each a named prepared
// statement sent on its own (autocommit):
//   1. read the order (unlocked) to plan the route and compute the rows;
//   2. phase 1: one data-modifying CTE — order → processing, payment, two events, idempotency key
//      with its recovery point;
//   —  the connector call, no transaction open (phase 2);
//   3. phase 3: one data-modifying CTE — payment → succeeded, order → paid, journal entry, lines
//      and balances, two events, the answer stored on the key.
// The pgbench script is built from the service's own statement texts (AT_ONCE_STATEMENTS), with
// each bind parameter replaced by a pgbench variable or expression, the event snapshots, request
// fingerprint and response body that the service stored in this run, and a fresh open order per
// transaction (so that every transaction does the whole work, as every service request does).
// pgbench also sends one more, trivial statement per transaction (SELECT … \gset) to fix the
// payment's and journal entry's ids that two statements share; the service makes them in memory.
import crypto from 'node:crypto';
import autocannon, { type Options, type Result } from 'autocannon';
import { createAccount, issueKey } from '../src/domain/accounts/service.js';
import { AT_ONCE_STATEMENTS } from '../src/domain/payments/one-statement.js';
import { newId } from '../src/kernel/ids.js';
import { openPostgres, runMigrations } from '../src/storage/db.js';
import { checkLedger } from '../src/ledger/check.js';
import { checkpoint, createBenchDatabase, type BenchDatabase } from './lib/database.js';
import { startServiceProcess } from './lib/service.js';
import { runPgbench, type PgbenchResult } from './lib/pgbench.js';
import { cpuMeter, type CpuMeter, type CpuUsage } from './lib/cpu.js';
import { withTimeout } from './lib/cleanup.js';
import { round, summarise } from './lib/stats.js';
import type { BenchOptions, BenchResult, Benchmark, Check } from './lib/types.js';

export const TARGET_P99_MS = 25;
export const TARGET_RATIO = 0.5;
const AMOUNT = 4990;
const CARD = { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: '123' };
/** Open orders per pgbench client and run: enough for 9,600 transactions/s over a 10 s phase. */
const PGBENCH_ORDERS_PER_CLIENT = 3000;

const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
const ORDER_COLUMNS =
  '"account_id", "id", "livemode", "status", "amount", "amount_paid", "currency", "reference", "customer_email", "customer_name", "description", "metadata", "expires_at", "version", "created_at", "updated_at"';
const KEY = `('bench-' || :run::text || '-' || :client_id::text || '-' || :n::text)`;
const REQ = `('req_' || :run::text || '_' || :client_id::text || '_' || :n::text)`;
const ORDER_SEED = `(:run::text || '-' || :client_id::text || '-' || :n::text)`;
const ORDER = `md5('bench-order-' || ${ORDER_SEED})::uuid`;
const ORDER_PUBLIC = `('ord_' || substr(md5('bench-order-' || ${ORDER_SEED}), 1, 26))`;
const PAY_PUBLIC = `('pay_' || substr(md5('bench-pay-' || ${ORDER_SEED}), 1, 26))`;
const UUID7 = `(lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') || substr(replace(gen_random_uuid()::text, '-', ''), 13))::uuid`;

/** Replaces each $n of `text` by what pgbench sends in its place. */
function bind(text: string, params: Record<number, string>): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const value = params[Number(n)];
    if (value === undefined) throw new Error(`no pgbench value for $${n}`);
    return value;
  });
}

export const PGBENCH_SCRIPT = `\\set n :n + 1
\\set r random(1, 9000000000000000000)
\\set s1 random(0, 15)
\\set s2 random(0, 15)
SELECT ${UUID7} AS pay_id, ${UUID7} AS txn_id \\gset
${bind(AT_ONCE_STATEMENTS.readOrder, { 1: ':acct', 2: 'false', 3: ORDER })};
${bind(AT_ONCE_STATEMENTS.createPayment, {
  1: ':acct', 2: 'false', 3: ORDER, 4: '1', 5: 'now()', 6: ':pay_id', 7: String(AMOUNT), 8: "'EUR'", 9: ':method', 10: "'{simulator_a,simulator_b}'",
  11: "'{}'", 12: "now() + interval '2 minutes'", 13: UUID7, 14: ORDER_PUBLIC, 15: ':order_processing', 16: UUID7, 17: PAY_PUBLIC,
  18: ':payment_created', 19: REQ, 20: KEY, 21: ':fingerprint', 22: "('payment_created:' || :pay_id)", 23: '86400', 24: "'automatic'",
  25: `'{"rule":"default","strategy":"priority","candidates":[{"connector":"simulator_a"},{"connector":"simulator_b"}],"chosen":"simulator_a"}'`,
})};
${bind(AT_ONCE_STATEMENTS.finishSucceeded, {
  1: ':acct', 2: 'false', 3: ':pay_id', 4: '1', 5: "'simulator_a'", 6: "('simulator_a_ch_bench' || :r::text)", 7: ':attempts', 8: 'now()', 9: ORDER,
  10: '2', 11: String(AMOUNT), 12: ':txn_id', 13: "'EUR'", 14: "'{processor_clearing,merchant_available}'", 15: `'{${AMOUNT},-${AMOUNT}}'`,
  16: "'{merchant_available,processor_clearing}'", 17: "('{' || :s1::text || ',' || :s2::text || '}')", 18: `'{-${AMOUNT},${AMOUNT}}'`, 19: UUID7,
  20: "'payment_order.paid'", 21: ORDER_PUBLIC, 22: ':order_paid', 23: UUID7, 24: PAY_PUBLIC, 25: REQ, 26: KEY, 27: ':payment_succeeded', 28: ':response_body',
})};
`;

interface Tenant {
  accountUuid: string;
  secret: string;
}

async function setUp(db: BenchDatabase, serviceOrders: number, pgbenchRuns: number, clients: number): Promise<{ tenant: Tenant; orderIds: string[] }> {
  const database = await openPostgres(db.url, { poolSize: 2 });
  try {
    await runMigrations(database);
    const account = await createAccount(database.db, 'Benchmark account');
    const key = await issueKey(database.db, account.id, { livemode: false, name: 'bench' });
    const [row] = await db.query<{ id: string }>('SELECT id FROM accounts LIMIT 1');
    const accountUuid = row!.id;
    const ids = Array.from({ length: serviceOrders }, () => newId('ord'));
    for (let i = 0; i < ids.length; i += 20_000) {
      const chunk = ids.slice(i, i + 20_000);
      await db.query(
        `INSERT INTO payment_orders (${ORDER_COLUMNS})
         SELECT $1, id, false, 'open', ${AMOUNT}, 0, 'EUR', 'bench-' || id::text, 'jane.doe@example.com', 'Jane Doe', 'Web shop order', '{"channel":"web"}',
                now() + interval '1 day', 1, now(), now()
         FROM unnest($2::uuid[]) AS id`,
        [accountUuid, chunk.map((x) => x.uuid)],
      );
    }
    // pgbench pays a fresh order per transaction: one per (run, client, n), for every pgbench run.
    await db.query(
      `INSERT INTO payment_orders (${ORDER_COLUMNS})
       SELECT $1, md5('bench-order-' || r || '-' || c || '-' || n)::uuid, false, 'open', ${AMOUNT}, 0, 'EUR', 'pgbench-' || r || '-' || c || '-' || n,
              'jane.doe@example.com', 'Jane Doe', 'Web shop order', '{"channel":"web"}', now() + interval '1 day', 1, now(), now()
       FROM generate_series(1, $2::int) r, generate_series(0, $3::int - 1) c, generate_series(1, ${PGBENCH_ORDERS_PER_CLIENT}) n`,
      [accountUuid, pgbenchRuns, clients],
    );
    await db.query('VACUUM ANALYZE payment_orders');
    return { tenant: { accountUuid, secret: key.secret }, orderIds: ids.map((x) => x.id) };
  } finally {
    await database.close();
  }
}

interface LoadResult {
  durationS: number;
  latencies: number[];
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
}

/** autocannon with a fresh open order and Idempotency-Key per request. */
async function payLoad(url: string, secret: string, connections: number, durationS: number, nextOrder: () => string): Promise<LoadResult> {
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  const result = await withTimeout(
    new Promise<Result>((resolve, reject) => {
      const instance = autocannon(
        {
          url: `${url}/v1/payments`,
          method: 'POST',
          connections,
          duration: durationS,
          timeout: 10,
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          requests: [
            {
              setupRequest: (req: Record<string, unknown>) => ({
                ...req,
                headers: { ...(req.headers as object), 'idempotency-key': crypto.randomUUID() },
                body: JSON.stringify({ payment_order: nextOrder(), payment_method: { type: 'card', card: CARD } }),
              }),
            },
          ],
        } as Options,
        (err, res) => (err ? reject(err) : resolve(res)),
      );
      instance.on('response', (_c: unknown, _s: number, _b: number, ms: number) => latencies.push(ms));
    }),
    (durationS + 60) * 1000,
    'autocannon',
  );
  const statuses: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statuses[code] = count;
  return { durationS: result.duration || Number(process.hrtime.bigint() - started) / 1e9, latencies, statuses, errors: result.errors, timeouts: result.timeouts };
}

async function ownBackends(db: BenchDatabase, meter: CpuMeter, afterMs: number): Promise<void> {
  await new Promise((r) => setTimeout(r, afterMs));
  const rows = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()').catch(() => []);
  meter.ownPostgres(rows.map((r) => r.pid));
}

function meanCpu(list: CpuUsage[]): CpuUsage {
  const keys = new Set(list.flatMap((c) => Object.keys(c))) as Set<keyof CpuUsage>;
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = list.reduce((a, c) => a + (c[k] ?? 0), 0) / list.length;
  return out as unknown as CpuUsage;
}

async function run(opts: BenchOptions): Promise<BenchResult> {
  const log = (msg: string) => process.stderr.write(`[payments] ${msg}\n`);
  const db = await createBenchDatabase(opts.adminUrl);
  try {
    // Enough open orders for the fastest plausible service (2000 payments/s) over every phase.
    const serviceOrders = 2000 * (opts.warmupS + opts.rounds * opts.durationS) + 10_000;
    const pgbenchRuns = opts.rounds + (opts.warmupS > 0 ? 1 : 0);
    log(`database ${db.name}; creating ${serviceOrders} + ${pgbenchRuns * opts.connections * PGBENCH_ORDERS_PER_CLIENT} open orders`);
    const { tenant, orderIds } = await setUp(db, serviceOrders, pgbenchRuns, opts.connections);
    let next = 0;
    const nextOrder = () => {
      if (next >= orderIds.length) throw new Error('the benchmark ran out of open orders');
      return orderIds[next++]!;
    };

    const service = await startServiceProcess({
      databaseUrl: db.url,
      nodeArgs: opts.serviceNodeArgs,
      entry: opts.serviceEntry,
      env: { LOG_LEVEL: opts.serviceLogLevel, SIMULATOR_LATENCY_MS: '0', SIMULATOR_URL: '' },
    });
    log(`service pid ${service.pid} on ${service.url}`);
    const rounds: LoadResult[] = [];
    const pgRounds: PgbenchResult[] = [];
    const serviceCpu: CpuUsage[] = [];
    const pgCpu: CpuUsage[] = [];
    let sent201 = 0;
    let pgbench: ((s: number) => Promise<PgbenchResult>) | undefined;
    let pgbenchRun = 0;
    let pgbenchTransactions = 0;
    try {
      if (opts.warmupS > 0) {
        log(`warm-up ${opts.warmupS} s`);
        const warm = await payLoad(service.url, tenant.secret, opts.connections, opts.warmupS, nextOrder);
        sent201 += warm.statuses['201'] ?? 0;
        if (!warm.statuses['201']) throw new Error(`no 201 during warm-up (${JSON.stringify(warm.statuses)}):\n${service.output()}`);
      }
      for (let round = 1; round <= opts.rounds; round++) {
        await checkpoint(opts.adminUrl);
        log(`autocannon: ${opts.connections} connections, ${opts.durationS} s (round ${round}/${opts.rounds})`);
        const meter = cpuMeter(service.pid);
        const marking = ownBackends(db, meter, 1000);
        const load = await payLoad(service.url, tenant.secret, opts.connections, opts.durationS, nextOrder);
        await marking;
        serviceCpu.push(meter.stop());
        rounds.push(load);
        sent201 += load.statuses['201'] ?? 0;

        if (!pgbench) {
          const sample = await sampleStored(db);
          // Each run pays its own orders: run number r, per client a counter n from 1.
          pgbench = (durationS: number) =>
            runPgbench({
              url: db.url,
              script: PGBENCH_SCRIPT,
              clients: opts.connections,
              threads: opts.pgbenchThreads,
              durationS,
              vars: { acct: tenant.accountUuid, run: String(++pgbenchRun), n: '0', ...sample },
              protocol: opts.pgbenchProtocol ?? 'prepared',
            }).then((result) => {
              pgbenchTransactions += result.transactions;
              return result;
            });
          if (opts.warmupS > 0) {
            log(`pgbench warm-up ${opts.warmupS} s`);
            await pgbench(opts.warmupS);
          }
        }
        await checkpoint(opts.adminUrl);
        log(`pgbench: ${opts.connections} clients, ${opts.durationS} s`);
        const pgMeter = cpuMeter();
        const pgMarking = ownBackends(db, pgMeter, 1000);
        pgRounds.push(await pgbench(opts.durationS));
        await pgMarking;
        pgCpu.push(pgMeter.stop());
      }
    } finally {
      await service.stop();
    }

    // Every 201 is a succeeded payment of a paid order, credited once; the ledger holds.
    const [stored] = await db.query<{ succeeded: number; other: number }>(
      `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded, count(*) FILTER (WHERE status <> 'succeeded')::int AS other
       FROM payments WHERE connector_reference IS NULL OR connector_reference NOT LIKE 'simulator_a_ch_bench%'`,
    );
    // Every pgbench transaction must have done the whole work (a fresh open order each time).
    const [pgbenchPaid] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM payments WHERE status = 'succeeded' AND connector_reference LIKE 'simulator_a_ch_bench%'`,
    );
    const ledgerDb = await openPostgres(db.url, { poolSize: 1 });
    const ledger = await checkLedger(ledgerDb.db, { accountId: tenant.accountUuid }).finally(() => ledgerDb.close());

    const sum = <T>(xs: T[], f: (x: T) => number) => xs.reduce((a, x) => a + f(x), 0);
    const ok = sum(rounds, (r) => r.statuses['201'] ?? 0);
    const requests = sum(rounds, (r) => r.latencies.length);
    const errors = sum(rounds, (r) => r.errors + r.timeouts);
    const okPerS = ok / sum(rounds, (r) => r.durationS);
    const latency = summarise(rounds.flatMap((r) => r.latencies));
    const tps = sum(pgRounds, (p) => p.tps * p.durationS) / sum(pgRounds, (p) => p.durationS);
    const pgLatency = summarise(pgRounds.flatMap((p) => p.latencies));
    const ratio = okPerS / tps;
    const statuses: Record<string, number> = {};
    for (const r of rounds) for (const [code, n] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
    const non201 = requests - ok + errors;
    const slack = opts.connections * (opts.rounds + (opts.warmupS > 0 ? 1 : 0));
    const svc = meanCpu(serviceCpu);
    const pgc = meanCpu(pgCpu);
    const nodeMsPerPayment = ((svc.processCores ?? NaN) / okPerS) * 1000;
    const postgresMsPerPayment = ((svc.postgresCores ?? NaN) / okPerS) * 1000;
    const pgbenchPostgresMs = ((pgc.postgresCores ?? NaN) / tps) * 1000;
    const otherLoad = (c: CpuUsage) => (c.foreignCores ?? 0) + (c.postgresOtherCores ?? 0);
    const disturbed = [...serviceCpu, ...pgCpu].some((c) => otherLoad(c) > 0.3);
    const checks: Check[] = [
      { name: 'service p99 latency', target: `< ${TARGET_P99_MS} ms`, actual: `${fmt(latency.p99)} ms`, pass: latency.p99 < TARGET_P99_MS },
      { name: 'ratio service / pgbench', target: `>= ${TARGET_RATIO}`, actual: fmt(ratio, 3), pass: ratio >= TARGET_RATIO },
      { name: 'non-201 responses and errors', target: '0', actual: String(non201), pass: non201 === 0 },
      {
        name: 'succeeded payments vs. 201 answers',
        target: `${sent201}..${sent201 + slack}`,
        actual: String(stored?.succeeded),
        pass: (stored?.succeeded ?? 0) >= sent201 && (stored?.succeeded ?? 0) <= sent201 + slack && stored?.other === 0,
      },
      {
        name: 'pgbench transactions that paid an order',
        target: String(pgbenchTransactions),
        actual: String(pgbenchPaid?.n),
        pass: pgbenchPaid?.n === pgbenchTransactions,
      },
      { name: 'ledger invariant', target: 'holds', actual: ledger.ok ? 'holds' : JSON.stringify(ledger).slice(0, 200), pass: ledger.ok },
    ];
    const statusText = Object.entries(statuses).map(([c, n]) => `${c}×${n}`).join(' ');
    return {
      name: 'payments',
      title: `POST /v1/payments (card succeeds, in-process simulator, no added latency) — ${opts.connections} connections, ${opts.rounds > 1 ? `${opts.rounds} × ` : ''}${opts.durationS} s`,
      rows: [
        { label: 'service payments/s (201)', value: fmt(okPerS) },
        { label: 'service p50 latency', value: `${fmt(latency.p50, 2)} ms` },
        { label: 'service p99 latency', value: `${fmt(latency.p99, 2)} ms`, target: `< ${TARGET_P99_MS} ms`, pass: checks[0]!.pass },
        { label: 'pgbench tps (same SQL)', value: fmt(tps) },
        { label: 'pgbench p50 / p99', value: `${fmt(pgLatency.p50, 2)} / ${fmt(pgLatency.p99, 2)} ms` },
        { label: 'ratio service / pgbench', value: fmt(ratio, 3), target: `>= ${TARGET_RATIO}`, pass: checks[1]!.pass },
        { label: 'service cpu per payment', value: `node ${fmt(nodeMsPerPayment, 2)} ms, pg ${fmt(postgresMsPerPayment, 2)} ms` },
        { label: 'pgbench cpu per payment', value: `pg ${fmt(pgbenchPostgresMs, 2)} ms` },
        { label: 'responses', value: `${statusText || 'none'}${errors ? ` errors×${errors}` : ''}`, target: 'all 201', pass: checks[2]!.pass },
      ],
      checks,
      pass: checks.every((c) => c.pass),
      notes: [
        `cpu, service phase: machine ${fmt(svc.machineCores ?? NaN, 2)} cores busy, service ${fmt(svc.processCores ?? NaN, 2)}, postgres ${fmt(svc.postgresCores ?? NaN, 2)}, autocannon ${fmt(svc.loadGeneratorCores, 2)}, other ${fmt((svc.foreignCores ?? 0) + (svc.postgresOtherCores ?? 0), 2)}`,
        `cpu, pgbench phase: machine ${fmt(pgc.machineCores ?? NaN, 2)} cores busy, postgres ${fmt(pgc.postgresCores ?? NaN, 2)}, pgbench ${fmt(pgc.pgbenchCores ?? NaN, 2)}, other ${fmt((pgc.foreignCores ?? 0) + (pgc.postgresOtherCores ?? 0), 2)}`,
        `the service's own overhead per payment (node CPU beyond the database's work): ${fmt(nodeMsPerPayment, 2)} ms`,
        ...(disturbed
          ? [`WARNING: other work used up to ${fmt(Math.max(...[...serviceCpu, ...pgCpu].map(otherLoad)), 2)} cores during a phase; the figures are skewed by it — rerun on a quieter machine`]
          : []),
      ],
      details: {
        ratio: round(ratio, 3),
        disturbed,
        service: {
          okPerS: round(okPerS),
          requests,
          latencyMs: Object.fromEntries(Object.entries(latency).map(([k, v]) => [k, round(v)])),
          statuses,
          errors,
          cpu: svc,
          nodeMsPerPayment: round(nodeMsPerPayment, 3),
          postgresMsPerPayment: round(postgresMsPerPayment, 3),
        },
        pgbench: {
          tps: round(tps),
          latencyMs: Object.fromEntries(Object.entries(pgLatency).map(([k, v]) => [k, round(v)])),
          failed: sum(pgRounds, (p) => p.failed),
          cpu: pgc,
          postgresMsPerPayment: round(pgbenchPostgresMs, 3),
          command: pgRounds[0]?.command,
          script: PGBENCH_SCRIPT,
        },
        ledger: { ok: ledger.ok, entries: ledger.entries },
      },
    };
  } finally {
    await db.drop();
  }
}

/** The literal sizes pgbench replays: one stored payment's events, request fingerprint and response. */
async function sampleStored(db: BenchDatabase): Promise<Record<string, string>> {
  const event = async (type: string) => {
    const [row] = await db.query<{ data: string }>(`SELECT data::text AS data FROM events WHERE type = $1 ORDER BY id DESC LIMIT 1`, [type]);
    if (!row) throw new Error(`no ${type} event was stored during the service phase`);
    return row.data;
  };
  const [payment] = await db.query<{ method: string; attempts: string }>(
    `SELECT payment_method::text AS method, attempts::text AS attempts FROM payments WHERE status = 'succeeded' ORDER BY id DESC LIMIT 1`,
  );
  const [key] = await db.query<{ fingerprint: string; response_body: string }>(
    `SELECT fingerprint, response_body FROM idempotency_keys WHERE response_status = 201 ORDER BY created_at DESC LIMIT 1`,
  );
  return {
    fingerprint: key!.fingerprint,
    response_body: key!.response_body,
    method: payment!.method,
    attempts: payment!.attempts,
    payment_created: await event('payment.created'),
    order_processing: await event('payment_order.processing'),
    order_paid: await event('payment_order.paid'),
    payment_succeeded: await event('payment.succeeded'),
  };
}

export const benchmark: Benchmark = {
  name: 'payments',
  description: 'POST /v1/payments (create and succeed) throughput and latency vs. pgbench on the same SQL',
  run,
};
