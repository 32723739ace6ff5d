// Where does a payment order's time go? Creates orders in this one process, with no HTTP, at a
// fixed concurrency, through successively thicker layers, and reports throughput and — the
// figure that survives a noisy machine best — this process's CPU time per order.
//
//   pg-6rt        node-postgres, the service's six statements verbatim (unnamed statements)
//   pg-6rt-named  the same with named prepared statements (parse once per connection)
//   pg-1commit    the same six round trips but one transaction (claim inside it): one WAL flush
//   pg-1rt        one statement (data-modifying CTEs) per order: one round trip, one commit
//   pg-1rt-named  the same as a named prepared statement
//   drizzle-1rt   the same statement through drizzle's sql`` template and db.execute()
//   drizzle       the service's own functions: claimKey() + createPaymentOrder() (drizzle)
//
// Run: npx tsx bench/experiments/layers.ts [seconds=8] [concurrency=32] [pool=20] [variants…]
import crypto from 'node:crypto';
import pg from 'pg';
import { openPostgres, runMigrations, type Database } from '../../src/storage/db.js';
import { sql } from 'drizzle-orm';
import { createAccount } from '../../src/domain/accounts/service.js';
import { claimKey, fingerprint } from '../../src/idempotency/store.js';
import type { RequestContext } from '../../src/kernel/context.js';
import { createPaymentOrder, paymentOrderView } from '../../src/domain/payment-orders/service.js';
import { newId, parseId } from '../../src/kernel/ids.js';
import { createBenchDatabase } from '../lib/database.js';
import { installExitHandlers, runCleanup, runScript } from '../lib/cleanup.js';
import { summarise } from '../lib/stats.js';
import { ORDER_BODY } from '../orders-scripts.js';

const [secondsArg, concurrencyArg, poolArg, ...only] = process.argv.slice(2);
const seconds = Number(secondsArg ?? 8);
const concurrency = Number(concurrencyArg ?? 32);
const poolSize = Number(poolArg ?? 20);
const adminUrl = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

// The order of bench/orders.ts, its [<id>] placeholders as one fixed id.
const BODY = { ...ORDER_BODY, reference: 'order-x', metadata: { cart_id: 'cart_x', channel: 'web' } };

const CLAIM = `INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, locked_at, request_id, expires_at)
        VALUES ($1, $2, $3, $4, now(), $5, now() + make_interval(secs => $6)) ON CONFLICT DO NOTHING RETURNING recovery_point`;
const COLS = `"account_id", "id", "livemode", "status", "amount", "amount_paid", "currency", "reference", "customer_email", "customer_name", "description", "metadata", "expires_at", "version", "created_at", "updated_at"`;
const ORDER = `insert into "payment_orders" (${COLS}) values ($1, $2, $3, $4, $5, default, $6, $7, $8, $9, $10, $11, $12, default, $13, $14) returning ${COLS}`;
const EVENT = `insert into "events" ("account_id", "id", "livemode", "type", "object_id", "data", "request_id", "idempotency_key", "created_at", "dispatched_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, default)`;
const FINISH = `UPDATE idempotency_keys SET response_status = $1, response_body = $2, recovery_point = 'finished', locked_at = NULL
        WHERE account_id = $3 AND livemode = $4 AND key = $5 AND request_id = $6 AND response_status IS NULL RETURNING 1 AS ok`;
// One statement: the key row is written already finished; the order and event only if the key was new.
const ONE_RT = `WITH k AS (
    INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, request_id, expires_at, recovery_point, response_status, response_body)
    VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6), 'finished', 201, $7)
    ON CONFLICT DO NOTHING RETURNING 1),
  o AS (
    INSERT INTO payment_orders (account_id, id, livemode, status, amount, currency, reference, customer_email, customer_name, description, metadata, expires_at, created_at, updated_at)
    SELECT $1, $8, $2, 'open', $9, $10, $11, $12, $13, $14, $15, $16, $17, $17 FROM k RETURNING 1),
  e AS (
    INSERT INTO events (account_id, id, livemode, type, object_id, data, request_id, idempotency_key, created_at)
    SELECT $1, $18, $2, 'payment_order.created', $19, $20, $5, $3, $17 FROM k RETURNING 1)
  SELECT (SELECT count(*) FROM k) AS claimed`;

