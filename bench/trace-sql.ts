// Prints every statement (and its parameters) that one POST /v1/payment-orders sends to
// PostgreSQL, so the pgbench script in orders.ts can be checked against the service's real SQL.
// Rerun it after changing the order path in src/: when the statements change, PGBENCH_SCRIPT in
// bench/orders.ts must change with them, or the ratio compares against the wrong ceiling.
// (The saved-card payment's script is built from such a trace at the start of every run:
// bench/payments-saved.ts.)
// Run: npx tsx bench/trace-sql.ts
import crypto from 'node:crypto';
import pg from 'pg';
import { describeTrace, startTracedService, traceStatements } from './lib/trace.js';
import { ORDER_BODY, PGBENCH_SCRIPT } from './orders-scripts.js';

const service = await startTracedService(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
try {
  const post = () =>
    fetch(`${service.url}/v1/payment-orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.secret}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'application/json' },
      body: JSON.stringify(ORDER_BODY).replace(/\[<id>\]/g, crypto.randomBytes(16).toString('base64url')),
    });
  await post(); // warms the API-key cache, as in a steady-state run
  const { result: res, statements } = await traceStatements(post);
  console.log(`status ${res.status}, response ${(await res.text()).length} bytes; ${statements.length} statements:\n`);
  console.log(describeTrace(statements) + '\n');
  const [sizes] = await service.query<pg.QueryResultRow>(
    `SELECT (SELECT avg(length(data::text)) FROM events) AS event_json, (SELECT avg(length(response_body)) FROM idempotency_keys) AS response_body`,
  );
  console.log('sizes', sizes);
  const scripted = PGBENCH_SCRIPT.split(';').filter((t) => t.replace(/\\set[^\n]*\n/, '').trim()).length;
  console.log(`\nthe pgbench script in bench/orders.ts has ${scripted} statements; the service sent ${statements.length}` +
    (scripted === statements.length ? '' : ' — UPDATE PGBENCH_SCRIPT'));
} finally {
  await service.close();
}
