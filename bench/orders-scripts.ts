// The SQL pgbench runs as the ceiling of bench/orders.ts (POST /v1/payment-orders): the very
// statement the service sends (src/domain/payment-orders/one-statement.ts) and the issue's
// "equivalent transaction", with the request body they stand for and the stored sizes they replay.
// bench/trace-sql.ts compares them with what the service sends.
import type { BenchDatabase } from './lib/database.js';
import { ORDER_COLUMNS } from './lib/payment-load.js';
import { UUID7 } from './lib/pgbench-script.js';
import { CREATE_ORDER } from '../src/domain/payment-orders/one-statement.js';

/** Issue 29's targets: orders at least as fast as the equivalent transaction, node's CPU per order at most half PostgreSQL's. */
export const TARGET_RATIO = 1.0;
export const TARGET_NODE_SHARE = 0.5;
export const TARGET_P99_MS = 25;

/** A realistic order: customer, description, two metadata entries. `[<id>]` is unique per request. */
export const ORDER_BODY = {
  amount: 4990,
  currency: 'EUR',
  reference: 'order-[<id>]',
  customer: { email: 'jane.doe@example.com', name: 'Jane Doe' },
  description: 'Web shop order: 2 items, standard shipping',
  metadata: { cart_id: 'cart_[<id>]', channel: 'web' },
};

const KEY = `('bench-' || :client_id::text || '-' || :r::text)`;
const REQ = `('req_' || :client_id::text || '_' || :r::text)`;

/**
 * The statement the service sends (CREATE_ORDER), with one order in it: the service puts the
 * orders of concurrent requests into one (src/storage/coalesce.ts), pgbench's clients each send
 * their own. Each array placeholder becomes a one-element array of the value pgbench makes up.
 */
const ONE_ORDER: string[] = [
  ':acct', 'false', KEY, ':fingerprint', ':response_body', REQ, '86400', UUID7, ':amount', ':currency', `(:reference || :r::text)`,
  ':email', ':name', ':description', ':metadata', `now() + interval '1 day'`, 'now()', UUID7, ':object_id',
  `(:acct::text || '.' || :r::text)`, `('http://127.0.0.1:3000/checkout/' || :acct::text || '.' || :r::text)`, 'NULL', 'NULL',
];

export const PGBENCH_SCRIPT = `\\set r random(1, 9000000000000000000)
${CREATE_ORDER.text.replace(/\$(\d+)::(\w+)\[\]/g, (_, n: string, type: string) => `ARRAY[${ONE_ORDER[Number(n) - 1]!}]::${type}[]`)};
`;

/**
 * The issue's ceiling: "an equivalent transaction (the same inserts the service does)", written
 * the plain way — the three inserts as separate statements in BEGIN … COMMIT, five round trips.
 * The identical one-statement form above is the stricter ceiling; both are reported.
 */
export const PGBENCH_TRANSACTION_SCRIPT = `\\set r random(1, 9000000000000000000)
BEGIN;
INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, recovery_point, locked_at, response_status, response_body, request_id, expires_at)
  VALUES (:acct, false, ${KEY}, :fingerprint, 'finished', NULL, 201, :response_body, ${REQ}, now() + make_interval(secs => 86400))
  ON CONFLICT DO NOTHING;
INSERT INTO payment_orders (${ORDER_COLUMNS})
  VALUES (:acct, ${UUID7}, false, 'open', :amount, 0, :currency, :reference || :r::text, :email, :name, :description, :metadata::jsonb,
          now() + interval '1 day', 1, now(), now());
INSERT INTO events ("account_id", "id", "livemode", "type", "object_id", "data", "request_id", "idempotency_key", "created_at")
  VALUES (:acct, ${UUID7}, false, 'payment_order.created', :object_id, :data::jsonb, ${REQ}, ${KEY}, now());
COMMIT;
`;

/** One stored order, its event and its idempotency record: the literal sizes pgbench replays. */
export async function sampleStoredRequest(db: BenchDatabase) {
  const [event] = await db.query<{ object_id: string; data: string; idempotency_key: string }>(
    `SELECT object_id, data::text AS data, idempotency_key FROM events ORDER BY id DESC LIMIT 1`,
  );
  const [key] = await db.query<{ fingerprint: string; response_body: string; request_id: string }>(
    `SELECT fingerprint, response_body, request_id FROM idempotency_keys WHERE key = $1`,
    [event?.idempotency_key],
  );
  const [order] = await db.query<{ reference: string; metadata: string }>(
    `SELECT reference, metadata::text AS metadata FROM payment_orders ORDER BY id DESC LIMIT 1`,
  );
  if (!event || !key || !order) throw new Error('no order was stored during the service phase');
  return { event, key, order };
}
