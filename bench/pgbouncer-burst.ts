// The issue's PgBouncer measurement: a service process (api and worker) through a PgBouncer in
// transaction mode, N concurrent POST /v1/payment-orders, then a few seconds of worker passes;
// prints the answers by status and the prepared-statement errors the process logged.
//
//   npx tsx bench/pgbouncer-burst.ts                                  # this checkout, unnamed statements
//   DATABASE_PREPARED_STATEMENTS=named npx tsx bench/pgbouncer-burst.ts
//   BURST_SERVICE_ROOT=/path/to/other/checkout npx tsx bench/pgbouncer-burst.ts   # e.g. main before the fix
//
// BURST_REQUESTS (default 40), BENCH_DATABASE_URL (admin URL, default the test server). The
// database, tenant and migrations are made with this checkout's code; the schema is the same.
import { createAccount, issueKey } from '../src/domain/accounts/service.js';
import { openPostgres, runMigrations } from '../src/storage/db.js';
import { installExitHandlers, runCleanup } from './lib/cleanup.js';
import { createBenchDatabase } from './lib/database.js';
import { startPgBouncer } from './lib/pgbouncer.js';
import { startServiceProcess } from './lib/service.js';

const requests = Number(process.env.BURST_REQUESTS ?? 40);
const adminUrl = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const mode = process.env.DATABASE_PREPARED_STATEMENTS || 'unnamed';

installExitHandlers(180_000);
try {
  const pgbouncer = await startPgBouncer();
  if (!pgbouncer) throw new Error('PgBouncer is not installed (Debian: apt-get install pgbouncer)');
  const db = await createBenchDatabase(adminUrl);
  const setup = await openPostgres(db.url, { poolSize: 2 });
  await runMigrations(setup);
  const account = await createAccount(setup.db, 'Burst');
  const key = await issueKey(setup.db, account.id, { livemode: false, name: 'burst' });
  await setup.close();

  const service = await startServiceProcess({
    databaseUrl: pgbouncer.through(db.url),
    root: process.env.BURST_SERVICE_ROOT || undefined,
    env: { ROLES: 'api,worker', LOG_LEVEL: 'info', DATABASE_PREPARED_STATEMENTS: mode, METRICS_PORT: '0' },
  });
  const statuses: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: requests }, async (_, i) => {
      const res = await fetch(`${service.url}/v1/payment-orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json', 'idempotency-key': `burst-${i}` },
        body: JSON.stringify({ amount: 1000, currency: 'EUR', reference: `burst-${i}`, customer: { email: 'jane@example.com' } }),
      });
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }),
  );
  // The worker's passes run meanwhile: a few seconds of them.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const errors = service.output().match(/prepared statement \\?"[^"\\]+\\?" (already exists|does not exist)/g) ?? [];
  const [{ n: stored } = { n: 0 }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_orders');
  console.log(
    `${requests} concurrent orders through PgBouncer (transaction mode), DATABASE_PREPARED_STATEMENTS=${mode}${process.env.BURST_SERVICE_ROOT ? ` (service from ${process.env.BURST_SERVICE_ROOT})` : ''}: ` +
      `${Object.entries(statuses).map(([s, n]) => `${n} × ${s}`).join(', ')}; ${stored} stored; ${errors.length} prepared-statement errors in the last 8 kB of the log` +
      (errors.length ? ` (e.g. ${[...new Set(errors)].slice(0, 2).join('; ')})` : ''),
  );
} finally {
  await runCleanup();
}