type Op = (i: number) => Promise<void>;

/** What the service computes in JS before/after the insert: ids, the view, both JSON texts. */
function prepared(accountUuid: string) {
  const now = new Date();
  const id = newId('ord').uuid;
  const key = crypto.randomUUID();
  const reqId = newId('req').id;
  const row = {
    accountId: accountUuid, id, livemode: false, status: 'open' as const, amount: BODY.amount, amountPaid: 0, currency: BODY.currency,
    reference: `order-${key}`, customerEmail: BODY.customer.email, customerName: BODY.customer.name, customerId: null, description: BODY.description,
    metadata: BODY.metadata, expiresAt: new Date(now.getTime() + 86400_000), version: 1, createdAt: now, updatedAt: now,
    checkoutToken: null, checkoutUrl: null, successUrl: null, cancelUrl: null, captureMethod: 'automatic' as const,
    setupFutureUsage: null,
  };
  const view = paymentOrderView(row);
  return { now, id, key, reqId, row, view, data: JSON.stringify({ object: view }), body: JSON.stringify(view) };
}

function variants(database: Database, pool: pg.Pool, accountUuid: string): Record<string, Op> {
  const sixRoundTrips = (named: boolean, oneCommit: boolean): Op => async () => {
    const p = prepared(accountUuid);
    const q = (name: string, text: string, values: unknown[]) => (named ? { name, text, values } : { text, values });
    const claimValues = [accountUuid, false, p.key, 'x'.repeat(43), p.reqId, 86400];
    const client = await pool.connect();
    try {
      if (!oneCommit) {
        client.release();
        await pool.query(q('claim', CLAIM, claimValues));
      }
      const c = oneCommit ? client : await pool.connect();
      try {
        await c.query('begin');
        if (oneCommit) await c.query(q('claim', CLAIM, claimValues));
        await c.query(q('order', ORDER, [accountUuid, p.id, false, 'open', BODY.amount, BODY.currency, p.row.reference, BODY.customer.email,
          BODY.customer.name, BODY.description, JSON.stringify(BODY.metadata), p.row.expiresAt.toISOString(), p.now.toISOString(), p.now.toISOString()]));
        await c.query(q('event', EVENT, [accountUuid, newId('evt').uuid, false, 'payment_order.created', p.view.id, p.data, p.reqId, p.key, p.now.toISOString()]));
        const r = await c.query(q('finish', FINISH, [201, p.body, accountUuid, false, p.key, p.reqId]));
        if (r.rowCount !== 1) throw new Error('not owner');
        await c.query('commit');
      } finally {
        if (!oneCommit) c.release();
      }
    } finally {
      if (oneCommit) client.release();
    }
  };
  const oneRoundTrip = (named: boolean): Op => async () => {
    const p = prepared(accountUuid);
    const values = [accountUuid, false, p.key, 'x'.repeat(43), p.reqId, 86400, p.body, p.id, BODY.amount, BODY.currency,
      p.row.reference, BODY.customer.email, BODY.customer.name, BODY.description, JSON.stringify(BODY.metadata), p.row.expiresAt.toISOString(),
      p.now.toISOString(), newId('evt').uuid, p.view.id, p.data];
    const r = await pool.query(named ? { name: 'create_order', text: ONE_RT, values } : { text: ONE_RT, values });
    if (Number(r.rows[0].claimed) !== 1) throw new Error('not claimed');
  };
  return {
    'pg-6rt': sixRoundTrips(false, false),
    'pg-6rt-named': sixRoundTrips(true, false),
    'pg-1commit': sixRoundTrips(false, true),
    'pg-1rt': oneRoundTrip(false),
    'pg-1rt-named': oneRoundTrip(true),
    'drizzle-1rt': async () => {
      const p = prepared(accountUuid);
      const res = (await database.db.execute(sql`WITH k AS (
          INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, request_id, expires_at, recovery_point, response_status, response_body)
          VALUES (${accountUuid}, ${false}, ${p.key}, ${'x'.repeat(43)}, ${p.reqId}, now() + make_interval(secs => ${86400}), 'finished', 201, ${p.body})
          ON CONFLICT DO NOTHING RETURNING 1),
        o AS (
          INSERT INTO payment_orders (account_id, id, livemode, status, amount, currency, reference, customer_email, customer_name, description, metadata, expires_at, created_at, updated_at)
          SELECT ${accountUuid}, ${p.id}, ${false}, 'open', ${BODY.amount}, ${BODY.currency}, ${p.row.reference}, ${BODY.customer.email}, ${BODY.customer.name},
                 ${BODY.description}, ${JSON.stringify(BODY.metadata)}, ${p.row.expiresAt.toISOString()}, ${p.now.toISOString()}, ${p.now.toISOString()} FROM k RETURNING 1),
        e AS (
          INSERT INTO events (account_id, id, livemode, type, object_id, data, request_id, idempotency_key, created_at)
          SELECT ${accountUuid}, ${newId('evt').uuid}, ${false}, 'payment_order.created', ${p.view.id}, ${p.data}, ${p.reqId}, ${p.key}, ${p.now.toISOString()} FROM k RETURNING 1)
        SELECT (SELECT count(*) FROM k) AS claimed`)) as unknown as { rows: { claimed: string }[] };
      if (Number(res.rows[0]!.claimed) !== 1) throw new Error('not claimed');
    },
    drizzle: async () => {
      const ctx: RequestContext = { accountId: accountUuid, livemode: false, requestId: newId('req').id };
      const key = crypto.randomUUID();
      const body = { ...BODY, reference: `order-${key}` };
      const claim = await claimKey(database.db, ctx, key, fingerprint('POST', '/v1/payment-orders', body), { retentionS: 86400, lockTimeoutS: 60 });
      if (claim.kind !== 'owner') throw new Error('not owner');
      ctx.idempotency = claim.claim;
      const outcome = await createPaymentOrder(database.db, ctx, body, 'http://127.0.0.1:3000');
      if (outcome.status !== 201) throw new Error(`status ${outcome.status}`);
    },
  };
}

