// What both payment scenarios (bench/payments.ts: a typed card; bench/payments-saved.ts: a saved
// card off session) share: the open orders they pay, pgbench's per-transaction names for a fresh
// order, and the HTTP load paying one order per request with its own Idempotency-Key.
import crypto from 'node:crypto';
import autocannon, { type Options, type Result } from 'autocannon';
import type { BenchDatabase } from './database.js';
import { withTimeout } from './cleanup.js';

export const AMOUNT = 4990;
/** The simulators' succeeding test card. */
export const TEST_CARD = { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: '123' };
/** Open orders per pgbench client and run: enough for 9,600 transactions/s over a 10 s phase. */
export const PGBENCH_ORDERS_PER_CLIENT = 3000;

export const ORDER_COLUMNS =
  '"account_id", "id", "livemode", "status", "amount", "amount_paid", "currency", "reference", "customer_email", "customer_name", "description", "metadata", "expires_at", "version", "created_at", "updated_at"';
// pgbench names the order a transaction pays by its run, client and counter n (`\set n :n + 1`).
/**
 * A payment's balance changes as the journal's statement takes them (src/ledger/journal-sql.ts),
 * each on a random slot (:s1, :s2), as the ledger spreads a balance so that payments do not queue
 * on one row.
 */
export const BALANCES = `('[{"ledger_account":"merchant_available","slot":' || :s1::text || ',"amount":-${AMOUNT}},{"ledger_account":"processor_clearing","slot":' || :s2::text || ',"amount":${AMOUNT}}]')`;
export const KEY = `('bench-' || :run::text || '-' || :client_id::text || '-' || :n::text)`;
export const REQ = `('req_' || :run::text || '_' || :client_id::text || '_' || :n::text)`;
const ORDER_SEED = `(:run::text || '-' || :client_id::text || '-' || :n::text)`;
export const ORDER = `md5('bench-order-' || ${ORDER_SEED})::uuid`;
/** A fresh public id with `prefix` for this transaction's order. */
export const publicIdOfOrder = (prefix: string) => `('${prefix}_' || substr(md5('bench-${prefix}-' || ${ORDER_SEED}), 1, 26))`;

/** Open orders with these ids, as the service pays them. */
export async function insertOpenOrders(db: BenchDatabase, accountUuid: string, uuids: string[]): Promise<void> {
  for (let i = 0; i < uuids.length; i += 20_000) {
    await db.query(
      `INSERT INTO payment_orders (${ORDER_COLUMNS})
       SELECT $1, id, false, 'open', ${AMOUNT}, 0, 'EUR', 'bench-' || id::text, 'jane.doe@example.com', 'Jane Doe', 'Web shop order', '{"channel":"web"}',
              now() + interval '1 day', 1, now(), now()
       FROM unnest($2::uuid[]) AS id`,
      [accountUuid, uuids.slice(i, i + 20_000)],
    );
  }
}

/** pgbench pays a fresh order per transaction: one per (run, client, n) for runs first..first+runs-1. */
export async function insertPgbenchOrders(db: BenchDatabase, accountUuid: string, firstRun: number, runs: number, clients: number): Promise<void> {
  await db.query(
    `INSERT INTO payment_orders (${ORDER_COLUMNS})
     SELECT $1, md5('bench-order-' || r || '-' || c || '-' || n)::uuid, false, 'open', ${AMOUNT}, 0, 'EUR', 'pgbench-' || r || '-' || c || '-' || n,
            'jane.doe@example.com', 'Jane Doe', 'Web shop order', '{"channel":"web"}', now() + interval '1 day', 1, now(), now()
     FROM generate_series($2::int, $2::int + $3::int - 1) r, generate_series(0, $4::int - 1) c, generate_series(1, ${PGBENCH_ORDERS_PER_CLIENT}) n`,
    [accountUuid, firstRun, runs, clients],
  );
}

export interface LoadResult {
  durationS: number;
  latencies: number[];
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
}

/** autocannon on POST /v1/payments with a fresh body (a fresh open order) and Idempotency-Key per request. */
export async function payLoad(url: string, secret: string, connections: number, durationS: number, nextBody: () => unknown): Promise<LoadResult> {
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
                body: JSON.stringify(nextBody()),
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
