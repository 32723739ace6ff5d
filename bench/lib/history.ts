// A realistic history preloaded into a database with set-based SQL (INSERT … SELECT over
// generate_series), so that the benchmarks (BENCH_HISTORY=N npm run bench) and the plan test
// (test/operations/plans.test.ts) run over tables that have grown the way the service grows them.
//
// One unit is one payment order's life, written as the service writes it (docs/benchmarks.md says
// what is in it): by `i % 20`, 0 = an order that expired unpaid; 1 = a declined payment, the order
// open again, then expired; 2–19 = paid by a succeeded card payment with its journal entry; 2–4
// also refunded (a succeeded refund with its two entries). Every event has one delivery to the
// account's endpoint and one attempt (i % 20 = 7: a failed attempt, then a succeeded one); every
// request in the last IDEMPOTENCY_RETENTION_S keeps its idempotency record (older ones the worker
// has deleted). Ids are UUIDv7 of the unit's time, spread over the `days` before three hours ago, so new rows land
// after the history as they do in the service. The balances the history's journal lines add up to
// are added to ledger_balances, so the ledger check still holds. Public ids inside text and JSON
// have their real prefix and length, not the TypeID encoding of the row's uuid.
import crypto from 'node:crypto';
import pg from 'pg';

export interface HistoryOptions {
  /** Units (payment orders' lives) to write; about 5.2 events each. */
  units: number;
  /** The accounts the caller uses (the bench's tenant): a `ownShare` of the units is theirs, in test mode. */
  ownAccounts: string[];
  /** Other accounts created for the rest of the history (default 200), each with an enabled endpoint. */
  otherAccounts?: number;
  ownShare?: number;
  /** How far back the history goes (default 29: inside the default WEBHOOK_HISTORY_RETENTION_DAYS of 30). */
  days?: number;
  /** Idempotency records are kept for this long (default 86,400, IDEMPOTENCY_RETENTION_S's default). */
  keyRetentionS?: number;
  /** Units per batch of statements (default 100,000). */
  batch?: number;
  /** VACUUM ANALYZE afterwards (default); false: ANALYZE only. */
  vacuum?: boolean;
  log?: (msg: string) => void;
}

export interface HistoryReport {
  units: number;
  /** Rows per table after the preload (growing tables only). */
  rows: Record<string, number>;
  insertS: number;
  analyzeS: number;
}

export const GROWING_TABLES = [
  'payment_orders', 'payments', 'refunds', 'events', 'webhook_deliveries', 'webhook_attempts',
  'journal_entries', 'journal_lines', 'idempotency_keys', 'card_reattempts',
] as const;

/** Per-session helpers (pg_temp: nothing is left in the database). */
const FUNCTIONS = [
  // A UUIDv7 of epoch milliseconds `ms` whose random bits come from md5(salt): the same (ms, salt)
  // gives the same id in every statement. Immutable throughout, so PostgreSQL inlines it.
  `CREATE FUNCTION pg_temp.u7(ms bigint, salt text) RETURNS uuid LANGUAGE sql IMMUTABLE AS
   $$ SELECT overlay(overlay(md5(salt) placing lpad(to_hex(ms), 12, '0') || '7' from 1 for 13) placing '8' from 17 for 1)::uuid $$`,
  `CREATE FUNCTION pg_temp.pub(prefix text, id uuid) RETURNS text LANGUAGE sql IMMUTABLE AS
   $$ SELECT prefix || '_' || substr(replace(id::text, '-', ''), 1, 26) $$`,
];

// The units of one batch (account, mode, time, class, amount) and their objects' ids, made once.
const UNITS_SQL = `
CREATE TEMP TABLE h_unit ON COMMIT DROP AS
SELECT v.*, to_timestamp(v.ms / 1000.0) AS at, pg_temp.u7(v.ms, v.s || 'o') AS o, pg_temp.u7(v.ms + 20000, v.s || 'p') AS p,
       pg_temp.u7(v.ms + 7200000, v.s || 'f') AS f
FROM (SELECT i, a.id AS account_id, a.livemode OR (NOT a.own AND i % 3 = 0) AS livemode, i % 20 AS r,
             $3::bigint - ($4::float8 * 1000 * (1 - i::float8 / $5))::bigint AS ms,
             500 + (i * 7919) % 20000 AS amount, $6::text || ':' || i AS s
      FROM generate_series($1::bigint, $2::bigint) AS i
      JOIN h_acct a ON a.n = CASE WHEN i % 100 < $7 THEN (i / 100) % $8 ELSE $8 + i % $9 END) v`;