async function measure(op: Op): Promise<{ perS: number; cpuMsPerOp: number; p50: number; p99: number; n: number }> {
  const latencies: number[] = [];
  const stopAt = Date.now() + seconds * 1000;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = 0; Date.now() < stopAt; i++) {
        const s = process.hrtime.bigint();
        await op(w * 1e9 + i);
        latencies.push(Number(process.hrtime.bigint() - s) / 1e6);
      }
    }),
  );
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const s = summarise(latencies);
  return { perS: latencies.length / wallS, cpuMsPerOp: (cpu.user + cpu.system) / 1000 / latencies.length, p50: s.p50, p99: s.p99, n: latencies.length };
}

async function main() {
  installExitHandlers(20 * 60_000);
  const db = await createBenchDatabase(adminUrl);
  const database = await openPostgres(db.url, { poolSize });
  await runMigrations(database);
  const account = await createAccount(database.db, 'layers');
  const accountUuid = parseId('acct', account.id)!;
  const pool = new pg.Pool({ connectionString: db.url, max: poolSize });
  pool.on('error', () => {}); // idle clients cut by the final DROP DATABASE … WITH (FORCE)
  const all = variants(database, pool, accountUuid);
  const names = only.length ? only : Object.keys(all);
  console.log(`${seconds} s per variant, concurrency ${concurrency}, pool ${poolSize}, after a 2 s warm-up each`);
  console.log('variant        orders/s   cpu ms/order   p50 ms   p99 ms');
  for (const name of names) {
    const op = all[name];
    if (!op) throw new Error(`unknown variant ${name}`);
    await measureWarm(op);
    const r = await measure(op);
    console.log(`${name.padEnd(13)} ${r.perS.toFixed(0).padStart(9)} ${r.cpuMsPerOp.toFixed(3).padStart(14)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)}`);
  }
  await pool.end();
  await database.close();
  await runCleanup();
}

async function measureWarm(op: Op) {
  const stopAt = Date.now() + 2000;
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
    for (let i = 0; Date.now() < stopAt; i++) await op(w * 1e9 + i);
  }));
}

runScript(main);
