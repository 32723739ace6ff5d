// The hot statements' plans over a database that has grown (docs/benchmarks.md, "History"): a
// history preloaded with the benchmark's own preloader (bench/lib/history.ts) and analyzed, then
// every statement the service sends for an order, a payment, a refund, the lists, a webhook
// delivery pass and a worker pass — captured as sent (bench/lib/trace.ts), with the values sent —
// is explained, as a custom plan with those values and as the generic plan a prepared statement
// falls back to, and neither may read a growing table from end to end.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { GROWING_TABLES, preloadHistory } from '../../bench/lib/history.js';
import { traceStatements, type TracedStatement } from '../../bench/lib/trace.js';
import { parseId } from '../../src/kernel/ids.js';
import { useService } from '../support/fixtures.js';
import { isPostgres } from '../support/helpers.js';
import { newOrder, pay } from '../support/payments.js';
import { deliverAt, subscribedTenant, webhookOptions } from '../support/webhooks.js';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

const growing = new Set<string>(GROWING_TABLES);
// node-postgres's own text form of a bind value.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (v: unknown) => string | null };

/** A partition's table (src/storage/partitions.ts names them `events_p2026_12`, `events_default`, `events_legacy`). */
const tableOf = (relation: string) => relation.replace(/_(p\d{4}_\d{2}(_\d{2})?|default|legacy)$/, '');

/**
 * The rows each table and partition holds after the preload (pg_class.reltuples). A partition made
 * ahead, the default one, or the current month's beside the preloaded history (which lies in the
 * partition the migration made of the earlier table) holds next to nothing: reading it whole is
 * what a planner should do, so only relations holding some of the history count.
 */
let held = new Map<string, number>();

/** Every node of a plan that reads a growing table (or a partition of one holding history) from end to end. */
function seqScans(node: PlanNode): string[] {
  const relation = node['Relation Name'] ?? '';
  const here = node['Node Type'] === 'Seq Scan' && growing.has(tableOf(relation)) && (held.get(relation) ?? 0) >= 100 ? [relation] : [];
  return [...here, ...(node.Plans ?? []).flatMap(seqScans)];
}

/** The values as literals, for EXECUTE's arguments (a utility statement takes no bind parameters). */
const literals = (client: pg.Client, values: unknown[]) =>
  values.map((v) => (prepareValue(v) === null ? 'NULL' : client.escapeLiteral(prepareValue(v)!))).join(', ');

const explainable = (s: TracedStatement) => /^\s*(select|insert|update|delete|with)\b/i.test(s.text) && GROWING_TABLES.some((t) => s.text.includes(t));
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim().replace(/^select .*? from /i, 'select … from ');

