// The worker's passes, each timed on its own over the benchmark's database (with BENCH_HISTORY, over
// the preloaded history too): the same fixed amount of due work is planted before every pass —
// BENCH_PASSES_ROWS (default 1,000) open orders past their expiry, expired idempotency records,
// webhook attempts and finished deliveries past the 30-day retention, undispatched events — and the
// pass runs as the worker runs it, until it finds nothing more. The delivery pass sends each event
// to a receiver in this process (one HTTP 200 each), as the worker's delivery engine does. The
// status-check claims and the settlement pass find nothing due: their cost is the look for it.
// Each pass is repeated BENCH_PASSES_REPEAT times (default 5); the median counts. The figure that
// matters is each pass's time on the preloaded database against the empty one (bench/run.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccount } from '../src/domain/accounts/service.js';
import { createWebhookEndpoint } from '../src/domain/webhooks/service.js';
import { createSender } from '../src/domain/webhooks/sender.js';
import { runDeliveryPass } from '../src/domain/webhooks/delivery/engine.js';
import { webhookBacklog } from '../src/domain/webhooks/delivery/queue.js';
import { sweepWebhookHistory } from '../src/domain/webhooks/delivery/retention.js';
import { expireDuePaymentOrders } from '../src/domain/payment-orders/service.js';
import { sweepExpiredKeys } from '../src/idempotency/store.js';
import { runSettlements } from '../src/domain/terms/settlement-job.js';
import { claimDue } from '../src/movement/worker.js';
import { loadConfig } from '../src/config.js';
import { createEncryptor } from '../src/kernel/encryption.js';
import { parseId } from '../src/kernel/ids.js';
import { openPostgres, runMigrations, type Db } from '../src/storage/db.js';
import { payments, refunds } from '../src/storage/schema.js';
import { createBenchDatabase, type BenchDatabase } from './lib/database.js';
import { preloadForBench } from './lib/history-run.js';
import { round } from './lib/stats.js';
import type { BenchOptions, BenchResult, Benchmark } from './lib/types.js';

const ROWS = Number(process.env.BENCH_PASSES_ROWS || 1000);
const REPEAT = Number(process.env.BENCH_PASSES_REPEAT || 5);
const RETENTION_DAYS = 30;

interface Pass {
  /** Plants this pass's due work (none: it looks and finds nothing). */
  plant?: (db: BenchDatabase, account: string) => Promise<void>;
  /** One pass as the worker runs it; what it did, as a count. */
  run: (db: Db, now: Date) => Promise<number>;
}

/** Runs `step` until it reports nothing done, as the worker does; the total. */
async function untilDone(step: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let n = await step(); n > 0; n = await step()) total += n;
  return total;
}