// Which events a unit writes: [role, type, object prefix, seconds after the unit's time, classes].
const EVENT_KINDS = `
CREATE TEMP TABLE h_kind (role text, type text, obj text, off int, lo int, hi int, extra int[]) ON COMMIT DROP;
INSERT INTO h_kind VALUES
  ('e1', 'payment_order.created', 'ord', 0, 0, 19, NULL),
  ('e2', 'payment_order.processing', 'ord', 20, 1, 19, NULL),
  ('e3', 'payment.created', 'pay', 20, 1, 19, NULL),
  ('e4', 'payment.succeeded', 'pay', 21, 2, 19, NULL),
  ('e5', 'payment_order.paid', 'ord', 21, 2, 19, NULL),
  ('e6', 'payment.failed', 'pay', 21, 1, 1, NULL),
  ('e7', 'payment_order.open', 'ord', 21, 1, 1, NULL),
  ('e8', 'payment_order.expired', 'ord', 3600, 0, 1, NULL),
  ('e9', 'refund.created', 'ref', 7200, 2, 4, NULL),
  ('e10', 'refund.succeeded', 'ref', 7201, 2, 4, NULL);
CREATE TEMP TABLE h_event ON COMMIT DROP AS
SELECT u.*, k.role, k.type, k.obj, k.off, pg_temp.u7(u.ms + k.off * 1000, u.s || k.role) AS eid, u.at + k.off * interval '1 s' AS t,
       CASE k.obj WHEN 'ord' THEN u.o WHEN 'pay' THEN u.p ELSE u.f END AS oid
FROM h_unit u JOIN h_kind k ON u.r BETWEEN k.lo AND k.hi;
CREATE TEMP TABLE h_delivery ON COMMIT DROP AS
SELECT e.account_id, e.livemode, e.eid, e.type, e.t, e.r, w.id AS endpoint_id, w.url, pg_temp.u7(e.ms + e.off * 1000 + 40, e.s || e.role || 'd') AS did,
       e.ms + e.off * 1000 AS ms, e.s || e.role AS s, CASE WHEN e.r = 7 THEN 2 ELSE 1 END AS a
FROM h_event e JOIN h_endpoint w ON w.account_id = e.account_id AND w.livemode = e.livemode`;

const orderJson = (status: string) => `jsonb_build_object('id', pg_temp.pub('ord', u.o), 'object', 'payment_order', 'livemode', u.livemode, 'status', ${status},
  'amount', u.amount, 'amount_paid', CASE WHEN ${status} = 'paid' THEN u.amount ELSE 0 END, 'currency', 'EUR', 'reference', 'hist-order-' || u.s,
  'customer', jsonb_build_object('email', 'jane.doe@example.com', 'name', 'Jane Doe'), 'description', 'Web shop order: 2 items, standard shipping',
  'metadata', jsonb_build_object('cart_id', 'cart_' || u.i, 'channel', 'web'), 'expires_at', u.at + interval '1 hour',
  'checkout_url', 'https://pay.example.com/checkout/' || md5(u.s), 'capture_method', 'automatic', 'version', 1, 'created_at', u.at, 'updated_at', u.at)`;
const paymentJson = (status: string) => `jsonb_build_object('id', pg_temp.pub('pay', u.p), 'object', 'payment', 'livemode', u.livemode, 'status', ${status},
  'payment_order', pg_temp.pub('ord', u.o), 'amount', u.amount, 'currency', 'EUR', 'amount_refunded', 0, 'amount_captured', CASE WHEN ${status} = 'succeeded' THEN u.amount ELSE 0 END,
  'capture_method', 'automatic', 'payment_method', ${METHOD_JSON}, 'connector', 'simulator_a', 'connector_reference', 'simulator_a_ch_' || md5(u.s),
  'failure_code', CASE WHEN u.r = 1 THEN 'card_declined' END, 'decline_type', CASE WHEN u.r = 1 THEN 'retry_later' END,
  'metadata', '{}'::jsonb, 'created_at', u.at, 'updated_at', u.at)`;
