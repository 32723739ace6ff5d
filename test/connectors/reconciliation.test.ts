// Reconciliation runs against generated reports: the simulators' own report (every movement
// matched, fees booked once across two runs of the same period, each exception kind planted in the
// books and found) and Adyen's Settlement details report as an uploaded CSV (each exception kind,
// its fees booked once across two runs; its bad inputs: typed 400s naming the line or column,
// nothing booked).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { runReconcile } from '../../src/cli/reconcile.js';
import { runDailyReconciliations } from '../../src/domain/reconciliation/daily.js';
import { checkLedger } from '../../src/ledger/check.js';
import { parseId } from '../../src/kernel/ids.js';
import { REQUIRED_COLUMNS } from '../../src/domain/reconciliation/adyen-report.js';
import { client, createTenant, createTestDatabase, eventually, expectError, startTestService, type TestDatabase, type TestService } from '../support/helpers.js';
import { CARDS, orderAndPay } from '../support/payments.js';
import { createConnectorAccount } from '../support/connectors.js';
import { Visitor } from '../support/dashboard.js';

async function newTenant() {
  const tenant = await createTenant(testDb.database);
  return { test: client(service.url, tenant.testKey), key: tenant.testKey, accountId: parseId('acct', tenant.accountId) ?? tenant.accountId };
}

let testDb: TestDatabase;
let service: TestService;

beforeAll(async () => {
  testDb = await createTestDatabase();
  // Disputes open (and withdraw their funds) 200 ms after a disputed card's payment.
  service = await startTestService(testDb, { settings: { simulator: { pendingDelayMs: 200 } } });
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
});

const rows = async (query: ReturnType<typeof sql>) => ((await testDb.database.db.execute(query)) as unknown as { rows: Record<string, any>[] }).rows;
const feeEntries = async (accountId: string) => Number((await rows(sql`SELECT count(*)::int AS n FROM journal_entries WHERE account_id = ${accountId} AND type = 'processor_fee'`))[0]!.n);

async function simulatorTenant() {
  const { test, key, accountId } = await newTenant();
  const account = await createConnectorAccount(test, 'simulator_a', 'sim');
  await test.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'sim' }] }] } });
  const paid = [];
  for (const amount of [1000, 2500, 4000]) paid.push((await orderAndPay(test, CARDS.success, { amount, currency: 'EUR' })).payment);
  const refund = await test.post('/v1/refunds', { payment: paid[0].id, amount: 300 });
  expect(refund.body.status).toBe('succeeded');
  return { test, key, account, paid, refund: refund.body, accountId };
}

const window = () => ({ period_start: new Date(Date.now() - 3_600_000).toISOString(), period_end: new Date(Date.now() + 60_000).toISOString() });

