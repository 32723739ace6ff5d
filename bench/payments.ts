// POST /v1/payments that succeed (test card 4242…, the in-process simulated processor answering
// at once): the service's throughput, p50/p99 and CPU per payment, against the database's own
// ceiling for the very same SQL measured by pgbench in the same run, at the same concurrency.
//
// A card payment is three statements (src/domain/payments/one-statement.ts, finish-at-once.ts),
// each a named prepared statement sent on its own (autocommit):
//   1. read the order (unlocked) to plan the route and compute the rows;
//   2. phase 1: one data-modifying CTE — order → processing, payment, two events, idempotency key
//      with its recovery point;
//   —  the connector call, no transaction open (phase 2);
//   3. phase 3: one data-modifying CTE — payment → succeeded, order → paid, journal entry, lines
//      and balances, two events, the answer stored on the key.
// Phases 1 and 3 take their values as arrays: the service sends the payments of concurrent
// requests in one statement (src/storage/batched.ts), pgbench's clients each send their own (a
// one-element array), as with the orders' create (bench/orders-scripts.ts).
// The pgbench script is built from the service's own statement texts (AT_ONCE_STATEMENTS), with
// each bind parameter replaced by a pgbench variable or expression, the event snapshots, request
// fingerprint and response body that the service stored in this run, and a fresh open order per
// transaction (so that every transaction does the whole work, as every service request does).
// pgbench also sends one more, trivial statement per transaction (SELECT … \gset) to fix the
// payment's and journal entry's ids that two statements share; the service makes them in memory.
//
// Beside it, in the same run and on the same service and database: the saved-card scenario
// (bench/payments-saved.ts), a saved card charged off session through the general movement path,
// against pgbench on the statements that path sends, traced at the start of the run.
import { setUpTenant, type Tenant } from './lib/tenant.js';
import { AT_ONCE_STATEMENTS } from '../src/domain/payments/one-statement.js';
import { newId } from '../src/kernel/ids.js';
import { openPostgres } from '../src/storage/db.js';
import { checkLedger } from '../src/ledger/check.js';
import { createBenchDatabase, type BenchDatabase } from './lib/database.js';
import { startServiceProcess } from './lib/service.js';
import { preloadForBench } from './lib/history-run.js';
import { runPgbench } from './lib/pgbench.js';
import { UUID7 } from './lib/pgbench-script.js';
import { AMOUNT, BALANCES, KEY, ORDER, PGBENCH_ORDERS_PER_CLIENT, REQ, insertOpenOrders, insertPgbenchOrders, payLoad, publicIdOfOrder, TEST_CARD } from './lib/payment-load.js';
import { figures, measureScenario, type Measured, type Scenario } from './lib/payment-scenario.js';
import { postJson } from './lib/trace.js';
import { CARDS_PER_CUSTOMER, CUSTOMERS, SAVED_CHARGE_PREFIX, SAVED_PGBENCH_FIRST_RUN, saveCards, savedCardScenario, savedCardScript } from './payments-saved.js';
import type { BenchOptions, BenchResult, Benchmark, Check } from './lib/types.js';

export { TARGET_NODE_SHARE, TARGET_P99_MS, TARGET_RATIO } from './lib/payment-scenario.js';
const ORDER_PUBLIC = publicIdOfOrder('ord');
const PAY_PUBLIC = publicIdOfOrder('pay');

/**
 * Replaces each $n of `text` by what pgbench sends in its place; an array parameter (`$n::type[]`,
 * the statements that take a batch of payments) becomes a one-element array of it: the service
 * puts concurrent payments into one statement, pgbench's clients each send their own.
 */
function bind(text: string, params: Record<number, string>): string {
  const value = (n: string) => {
    const v = params[Number(n)];
    if (v === undefined) throw new Error(`no pgbench value for $${n}`);
    return v;
  };
  return text.replace(/\$(\d+)::(\w+)\[\]/g, (_, n: string, type: string) => `ARRAY[${value(n)}]::${type}[]`).replace(/\$(\d+)/g, (_, n: string) => value(n));
}

const LINES = `'[{"ledger_account":"processor_clearing","amount":${AMOUNT}},{"ledger_account":"merchant_available","amount":-${AMOUNT}}]'`;