const METHOD_JSON = `jsonb_build_object('type', 'card', 'card', jsonb_build_object('brand', 'visa', 'last4', '4242', 'exp_month', 12, 'exp_year', 2030,
  'fingerprint', md5('card' || u.i % 5000), 'issuer_country', 'NL', 'funding', 'credit'))`;
const refundJson = (status: string) => `jsonb_build_object('id', pg_temp.pub('ref', u.f), 'object', 'refund', 'livemode', u.livemode, 'status', ${status},
  'payment', pg_temp.pub('pay', u.p), 'amount', u.amount / 2, 'currency', 'EUR', 'reason', 'requested_by_customer', 'connector', 'simulator_a',
  'metadata', '{}'::jsonb, 'created_at', u.at, 'updated_at', u.at)`;

const paid = 'u.r >= 2';
const refunded = 'u.r BETWEEN 2 AND 4';

const STATEMENTS: [string, string][] = [
  ['payment_orders', `INSERT INTO payment_orders (account_id, id, livemode, status, amount, amount_paid, currency, reference, customer_email, customer_name,
      description, metadata, expires_at, checkout_token, checkout_url, capture_method, version, created_at, updated_at)
    SELECT u.account_id, u.o, u.livemode, CASE WHEN ${paid} THEN 'paid' ELSE 'expired' END, u.amount, CASE WHEN ${paid} THEN u.amount ELSE 0 END, 'EUR',
      'hist-order-' || u.s, 'jane.doe@example.com', 'Jane Doe', 'Web shop order: 2 items, standard shipping', jsonb_build_object('cart_id', 'cart_' || u.i, 'channel', 'web'),
      u.at + interval '1 hour', md5(u.s), 'https://pay.example.com/checkout/' || md5(u.s), 'automatic', CASE WHEN u.r = 1 THEN 5 WHEN u.r = 0 THEN 2 ELSE 3 END,
      u.at, u.at + CASE WHEN ${paid} THEN interval '21 s' ELSE interval '1 hour' END
    FROM h_unit u`],
  ['payments', `INSERT INTO payments (account_id, id, livemode, payment_order_id, status, amount, currency, amount_refunded, amount_captured, payment_method,
      route, connector, connector_reference, attempts, failure_code, failure_message, decline_type, routing, metadata, capture_method, version, created_at, updated_at)
    SELECT u.account_id, u.p, u.livemode, u.o, CASE WHEN u.r = 1 THEN 'failed' ELSE 'succeeded' END, u.amount, 'EUR', CASE WHEN ${refunded} THEN u.amount / 2 ELSE 0 END,
      CASE WHEN u.r = 1 THEN 0 ELSE u.amount END, ${METHOD_JSON}, '{simulator_a,simulator_b}', 'simulator_a', 'simulator_a_ch_' || md5(u.s),
      jsonb_build_array(jsonb_build_object('connector', 'simulator_a', 'outcome', CASE WHEN u.r = 1 THEN 'declined' ELSE 'succeeded' END,
        'error_code', CASE WHEN u.r = 1 THEN 'card_declined' END, 'decline_type', CASE WHEN u.r = 1 THEN 'retry_later' END, 'duration_ms', 180, 'started_at', u.at + interval '20 s')),
      CASE WHEN u.r = 1 THEN 'card_declined' END, CASE WHEN u.r = 1 THEN 'Your card was declined.' END, CASE WHEN u.r = 1 THEN 'retry_later' END,
      '{"rule":"default","strategy":"priority","candidates":[{"connector":"simulator_a"},{"connector":"simulator_b"}],"chosen":"simulator_a"}'::jsonb,
      '{}'::jsonb, 'automatic', 2, u.at + interval '20 s', u.at + interval '21 s'
    FROM h_unit u WHERE u.r >= 1`],
  ['card_reattempts', `INSERT INTO card_reattempts (account_id, livemode, card_fingerprint, brand, kind, decline_type, payment_id, created_at)
    SELECT u.account_id, u.livemode, md5('card' || u.i % 5000), 'visa', 'declined', 'retry_later', u.p, u.at + interval '21 s'
    FROM h_unit u WHERE u.r = 1`],
  ['refunds', `INSERT INTO refunds (account_id, id, livemode, payment_id, status, amount, currency, reason, connector, connector_reference, metadata, version, created_at, updated_at)
    SELECT u.account_id, u.f, u.livemode, u.p, 'succeeded', u.amount / 2, 'EUR', 'requested_by_customer', 'simulator_a', 'simulator_a_re_' || md5(u.s),
      '{}'::jsonb, 2, u.at + interval '2 h', u.at + interval '2 h 1 s'
    FROM h_unit u WHERE ${refunded}`],
  ['events', `INSERT INTO events (account_id, id, livemode, type, object_id, data, request_id, idempotency_key, created_at, dispatched_at)
    SELECT u.account_id, u.eid, u.livemode, u.type, pg_temp.pub(u.obj, u.oid),
      jsonb_build_object('object', CASE u.obj
        WHEN 'ord' THEN ${orderJson("CASE u.type WHEN 'payment_order.created' THEN 'open' ELSE split_part(u.type, '.', 2) END")}
        WHEN 'pay' THEN ${paymentJson("CASE u.type WHEN 'payment.created' THEN 'pending' ELSE split_part(u.type, '.', 2) END")}
        ELSE ${refundJson("CASE u.type WHEN 'refund.created' THEN 'pending' ELSE split_part(u.type, '.', 2) END")} END),
      CASE WHEN u.off < 3600 OR u.obj = 'ref' THEN 'req_' || substr(md5(u.s || u.obj), 1, 26) END,
      CASE WHEN u.off < 3600 OR u.obj = 'ref' THEN 'key-' || md5(u.s || u.obj) END,
      u.t, u.t + interval '40 ms'
    FROM h_event u`],
  ['webhook_deliveries', `INSERT INTO webhook_deliveries (account_id, id, livemode, event_id, endpoint_id, "trigger", status, attempts, next_attempt_at, created_at, updated_at)
    SELECT account_id, did, livemode, eid, endpoint_id, 'event', 'succeeded', a, t + interval '40 ms', t + interval '40 ms',
      t + CASE WHEN a = 2 THEN interval '61 s' ELSE interval '90 ms' END
    FROM h_delivery`],
  ['webhook_attempts', `INSERT INTO webhook_attempts (account_id, id, livemode, delivery_id, event_id, event_type, endpoint_id, "trigger", attempt_number, url, outcome,
      response_status, error_code, error_message, duration_ms, next_retry_at, created_at)
    SELECT account_id, CASE WHEN n = 1 THEN pg_temp.u7(ms + 90, s || 'a') ELSE pg_temp.u7(ms + 60090, s || 'b') END, livemode, did, eid, type, endpoint_id, 'event', n, url,
      CASE WHEN n < a THEN 'failed' ELSE 'succeeded' END, CASE WHEN n < a THEN 500 ELSE 200 END,
      CASE WHEN n < a THEN 'http_status' END, CASE WHEN n < a THEN 'The endpoint answered 500.' END, 45,
      CASE WHEN n < a THEN t + interval '60 s' END, t + (n - 1) * interval '60 s' + interval '90 ms'
    FROM h_delivery, generate_series(1, a) AS n`],
  // The journal: a payment's entry; a refund's reservation and its settlement. Lines go through
  // h_line so that the balances can be added up from the same rows.
  ['journal_entries', `CREATE TEMP TABLE h_line ON COMMIT DROP AS
    SELECT u.account_id, u.livemode, e.id AS entry_id, e.type, e.source_type, e.source_id, e.at, l.line_no, l.ledger_account, l.amount
    FROM h_unit u,
    LATERAL (VALUES (pg_temp.u7(u.ms + 21000, u.s || 'jp'), 'payment', 'payment', u.p, u.at + interval '21 s', u.r >= 2, 'processor_clearing', 'merchant_available', u.amount),
                    (pg_temp.u7(u.ms + 7200000, u.s || 'jr'), 'refund', 'refund', u.f, u.at + interval '2 h', u.r BETWEEN 2 AND 4, 'merchant_available', 'merchant_reserved', u.amount / 2),
                    (pg_temp.u7(u.ms + 7201000, u.s || 'js'), 'refund_settlement', 'refund', u.f, u.at + interval '2 h 1 s', u.r BETWEEN 2 AND 4, 'merchant_reserved', 'processor_clearing', u.amount / 2))
      AS e(id, type, source_type, source_id, at, applies, debit, credit, amount),
    LATERAL (VALUES (1, e.debit, e.amount::bigint), (2, e.credit, -e.amount::bigint)) AS l(line_no, ledger_account, amount)
    WHERE e.applies;
    INSERT INTO journal_entries (account_id, id, livemode, type, currency, source_type, source_id, created_at)
    SELECT DISTINCT account_id, entry_id, livemode, type, 'EUR', source_type, source_id, at FROM h_line`],
  ['journal_lines', `INSERT INTO journal_lines (account_id, entry_id, line_no, livemode, ledger_account, amount)
    SELECT account_id, entry_id, line_no, livemode, ledger_account, amount FROM h_line;
    INSERT INTO ledger_balances (account_id, livemode, ledger_account, currency, slot, balance)
    SELECT account_id, livemode, ledger_account, 'EUR', 0, sum(amount) FROM h_line GROUP BY 1, 2, 3
    ON CONFLICT (account_id, livemode, ledger_account, currency, slot) DO UPDATE SET balance = ledger_balances.balance + excluded.balance`],
  ['idempotency_keys', `INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, recovery_point, response_status, response_body, request_id, created_at, expires_at)
    SELECT u.account_id, u.livemode, 'key-' || md5(u.s || u.obj), md5(u.s || u.obj || 'f'), 'finished', 201,
      jsonb_build_object('object', u.obj, 'id', pg_temp.pub(u.obj, u.oid), 'livemode', u.livemode,
        'status', 'succeeded', 'amount', u.amount, 'currency', 'EUR', 'payment_method', ${METHOD_JSON}, 'created_at', u.t)::text,
      'req_' || substr(md5(u.s || u.obj), 1, 26), u.t, u.t + make_interval(secs => $1)
    FROM h_event u
    WHERE u.role IN ('e1', 'e3', 'e9') AND u.t + make_interval(secs => $1) > now()`],
];