describe('the simulators’ report', () => {
  it('matches every movement, books each fee once across two runs of the period, and reports the run', async () => {
    const { test, account, paid, accountId } = await simulatorTenant();
    const period = window();
    const first = await test.post('/v1/reconciliation-runs', { connector_account: account.id, ...period });
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ object: 'reconciliation_run', status: 'completed', connector: 'simulator_a', source: 'simulator_report', matched: 4, exceptions: [] });
    // 1.5 % + 10 of each payment; refunds cost nothing.
    const fees = paid.reduce((s: number, p: { amount: number }) => s + Math.floor((p.amount * 150 + 5000) / 10_000) + 10, 0);
    expect(first.body.fees_booked).toEqual({ EUR: fees });
    const again = await test.post('/v1/reconciliation-runs', { connector_account: account.id, ...period });
    expect(again.body).toMatchObject({ matched: 4, exceptions: [], fees_booked: {} });
    expect(await feeEntries(accountId)).toBe(3);
    expect((await test.get(`/v1/reconciliation-runs/${first.body.id}`)).body).toEqual(first.body);
    expect((await test.get(`/v1/reconciliation-runs?connector_account=${account.id}`)).body.data.map((r: { id: string }) => r.id)).toEqual([again.body.id, first.body.id]);
    const events = (await test.get('/v1/events?type=reconciliation_run.completed')).body.data;
    expect(events.map((e: { data: { object: { id: string } } }) => e.data.object.id)).toEqual([again.body.id, first.body.id]);
    expect(await checkLedger(testDb.database.db)).toMatchObject({ ok: true });
  });

  it('books each fee once when runs of one period race', async () => {
    const { test, account, accountId } = await simulatorTenant();
    const period = window();
    const runs = await Promise.all([1, 2, 3, 4].map(() => test.post('/v1/reconciliation-runs', { connector_account: account.id, ...period })));
    expect(runs.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(runs.filter((r) => Object.keys(r.body.fees_booked).length > 0).length, 'one run books the fees').toBe(1);
    expect(await feeEntries(accountId)).toBe(3);
    expect(await checkLedger(testDb.database.db)).toMatchObject({ ok: true });
  });

  it('matches a chargeback the processor dated before the period with its dispute, which reached us within it', async () => {
    const { test, account } = await simulatorTenant();
    const disputed = (await orderAndPay(test, '4000000000000259', { amount: 1800, currency: 'EUR' })).payment;
    const uuid = await eventually(
      async () => (await rows(sql`SELECT id::text FROM disputes WHERE payment_id = ${parseId('pay', disputed.id)!} AND funds_booked`))[0]?.id as string | undefined,
      (id) => id !== undefined,
    );
    // The processor dated the withdrawal at the chargeback's opening; we learnt of it a second later, after midnight.
    const { opened } = (await rows(sql`SELECT body->>'created_at' AS opened FROM simulator_objects WHERE kind = 'dispute' AND reference = ${disputed.id}`))[0]!;
    const midnight = Date.parse(opened) + 500;
    await testDb.database.db.execute(sql`UPDATE disputes SET created_at = ${new Date(midnight + 500).toISOString()}::timestamptz WHERE id = ${uuid!}`);
    const run = await test.post('/v1/reconciliation-runs', { connector_account: account.id, period_start: new Date(midnight).toISOString(), period_end: new Date(Date.now() + 60_000).toISOString() });
    expect(run.status, run.text).toBe(201);
    // The night's only object is the dispute; the earlier records (the payments', the refund's) were the night before's.
    expect(run.body).toMatchObject({ matched: 1, exceptions: [], records: 1, fees_booked: {} });
  });

  it('finds each exception planted in the books once', async () => {
    const { test, key, account, paid, refund } = await simulatorTenant();
    const [a, b, c] = paid as { id: string; amount: number }[];
    // The processor settled 1 more than we booked; we say failed what it settled; it never heard of the refund.
    await testDb.database.db.execute(sql`UPDATE simulator_objects SET body = jsonb_set(body, '{amount_minor}', to_jsonb(${b!.amount + 1}::int)) WHERE reference = ${b!.id}`);
    await testDb.database.db.execute(sql`UPDATE payments SET status = 'failed' WHERE id = ${parseId('pay', c!.id)!}`);
    await testDb.database.db.execute(sql`DELETE FROM simulator_objects WHERE reference = ${refund.id}`);
    const run = await test.post('/v1/reconciliation-runs', { connector_account: account.id, ...window() });
    expect(run.status, run.text).toBe(201);
    const found = Object.fromEntries(run.body.exceptions.map((e: { type: string; object: string }) => [e.type, e]));
    expect(run.body.exceptions, JSON.stringify(run.body)).toHaveLength(3);
    expect(found.amount_mismatch).toMatchObject({ object: b!.id, expected_amount: b!.amount, processor_amount: b!.amount + 1 });
    expect(found.status_mismatch).toMatchObject({ object: c!.id, status: 'failed', expected_amount: 0, processor_amount: c!.amount });
    expect(found.missing_at_processor).toMatchObject({ object: refund.id, expected_amount: -300, processor_amount: null });
    expect(run.body.matched).toBe(1);
    expect(a).toBeDefined();

    // The dashboard: the run among the runs, its exceptions on its page, the margin of the connector (no pricing: the processor fees, negative).
    const visitor = await Visitor.signedIn(service.url, key);
    const list = await visitor.get('/dashboard/reconciliation');
    expect(list.status).toBe(200);
    expect(list.text).toContain(run.body.id);
    const fees = run.body.fees_booked.EUR as number;
    expect(list.text).toMatch(new RegExp(`${account.id}</code></td><td>(?:0\\.00|—)[^<]*</td><td>${(fees / 100).toFixed(2)}[^<]*</td><td>−${(fees / 100).toFixed(2)}`));
    const page = await visitor.get(`/dashboard/reconciliation/${run.body.id}`);
    for (const text of ['amount_mismatch', 'status_mismatch', 'missing_at_processor', b!.id, c!.id, refund.id]) expect(page.text).toContain(text);
    const other = await Visitor.signedIn(service.url, (await newTenant()).key);
    expect((await other.get(`/dashboard/reconciliation/${run.body.id}`)).status).toBe(404);
  });
});

