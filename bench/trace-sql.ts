// Prints every statement (and its parameters) that one POST /v1/payment-orders sends to
// PostgreSQL, so the pgbench script in orders.ts can be checked against the service's real SQL.
// Rerun it after changing the order path in src/: when the statements change, PGBENCH_SCRIPT in
// bench/orders.ts must change with them, or the ratio compares against the wrong ceiling.
// Run: npx tsx bench/trace-sql.ts
import crypto from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { openPostgres, runMigrations } from '../src/storage/db.js';
import { startService } from '../src/service.js';
import { createAccount, issueKey } from '../src/domain/accounts/service.js';
import { MemoryRateLimiter } from '../src/http/rate-limiter.js';
import { ORDER_BODY, PGBENCH_SCRIPT } from './orders.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const name = `bench_trace_${crypto.randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;
let tracing = false;
const trace: string[] = [];
const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as { query: unknown }).query = function (this: unknown, ...args: unknown[]) {
  if (tracing) {
    const q = args[0] as string | { text: string; values?: unknown[] };
    const text = typeof q === 'string' ? q : q.text;
    const values = typeof q === "string" ? args[1] : (q.values ?? args[1]);
    trace.push(`${text.replace(/\s+/g, ' ').trim()}${values ? `\n    -- params: ${JSON.stringify(values)}` : ''}`);
  }
  return original.apply(this, args);
};
try {
  const database = await openPostgres(url.toString(), { poolSize: 4 });
  await runMigrations(database);
  const account = await createAccount(database.db, 'trace');
  const key = await issueKey(database.db, account.id, { livemode: false });
  const service = await startService({ ...loadConfig({}), databaseUrl: url.toString(), port: 0, roles: ['api'] }, {
    database,
    logger: false,
    rateLimiter: new MemoryRateLimiter(),
  });
  const post = () =>
    fetch(`${service.url}/v1/payment-orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'application/json' },
      body: JSON.stringify(ORDER_BODY).replace(/\[<id>\]/g, crypto.randomBytes(16).toString('base64url')),
    });
  await post(); // warms the API-key cache, as in a steady-state run
  tracing = true;
  const res = await post();
  tracing = false;
  console.log(`status ${res.status}, response ${(await res.text()).length} bytes; ${trace.length} statements:\n`);
  for (const t of trace) console.log(t + '\n');
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  const sizes = await c.query(
    `SELECT (SELECT avg(length(data::text)) FROM events) AS event_json, (SELECT avg(length(response_body)) FROM idempotency_keys) AS response_body`,
  );
  console.log('sizes', sizes.rows[0]);
  const scripted = PGBENCH_SCRIPT.split(';').filter((t) => t.replace(/\\set[^\n]*\n/, '').trim()).length;
  console.log(`\nthe pgbench script in bench/orders.ts has ${scripted} statements; the service sent ${trace.length}` +
    (scripted === trace.length ? '' : ' — UPDATE PGBENCH_SCRIPT'));
  await c.end();
  await service.close();
  await database.close();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