async function setUp(client: pg.Client, o: Required<Omit<HistoryOptions, 'log'>>, seed: string): Promise<void> {
  for (const f of FUNCTIONS) await client.query(f);
  await client.query(`CREATE TEMP TABLE h_acct (n int PRIMARY KEY, id uuid, livemode boolean, own boolean)`);
  await client.query(`CREATE TEMP TABLE h_endpoint (account_id uuid, livemode boolean, id uuid, url text)`);
  await client.query(`INSERT INTO h_acct SELECT n - 1, id, false, true FROM unnest($1::uuid[]) WITH ORDINALITY AS a(id, n)`, [o.ownAccounts]);
  await client.query(
    `INSERT INTO accounts (id, name, status, live_enabled, created_at, updated_at)
     SELECT gen_random_uuid(), 'History account ' || n, 'active', true, now() - make_interval(days => $2 + 1), now() - make_interval(days => $2 + 1)
     FROM generate_series(1, $1) AS n`,
    [o.otherAccounts, o.days],
  );
  await client.query(`INSERT INTO h_acct SELECT $1 + row_number() OVER (ORDER BY id) - 1, id, false, false FROM accounts WHERE name LIKE 'History account %' AND id <> ALL($2::uuid[])`, [
    o.ownAccounts.length,
    o.ownAccounts,
  ]);
  // Every account's endpoint (both modes) receives every event. The callers' own accounts get a
  // deleted one, so that nothing the benchmark does now is sent to it.
  await client.query(
    `INSERT INTO webhook_endpoints (account_id, id, livemode, url, enabled_events, status, disabled_reason, secret_encrypted, version, created_at, updated_at, deleted_at)
     SELECT a.id, gen_random_uuid(), m.livemode, 'https://hooks.example.com/' || md5(a.id::text || m.livemode), '{*}',
            CASE WHEN a.own THEN 'disabled' ELSE 'enabled' END, CASE WHEN a.own THEN 'requested' END, 'history:' || md5($1 || a.id::text || m.livemode),
            1, now() - make_interval(days => $2 + 1), now() - make_interval(days => $2 + 1), CASE WHEN a.own THEN now() END
     FROM h_acct a CROSS JOIN (VALUES (false), (true)) AS m(livemode)
     RETURNING account_id, livemode, id, url`,
    [seed, o.days],
  ).then((r) => client.query(`INSERT INTO h_endpoint SELECT * FROM json_populate_recordset(null::h_endpoint, $1)`, [JSON.stringify(r.rows)]));
}

