// Reconciliation of a Stripe connector account: its balance transactions fetched through the API,
// page after page (the fake Stripe lists them as Stripe does, from its published example object),
// matched with our payments by their PaymentIntent and with our refunds by the id in their metadata.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { createTestDatabase, startTestService, type TestDatabase, type TestService } from '../support/helpers.js';
import { orderAndPay } from '../support/payments.js';
import { createConnectorAccount, newTenantClients } from '../support/connectors.js';
import { FakeStripe, STRIPE_CARDS } from '../support/fakes/stripe.js';
import { plantBalanceTransaction, stripeFee } from '../support/fakes/stripe-balance.js';

let testDb: TestDatabase;
let service: TestService;
let stripe: FakeStripe;

beforeAll(async () => {
  stripe = await new FakeStripe().start();
  testDb = await createTestDatabase();
  service = await startTestService(testDb, { settings: { stripeApiBaseUrl: stripe.url, connectorTimeoutMs: 5000 } });
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
  await stripe?.close();
});

it('reads every page of the balance transactions, matches ours, reports the charge we never made, and books Stripe’s fees once', async () => {
  const { test } = await newTenantClients(testDb, service.url);
  const account = await createConnectorAccount(test, 'stripe', 'stripe', { secret_key: `sk_test_${'r'.repeat(24)}`, webhook_secret: 'whsec_reconcile_0001' });
  await test.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'stripe' }] }] } });
  const amounts = [1000, 2000, 3000];
  const paid = [];
  for (const amount of amounts) paid.push((await orderAndPay(test, STRIPE_CARDS.success, { amount, currency: 'EUR' })).payment);
  const refund = await test.post('/v1/refunds', { payment: paid[1].id, amount: 500 });
  expect(refund.body.status).toBe('succeeded');
  const now = Math.floor(Date.now() / 1000);
  // Stripe's own payouts to the merchant's bank: not movements of ours, but 230 of them make three pages.
  for (let i = 0; i < 230; i += 1) plantBalanceTransaction(stripe, { id: `txn_po_${String(i).padStart(4, '0')}`, amount: -1, fee: 0, net: -1, currency: 'eur', type: 'payout', reporting_category: 'payout', created: now - 10, source: `po_${i}` });
  plantBalanceTransaction(stripe, { id: 'txn_stranger', amount: 700, fee: 50, net: 650, currency: 'eur', type: 'charge', reporting_category: 'charge', created: now - 5, source: { id: 'ch_stranger', object: 'charge', payment_intent: 'pi_nobody', metadata: {} } });

  const period = { period_start: new Date(Date.now() - 3_600_000).toISOString(), period_end: new Date(Date.now() + 60_000).toISOString() };
  const run = await test.post('/v1/reconciliation-runs', { connector_account: account.id, ...period });
  expect(run.status, run.text).toBe(201);
  expect(run.body).toMatchObject({ source: 'stripe_balance_transactions', records: 3 + 1 + 230 + 1, matched: 4 });
  expect(run.body.exceptions).toEqual([
    { type: 'missing_in_ledger', object: null, status: null, expected_amount: null, processor_amount: 700, currency: 'EUR', processor_records: ['txn_stranger'] },
  ]);
  expect(run.body.fees_booked).toEqual({ EUR: amounts.reduce((s, a) => s + stripeFee(a), 0) + 50 });
  const again = await test.post('/v1/reconciliation-runs', { connector_account: account.id, ...period });
  expect(again.body).toMatchObject({ matched: 4, fees_booked: {} });
  const { rows } = (await testDb.database.db.execute(sql`SELECT count(*)::int AS n FROM processor_fees WHERE connector = ${account.id}`)) as unknown as { rows: { n: number }[] };
  expect(rows[0]!.n).toBe(4);
});