export const PGBENCH_SCRIPT = `\\set n :n + 1
\\set r random(1, 9000000000000000000)
\\set s1 random(0, 15)
\\set s2 random(0, 15)
SELECT ${UUID7} AS pay_id, ${UUID7} AS txn_id \\gset
${bind(AT_ONCE_STATEMENTS.readOrder, { 1: ':acct', 2: 'false', 3: ORDER })};
${bind(AT_ONCE_STATEMENTS.createPayment, {
  1: ':acct', 2: 'false', 3: ORDER, 4: '1', 5: 'now()', 6: ':pay_id', 7: String(AMOUNT), 8: "'EUR'", 9: ':method', 10: `'["simulator_a","simulator_b"]'`,
  11: "'{}'", 12: "now() + interval '2 minutes'", 13: UUID7, 14: ORDER_PUBLIC, 15: ':order_processing', 16: UUID7, 17: PAY_PUBLIC,
  18: ':payment_created', 19: REQ, 20: KEY, 21: ':fingerprint', 22: "('payment_created:' || :pay_id)", 23: '86400', 24: "'automatic'",
  25: `'{"rule":"default","strategy":"priority","candidates":[{"connector":"simulator_a"},{"connector":"simulator_b"}],"chosen":"simulator_a"}'`,
})};
${bind(AT_ONCE_STATEMENTS.finishSucceeded, {
  1: ':acct', 2: 'false', 3: ':pay_id', 4: '1', 5: "'simulator_a'", 6: "('simulator_a_ch_bench' || :r::text)", 7: ':attempts', 8: 'now()', 9: ORDER,
  10: '2', 11: String(AMOUNT), 12: ':txn_id', 13: "'EUR'", 14: LINES, 15: BALANCES, 16: UUID7, 17: "'payment_order.paid'", 18: ORDER_PUBLIC, 19: ':order_paid',
  20: UUID7, 21: PAY_PUBLIC, 22: REQ, 23: KEY, 24: ':response_body', 25: ':method',
})};
`;

/** Fresh open orders for the service, handed out one per request. */
async function openOrders(db: BenchDatabase, tenant: Tenant, count: number): Promise<() => string> {
  const ids = Array.from({ length: count }, () => newId('ord'));
  await insertOpenOrders(db, tenant.accountUuid, ids.map((x) => x.uuid));
  let next = 0;
  return () => {
    if (next >= ids.length) throw new Error('the benchmark ran out of open orders');
    return ids[next++]!.id;
  };
}

function typedCardScenario(opts: BenchOptions, db: BenchDatabase, url: string, tenant: Tenant, nextOrder: () => string): Scenario {
  let run = 0;
  return {
    label: 'typed card',
    load: (durationS) => payLoad(url, tenant.secret, opts.connections, durationS, () => ({ payment_order: nextOrder(), payment_method: { type: 'card', card: TEST_CARD } })),
    pgbench: async () => {
      const sample = await sampleStored(db);
      // Each run pays its own orders: run number r, per client a counter n from 1.
      return (durationS) =>
        runPgbench({
          url: db.url,
          script: PGBENCH_SCRIPT,
          clients: opts.connections,
          threads: opts.pgbenchThreads,
          durationS,
          vars: { acct: tenant.accountUuid, run: String(++run), n: '0', ...sample },
          protocol: opts.pgbenchProtocol ?? 'prepared',
        });
    },
  };
}

/**
 * BENCH_ROUTING_STRATEGY (`priority`, `volume_split`, `success_rate`): both scenarios pay under one
 * routing rule of that strategy over the two simulators (docs/routing.md), so that the strategy's
 * work on the payment path is in the service's figures. The ceilings stay the statements of a
 * payment without a rule: what the strategy adds shows as a lower ratio.
 */
const STRATEGY = process.env.BENCH_ROUTING_STRATEGY || undefined;

async function routeBy(url: string, secret: string, strategy: string, log: (msg: string) => void): Promise<void> {
  const weight = strategy === 'volume_split' ? { weight: 1 } : {};
  const rules = [{ name: 'bench', strategy, connectors: [{ name: 'simulator_a', ...weight }, { name: 'simulator_b', ...weight }] }];
  const put = await postJson(url, secret, '/v1/routing', { rules }, 'PUT');
  if (put.status !== 200) throw new Error(`PUT /v1/routing answered ${put.status}: ${JSON.stringify(put.body)}`);
  log(`routing: one rule, strategy ${strategy}, over simulator_a and simulator_b`);
}