function passes(delivery: (db: Db, now: Date) => Promise<number>): Record<string, Pass> {
  const nothingDue = (table: typeof payments | typeof refunds, status: string[]) => (db: Db, now: Date) =>
    claimDue(db, { table, due: 'nextStatusCheckAt', status, now, batch: 50, leaseUntil: () => now }).then((rows) => rows.length);
  return {
    'order expiry': {
      plant: (db, account) =>
        db.query(
          `INSERT INTO payment_orders (account_id, id, livemode, status, amount, amount_paid, currency, reference, customer_email, expires_at, version, created_at, updated_at)
           SELECT $1, gen_random_uuid(), false, 'open', 1000, 0, 'EUR', 'due-' || n, 'jane.doe@example.com', now() - interval '1 minute', 1, now() - interval '1 hour', now() - interval '1 hour'
           FROM generate_series(1, $2) AS n`,
          [account, ROWS],
        ).then(() => {}),
      run: (db, now) => untilDone(() => expireDuePaymentOrders(db, now)),
    },
    'idempotency retention': {
      plant: (db, account) =>
        db.query(
          `INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, recovery_point, response_status, response_body, request_id, created_at, expires_at)
           SELECT $1, false, 'due-' || gen_random_uuid(), md5(n::text), 'finished', 201, '{}', 'req_due', now() - interval '25 hours', now() - interval '1 hour'
           FROM generate_series(1, $2) AS n`,
          [account, ROWS],
        ).then(() => {}),
      run: (db) => untilDone(() => sweepExpiredKeys(db)),
    },
    'webhook retention': {
      plant: async (db, account) => {
        const old = `now() - interval '${RETENTION_DAYS + 1} days'`;
        await db.query(
          `INSERT INTO webhook_attempts (account_id, id, livemode, delivery_id, event_id, event_type, endpoint_id, "trigger", attempt_number, url, outcome, response_status, duration_ms, created_at)
           SELECT $1, gen_random_uuid(), false, gen_random_uuid(), gen_random_uuid(), 'payment.succeeded', gen_random_uuid(), 'event', 1, 'https://example.com/hook', 'succeeded', 200, 40, ${old}
           FROM generate_series(1, $2)`,
          [account, ROWS],
        );
        await db.query(
          `INSERT INTO webhook_deliveries (account_id, id, livemode, event_id, endpoint_id, "trigger", status, attempts, next_attempt_at, created_at, updated_at)
           SELECT $1, gen_random_uuid(), false, gen_random_uuid(), gen_random_uuid(), 'redeliver', 'succeeded', 1, ${old}, ${old}, ${old}
           FROM generate_series(1, $2)`,
          [account, ROWS],
        );
      },
      run: (db, now) => untilDone(() => sweepWebhookHistory(db, now, RETENTION_DAYS).then((s) => s.attempts + s.deliveries)),
    },
    'webhook delivery': {
      plant: (db, account) =>
        db.query(
          `INSERT INTO events (account_id, id, livemode, type, object_id, data, created_at)
           SELECT $1, gen_random_uuid(), false, 'payment_order.created', 'ord_due' || n, '{"object":{"object":"payment_order","amount":1000}}', now() - interval '1 second'
           FROM generate_series(1, $2) AS n`,
          [account, ROWS],
        ).then(() => {}),
      run: delivery,
    },
    'payment status checks (none due)': { run: nothingDue(payments, ['pending', 'requires_action']) },
    'refund status checks (none due)': { run: nothingDue(refunds, ['pending']) },
    'settlements (none due)': { run: (db, now) => runSettlements(db, now) },
    'webhook backlog (metrics)': { run: (db, now) => webhookBacklog(db, now).then((b) => b.events + b.deliveries) },
  };
}

async function startReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function run(opts: BenchOptions): Promise<BenchResult> {
  const log = (msg: string) => process.stderr.write(`[passes] ${msg}\n`);
  const config = loadConfig(process.env);
  const encryptor = createEncryptor(config.encryptionKeys);
  const db = await createBenchDatabase(opts.adminUrl);
  const receiver = await startReceiver();
  const sender = createSender({ maxSockets: config.webhooks.concurrency });
  const database = await openPostgres(db.url, { poolSize: 4 });
  try {
    log(`database ${db.name}`);
    await runMigrations(database);
    const account = parseId('acct', (await createAccount(database.db, 'Worker passes benchmark')).id)!;
    await createWebhookEndpoint(database.db, { config: config.webhooks, encryptor, sender }, { accountId: account, livemode: false, requestId: 'bench' }, { url: receiver.url, enabled_events: ['*'] });
    const history = await preloadForBench(db, [account], log);
    const quiet = { info: () => {}, warn: log, error: log } as never;
    const delivery = (d: Db, now: Date) =>
      runDeliveryPass({ db: d, log: quiet, config: config.webhooks, encryptor, sender, now: () => now, random: Math.random }).then((r) => r.dispatchedEvents + r.attempts);
    const measured: Record<string, { medianMs: number; minMs: number; maxMs: number; done: number }> = {};
    for (const [name, pass] of Object.entries(passes(delivery))) {
      const times: number[] = [];
      let done = 0;
      for (let i = 0; i < REPEAT; i++) {
        await pass.plant?.(db, account);
        const started = performance.now();
        done = await pass.run(database.db, new Date());
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      measured[name] = { medianMs: round(times[Math.floor(times.length / 2)]!, 2), minMs: round(times[0]!, 2), maxMs: round(times.at(-1)!, 2), done };
      log(`${name}: median ${measured[name]!.medianMs} ms (did ${done})`);
    }
    return {
      name: 'passes',
      title: `the worker's passes, each over ${ROWS} due rows (or none due), median of ${REPEAT}`,
      rows: Object.entries(measured).map(([name, m]) => ({ label: name, value: `${m.medianMs.toFixed(1)} ms (${m.minMs.toFixed(1)}–${m.maxMs.toFixed(1)}), did ${m.done}` })),
      checks: [],
      pass: true,
      details: { rows: ROWS, repeat: REPEAT, passes: measured, history },
    };
  } finally {
    sender.close();
    await database.close();
    await receiver.close();
    await db.drop();
  }
}

export const benchmark: Benchmark = {
  name: 'passes',
  description: "the worker's passes (expiry, retention, delivery, status-check claims, settlements) over a fixed amount of due work",
  run,
};