describe.skipIf(!isPostgres)('the hot statements over a preloaded history', () => {
  const h = useService({ postgresOnly: true });
  let statements: TracedStatement[] = [];
  let admin: pg.Client;

  beforeAll(async () => {
    const { tenant, api } = await subscribedTenant(h);
    // 8,000 orders' lives (about 42,000 events, 43,000 deliveries and attempts), a quarter of them
    // the tenants' own; one day, so that every request's idempotency record is still kept.
    await preloadHistory(h.databaseUrl!, {
      units: 8000,
      ownAccounts: [parseId('acct', tenant.accountId)!, parseId('acct', h.tenant.accountId)!],
      otherAccounts: 50,
      days: 1,
      batch: 8000,
    });
    const traced = await traceStatements(async () => {
      const order = await newOrder(api);
      const payment = await pay(api, order.id);
      expect(payment.status, payment.text).toBe(201);
      expect((await api.post('/v1/refunds', { payment: payment.body.id, amount: 500 })).status).toBe(201);
      for (const path of ['/v1/events?limit=10', '/v1/events?limit=10&type=payment.*', '/v1/payments?limit=10', '/v1/payment-orders?limit=10', `/v1/payments/${payment.body.id}`]) {
        const res = await api.get(path);
        expect(res.status, `${path}: ${res.text}`).toBe(200);
      }
      const delivered = await deliverAt(h.database, webhookOptions());
      expect(delivered.attempts).toBeGreaterThan(0);
      await h.service.runWorker(undefined, { webhookHistoryRetentionDays: 30 });
    });
    statements = traced.statements.filter(explainable);
    admin = new pg.Client({ connectionString: h.databaseUrl! });
    // The fixture drops the database with its connections when the block ends.
    admin.on('error', () => {});
    await admin.connect();
    const { rows } = await admin.query(`SELECT relname, reltuples::bigint AS n FROM pg_class WHERE relkind IN ('r', 'p') AND relnamespace = current_schema()::regnamespace`);
    held = new Map(rows.map((r) => [r.relname as string, Number(r.n)]));
    expect(held.get('events_legacy'), 'the history lies in the earlier table, now a partition').toBeGreaterThan(10_000);
  }, 240_000);
  afterAll(() => admin?.end());

  it('captured the statements of every path', () => {
    expect(statements.length).toBeGreaterThan(30);
    const text = statements.map((s) => s.text).join('\n');
    for (const table of ['payment_orders', 'payments', 'refunds', 'events', 'webhook_deliveries', 'webhook_attempts', 'journal_lines', 'idempotency_keys']) {
      expect(text, table).toContain(table);
    }
  });

  it('reads no growing table from end to end with the values sent (custom plans)', async () => {
    const found: string[] = [];
    for (const s of statements) {
      const { rows } = await admin.query(`EXPLAIN (FORMAT JSON) ${s.text}`, s.values);
      const scans = seqScans(rows[0]['QUERY PLAN'][0].Plan as PlanNode);
      if (scans.length) found.push(`${scans.join(', ')}: ${oneLine(s.text)}`);
    }
    expect(found).toEqual([]);
  });

  // A generic plan cannot use a partial index whose predicate names a value the statement binds as
  // a parameter (the worker's claims bind their status), nor know how few rows a bound cut-off
  // leaves (the retention sweeps): some of those generic plans read the whole table. PostgreSQL
  // takes a generic plan only when its estimate is no worse than the custom plans': each such
  // statement is run here ten times as a prepared statement, as the service sends it, and must have
  // been planned afresh every time. An insert whose generic plan reads a growing table fails outright.
  it('and a generic plan that would read a growing table is never the one PostgreSQL settles on', async () => {
    const generic: TracedStatement[] = [];
    await admin.query(`SET plan_cache_mode = force_generic_plan`);
    for (const [i, s] of statements.entries()) {
      if (s.values.length === 0) continue;
      await admin.query(`PREPARE plan_${i} AS ${s.text}`);
      const { rows } = await admin.query(`EXPLAIN (FORMAT JSON) EXECUTE plan_${i}(${literals(admin, s.values)})`);
      if (seqScans(rows[0]['QUERY PLAN'][0].Plan as PlanNode).length) generic.push(s);
      await admin.query(`DEALLOCATE plan_${i}`);
    }
    await admin.query(`RESET plan_cache_mode`);
    expect(generic.filter((s) => /^\s*insert\b/i.test(s.text)).map((s) => oneLine(s.text))).toEqual([]);
    const settled: string[] = [];
    for (const [i, s] of generic.entries()) {
      await admin.query('BEGIN');
      await admin.query({ name: `generic_${i}`, text: s.text, values: s.values });
      for (let n = 1; n < 10; n++) await admin.query({ name: `generic_${i}`, text: s.text, values: s.values });
      const { rows } = await admin.query(`SELECT generic_plans::int AS n FROM pg_prepared_statements WHERE name = $1`, [`generic_${i}`]);
      await admin.query('ROLLBACK');
      if (rows[0].n > 0) settled.push(oneLine(s.text));
    }
    expect(settled).toEqual([]);
    // What the finding is about: the worker's claims and the retention sweeps (docs/benchmarks.md).
    expect(generic.length).toBeGreaterThan(0);
  });
});