async function run(opts: BenchOptions): Promise<BenchResult> {
  const log = (msg: string) => process.stderr.write(`[payments] ${msg}\n`);
  log('tracing one off-session saved-card payment for its pgbench script');
  const saved = await savedCardScript(opts.adminUrl);
  const db = await createBenchDatabase(opts.adminUrl);
  try {
    // Enough open orders for the fastest plausible service (2000 payments/s) over every phase.
    const serviceOrders = 2000 * (opts.warmupS + opts.rounds * opts.durationS) + 10_000;
    const pgbenchRuns = opts.rounds + (opts.warmupS > 0 ? 1 : 0);
    log(`database ${db.name}; per scenario ${serviceOrders} + ${pgbenchRuns * opts.connections * PGBENCH_ORDERS_PER_CLIENT} open orders`);
    const tenant = await setUpTenant(db);
    const history = await preloadForBench(db, [tenant.accountUuid], log);
    const typedOrders = await openOrders(db, tenant, serviceOrders);
    const savedOrders = await openOrders(db, tenant, serviceOrders);
    await insertPgbenchOrders(db, tenant.accountUuid, 1, pgbenchRuns, opts.connections);
    await insertPgbenchOrders(db, tenant.accountUuid, SAVED_PGBENCH_FIRST_RUN, pgbenchRuns, opts.connections);
    await db.query('VACUUM ANALYZE payment_orders');

    const service = await startServiceProcess({
      databaseUrl: db.url,
      nodeArgs: opts.serviceNodeArgs,
      entry: opts.serviceEntry,
      env: { LOG_LEVEL: opts.serviceLogLevel, SIMULATOR_LATENCY_MS: '0', SIMULATOR_URL: '' },
    });
    log(`service pid ${service.pid} on ${service.url}`);
    let typed: Measured;
    let savedCard: Measured;
    try {
      const cards = await saveCards(db, service.url, tenant.secret);
      log(`${cards.length} saved cards`);
      if (STRATEGY) await routeBy(service.url, tenant.secret, STRATEGY, log);
      typed = await measureScenario(opts, db, service.pid, typedCardScenario(opts, db, service.url, tenant, typedOrders), log);
      const scenario = savedCardScenario(opts, db, { url: service.url, secret: tenant.secret, accountUuid: tenant.accountUuid }, cards, savedOrders, saved);
      savedCard = await measureScenario(opts, db, service.pid, scenario, log);
    } catch (err) {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n${service.output()}`, { cause: err });
    } finally {
      await service.stop();
    }

    // Every 201 is a succeeded payment of a paid order, credited once; the ledger holds.
    const [stored] = await db.query<{ succeeded: number; other: number; typed_pgbench: number; saved_pgbench: number }>(
      `SELECT count(*) FILTER (WHERE status = 'succeeded' AND coalesce(connector_reference, '') NOT LIKE 'simulator_a_ch_%bench%' AND coalesce(connector_reference, '') NOT LIKE $1)::int AS succeeded,
              count(*) FILTER (WHERE status <> 'succeeded')::int AS other,
              count(*) FILTER (WHERE status = 'succeeded' AND connector_reference LIKE 'simulator_a_ch_bench%')::int AS typed_pgbench,
              count(*) FILTER (WHERE status = 'succeeded' AND connector_reference LIKE $1)::int AS saved_pgbench
       FROM payments WHERE created_at > now() - interval '1 hour'`, // not a preloaded history's (three hours old at least)
      [`${SAVED_CHARGE_PREFIX}%`],
    );
    const ledgerDb = await openPostgres(db.url, { poolSize: 1 });
    const ledger = await checkLedger(ledgerDb.db, { accountId: tenant.accountUuid }).finally(() => ledgerDb.close());

    const a = figures('typed card', typed, PGBENCH_SCRIPT);
    const b = figures('saved card off session', savedCard, saved.script);
    const sent201 = typed.sent201 + savedCard.sent201;
    const slack = 2 * opts.connections * (opts.rounds + (opts.warmupS > 0 ? 1 : 0));
    const checks: Check[] = [
      ...a.checks,
      ...b.checks,
      {
        name: 'succeeded payments vs. 201 answers',
        target: `${sent201}..${sent201 + slack}`,
        actual: String(stored?.succeeded),
        pass: (stored?.succeeded ?? 0) >= sent201 && (stored?.succeeded ?? 0) <= sent201 + slack && stored?.other === 0,
      },
      // Every pgbench transaction must have done the whole work (a fresh open order each time).
      { name: 'typed card: pgbench transactions that paid an order', target: String(typed.pgbenchTransactions), actual: String(stored?.typed_pgbench), pass: stored?.typed_pgbench === typed.pgbenchTransactions },
      {
        name: 'saved card: pgbench transactions that paid an order',
        target: String(savedCard.pgbenchTransactions),
        actual: String(stored?.saved_pgbench),
        pass: stored?.saved_pgbench === savedCard.pgbenchTransactions,
      },
      { name: 'ledger invariant', target: 'holds', actual: ledger.ok ? 'holds' : JSON.stringify(ledger).slice(0, 200), pass: ledger.ok },
    ];
    return {
      name: 'payments',
      title: `POST /v1/payments (succeeds, in-process simulator, no added latency): a typed card, and a saved card off session — ${opts.connections} connections, ${opts.rounds > 1 ? `${opts.rounds} × ` : ''}${opts.durationS} s`,
      rows: [...a.rows, ...b.rows],
      checks,
      pass: checks.every((c) => c.pass),
      notes: [...(a.notes ?? []), ...(b.notes ?? []), `node CPU per payment is the service's own overhead beyond the database's work`],
      details: {
        ...a.details,
        savedCardOffSession: { ...b.details, savedCards: CUSTOMERS * CARDS_PER_CUSTOMER, trace: saved.trace },
        ledger: { ok: ledger.ok, entries: ledger.entries },
        history,
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
  description: 'POST /v1/payments (typed card; saved card off session) throughput and latency vs. pgbench on the same SQL',
  run,
};
