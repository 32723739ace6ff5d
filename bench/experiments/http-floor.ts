// What the HTTP layer costs without the database: the real service process under autocannon on
//   GET /health                       fastify routing, hooks, request id, response
//   POST /v1/payment-orders (no key)  + JSON body parsing, auth (cached), rate limit, schema
//                                       validation, the typed error renderer — everything but SQL
//   POST /v1/payment-orders           the full request, for comparison
// and the service's CPU time per request for each (robust on a noisy machine).
// Run: npx tsx bench/experiments/http-floor.ts [seconds=6] [connections=32]
import { createBenchDatabase } from '../lib/database.js';
import { setUpTenant } from '../lib/tenant.js';
import { installExitHandlers, runCleanup, runScript } from '../lib/cleanup.js';
import { startServiceProcess } from '../lib/service.js';
import { runHttpLoad } from '../lib/http-load.js';
import { cpuMeter } from '../lib/cpu.js';
import { ORDER_BODY } from '../orders-scripts.js';

const seconds = Number(process.argv[2] ?? 6);
const connections = Number(process.argv[3] ?? 32);
const adminUrl = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const BODY = JSON.stringify(ORDER_BODY);

async function main() {
  installExitHandlers(10 * 60_000);
  const db = await createBenchDatabase(adminUrl);
  const tenant = await setUpTenant(db, 'floor');
  const service = await startServiceProcess({ databaseUrl: db.url, env: { LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn' } });
  const auth = { authorization: `Bearer ${tenant.secret}`, 'content-type': 'application/json' };
  const cases = [
    { name: 'GET /health', method: 'GET' as const, path: '/health', headers: {}, body: undefined },
    { name: 'POST orders, no Idempotency-Key (400, no SQL)', method: 'POST' as const, path: '/v1/payment-orders', headers: auth, body: BODY },
    { name: 'POST orders (201, full)', method: 'POST' as const, path: '/v1/payment-orders', headers: { ...auth, 'idempotency-key': 'k-[<id>]' }, body: BODY },
  ];
  console.log(`${seconds} s each, ${connections} connections, after a 2 s warm-up each`);
  console.log('case                                              req/s   svc cpu ms/req   p50 ms   p99 ms  statuses');
  for (const c of cases) {
    const opts = { url: service.url + c.path, method: c.method, connections, headers: c.headers, body: c.body };
    await runHttpLoad({ ...opts, durationS: 2 });
    const meter = cpuMeter(service.pid);
    const r = await runHttpLoad({ ...opts, durationS: seconds });
    const cpu = meter.stop();
    console.log(
      `${c.name.padEnd(46)} ${r.rps.toFixed(0).padStart(8)} ${(((cpu.processCores ?? NaN) / r.rps) * 1000).toFixed(3).padStart(16)} ` +
        `${r.latencyMs.p50.toFixed(1).padStart(8)} ${r.latencyMs.p99.toFixed(1).padStart(8)}  ${JSON.stringify(r.statuses)}`,
    );
  }
  await runCleanup();
}

runScript(main);