describe('the worker’s daily reconciliation', () => {
  it('reconciles each fetchable connector account once for the previous UTC day, when RECONCILIATION_DAILY is on', async () => {
    const { test, account } = await simulatorTenant();
    const tomorrow = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + 86_400_000 + 3_600_000);
    const rt = { ...service.payments, config: { ...service.payments.config, reconciliationDaily: true } };
    const first = await runDailyReconciliations(testDb.database.db, rt, tomorrow);
    expect(first.runs).toBeGreaterThanOrEqual(1);
    expect(await runDailyReconciliations(testDb.database.db, rt, tomorrow)).toEqual({ runs: 0, failed: 0 });
    const runs = (await test.get(`/v1/reconciliation-runs?connector_account=${account.id}`)).body.data;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ matched: 4, exceptions: [], period_end: new Date(Math.floor(+tomorrow / 86_400_000) * 86_400_000).toISOString() });
    // Off by default: the worker's pass makes none.
    expect((await service.runWorker(tomorrow)).reconciliations).toBeUndefined();
  });
});

const MERCHANT = 'AcmeECOM';
function csv(lines: Record<string, string>[], columns: readonly string[] = [...REQUIRED_COLUMNS, 'Modification Merchant Reference', 'Extra Column']) {
  const cell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  return [columns.join(','), ...lines.map((l) => columns.map((c) => cell(l[c] ?? '')).join(','))].join('\n') + '\n';
}
const line = (over: Record<string, string>): Record<string, string> => ({
  'Company Account': 'Acme', 'Merchant Account': MERCHANT, 'Psp Reference': 'PSP0000000000001', 'Merchant Reference': 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa',
  'Payment Method': 'visa', 'Creation Date': '2026-11-20 10:00:00', TimeZone: 'CET', Type: 'Settled', 'Modification Reference': 'MOD0000000000001',
  'Gross Currency': 'EUR', 'Gross Debit (GC)': '', 'Gross Credit (GC)': '10.00', 'Exchange Rate': '1', 'Net Currency': 'EUR', 'Net Debit (NC)': '',
  'Net Credit (NC)': '9.70', 'Commission (NC)': '0.30', 'Markup (NC)': '', 'Scheme Fees (NC)': '', 'Interchange (NC)': '', 'Payment Method Variant': 'visa',
  'Batch Number': '7', 'Extra Column': 'ignored', ...over,
});