/** Writes `units` units of history into the database at `url`, then analyzes it. */
export async function preloadHistory(url: string, options: HistoryOptions): Promise<HistoryReport> {
  const o = { otherAccounts: 200, ownShare: 0.25, days: 29, keyRetentionS: 86_400, batch: 100_000, vacuum: true, ...options };
  const log = options.log ?? (() => {});
  const seed = crypto.randomBytes(4).toString('hex');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const started = performance.now();
  try {
    await client.query(`SET synchronous_commit = off`);
    await setUp(client, o, seed);
    // Secondary indexes are built once at the end (much faster than growing them row by row);
    // primary keys stay, so that a unit written twice would fail rather than pass unseen.
    const { rows: indexes } = await client.query<{ name: string; def: string }>(
      `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
       WHERE i.schemaname = current_schema() AND i.tablename = ANY($1)
         AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
      [[...GROWING_TABLES]],
    );
    for (const ix of indexes) await client.query(`DROP INDEX ${ix.name}`);
    const now = new Date().toISOString();
    const perTable: Record<string, number> = {};
    const own = o.ownAccounts.length ? Math.round(o.ownShare * 100) : 0;
    for (let lo = 1; lo <= o.units; lo += o.batch) {
      const hi = Math.min(o.units, lo + o.batch - 1);
      await client.query('BEGIN');
      // The history's last unit is three hours old, so that its refunds (two hours on) are past too.
      await client.query(UNITS_SQL, [lo, hi, Date.parse(now) - 3 * 3_600_000, o.days * 86_400, o.units, seed, own, Math.max(1, o.ownAccounts.length), o.otherAccounts]);
      await client.query(EVENT_KINDS);
      for (const [table, text] of STATEMENTS) {
        const t0 = performance.now();
        if (text.includes('$1')) await client.query(text, [o.keyRetentionS]);
        else await client.query(text);
        perTable[table] = (perTable[table] ?? 0) + (performance.now() - t0) / 1000;
      }
      await client.query('COMMIT');
      log(`history: units ${hi}/${o.units} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    const built = performance.now();
    await client.query(`SET maintenance_work_mem = '512MB'`);
    // A partitioned table's index reads `ON ONLY` (the parent alone): built without it, it is built on every partition too.
    for (const ix of indexes) await client.query(ix.def.replace(' ON ONLY ', ' ON '));
    log(`history: ${indexes.length} indexes built in ${((performance.now() - built) / 1000).toFixed(1)} s`);
    const insertS = (performance.now() - started) / 1000;
    log(`history: seconds per table ${JSON.stringify(Object.fromEntries(Object.entries(perTable).map(([k, v]) => [k, Math.round(v * 10) / 10])))}`);
    await client.query(`${o.vacuum ? 'VACUUM ' : ''}ANALYZE`);
    const analyzeS = (performance.now() - started) / 1000 - insertS;
    const rows: Record<string, number> = {};
    for (const t of GROWING_TABLES) rows[t] = Number((await client.query(`SELECT count(*)::bigint AS n FROM ${t}`)).rows[0].n);
    log(`history: ${o.units} units in ${insertS.toFixed(1)} s, ${o.vacuum ? 'VACUUM ' : ''}ANALYZE ${analyzeS.toFixed(1)} s; ${JSON.stringify(rows)}`);
    return { units: o.units, rows, insertS, analyzeS };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    await client.end();
  }
}