describe("Adyen's Settlement details report", () => {
  async function adyenTenant() {
    const { test, key, accountId } = await newTenant();
    const account = await createConnectorAccount(test, 'adyen', 'adyen', { api_key: `AQEyhm${'x'.repeat(30)}`, merchant_account: MERCHANT });
    return { test, key, account, accountId };
  }
  const upload = (test: Awaited<ReturnType<typeof adyenTenant>>['test'], account: string, text: string) =>
    test.request('POST', `/v1/reconciliation-runs?connector_account=${account}`, { rawBody: text, headers: { 'content-type': 'text/csv' } });

  it('reports a settled payment we have no record of as missing_in_ledger, and books its fee once', async () => {
    const { test, account, accountId } = await adyenTenant();
    const report = csv([line({})]);
    const run = await upload(test, account.id, report);
    expect(run.status, run.text).toBe(201);
    expect(run.body).toMatchObject({ source: 'adyen_settlement_report', records: 1, matched: 0, fees_booked: { EUR: 30 }, period_start: '2026-11-20T09:00:00.000Z' });
    expect(run.body.exceptions).toEqual([
      { type: 'missing_in_ledger', object: null, status: null, expected_amount: null, processor_amount: 1000, currency: 'EUR', processor_records: ['PSP0000000000001:Settled:MOD0000000000001:7'] },
    ]);
    expect((await upload(test, account.id, report)).body.fees_booked).toEqual({});
    expect(await feeEntries(accountId)).toBe(1);
  });

  it('finds missing_at_processor, amount_mismatch and status_mismatch, and books the fees once across two runs', async () => {
    const { test, account, accountId } = await adyenTenant();
    // Paid at a simulator (no Adyen answers here), then moved onto the Adyen account below.
    await test.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'simulator_a' }] }] } });
    const paid = [];
    for (const amount of [1000, 2500, 4000]) paid.push((await orderAndPay(test, CARDS.success, { amount, currency: 'EUR' })).payment as { id: string; amount: number });
    expect(paid.map((p) => (p as unknown as { status: string }).status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const [settledNowhere, overpaid, failedHere] = paid as [{ id: string; amount: number }, { id: string; amount: number }, { id: string; amount: number }];
    // Made through the Adyen account within the report's period (09:00–11:00 UTC): the one it never
    // settled, the one it settled 1 more of, and the one we say failed that it settled.
    for (const p of paid) {
      await testDb.database.db.execute(sql`UPDATE payments SET connector = ${account.id}, created_at = '2026-11-20T10:00:00Z' WHERE id = ${parseId('pay', p.id)!}`);
    }
    await testDb.database.db.execute(sql`UPDATE payments SET status = 'failed' WHERE id = ${parseId('pay', failedHere.id)!}`);
    const report = csv([
      line({ 'Psp Reference': 'PSPB', 'Merchant Reference': overpaid.id, 'Gross Credit (GC)': '25.01', 'Net Credit (NC)': '24.71' }),
      line({ 'Psp Reference': 'PSPC', 'Merchant Reference': failedHere.id, 'Creation Date': '2026-11-20 12:00:00', 'Gross Credit (GC)': '40.00', 'Net Credit (NC)': '39.70' }),
    ]);
    const run = await upload(test, account.id, report);
    expect(run.status, run.text).toBe(201);
    expect(run.body).toMatchObject({ records: 2, matched: 0, fees_booked: { EUR: 60 } });
    const found = Object.fromEntries(run.body.exceptions.map((e: { type: string }) => [e.type, e]));
    expect(run.body.exceptions, JSON.stringify(run.body)).toHaveLength(3);
    expect(found.missing_at_processor).toMatchObject({ object: settledNowhere.id, expected_amount: 1000, processor_amount: null, processor_records: [] });
    expect(found.amount_mismatch).toMatchObject({ object: overpaid.id, expected_amount: 2500, processor_amount: 2501, processor_records: ['PSPB:Settled:MOD0000000000001:7'] });
    expect(found.status_mismatch).toMatchObject({ object: failedHere.id, status: 'failed', expected_amount: 0, processor_amount: 4000 });
    const fees = await feeEntries(accountId);
    expect(fees).toBeGreaterThan(0);

    // The same report again: the same exceptions, no fee booked twice.
    const again = await upload(test, account.id, report);
    expect(again.status, again.text).toBe(201);
    expect(again.body.fees_booked).toEqual({});
    expect(again.body.exceptions.map((e: { type: string }) => e.type).sort()).toEqual(['amount_mismatch', 'missing_at_processor', 'status_mismatch']);
    expect(await feeEntries(accountId)).toBe(fees);
  });

  it('takes the report from `npm run cli -- reconcile --file`, streamed as the text/csv body', async () => {
    const { key, account } = await adyenTenant();
    const file = path.join(os.tmpdir(), `settlement-${crypto.randomUUID()}.csv`);
    fs.writeFileSync(file, csv([line({}), line({ 'Psp Reference': 'PSP2', Type: 'Fee', 'Gross Credit (GC)': '', 'Net Debit (NC)': '1.25', 'Net Credit (NC)': '', 'Commission (NC)': '' })]));
    const out: string[] = [];
    const err: string[] = [];
    const code = await runReconcile(['--connector-account', account.id, '--file', file], { env: { API_KEY: key, API_URL: service.url }, stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
    fs.rmSync(file);
    expect(code, err.join('')).toBe(3);
    expect(JSON.parse(out.join(''))).toMatchObject({ source: 'adyen_settlement_report', records: 2, fees_booked: { EUR: 30 + 125 } });
  });

  it('refuses a bad report with a 400 naming the line or column, booking nothing', async () => {
    const { test, account, accountId } = await adyenTenant();
    const good = csv([line({}), line({ 'Psp Reference': 'PSP2' })]);
    const cases: [string, RegExp][] = [
      [csv([line({})], REQUIRED_COLUMNS.filter((c) => c !== 'Batch Number')), /"Batch Number"/],
      [good.slice(0, good.lastIndexOf('ignored')) + '"ignor', /Line 3.*truncated/],
      [good.split('\n').slice(0, 2).join('\n') + '\nAcme,AcmeECOM,PSP3\n', /Line 3 has 3 fields/],
      [csv([line({}), line({ 'Merchant Account': 'OtherECOM' })]), /Line 3 is for merchant account "OtherECOM"/],
      [csv([line({ 'Net Currency': 'USD' })]), /Currency mismatch on line 2/],
      [csv([line({ 'Gross Credit (GC)': '10.001' })]), /line 2, column "Gross Credit \(GC\)"/],
      ['', /empty/],
    ];
    for (const [text, message] of cases) {
      const res = await upload(test, account.id, text);
      const error = expectError(res, 400, 'report_invalid');
      expect(error.message).toMatch(message);
    }
    expect(await feeEntries(accountId)).toBe(0);
    expect((await test.get('/v1/reconciliation-runs')).body.data).toEqual([]);
  });
});
