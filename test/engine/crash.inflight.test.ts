// A card payment interrupted by a crash, on a route through Adyen (which cannot be asked about a
// payment whose answer was lost), with no retry of the request: the worker of another process
// sends it again to Adyen alone, under the same Idempotency-Key, from the card the payment kept in
// the vault (docs/vault.md) — and Adyen, the fake counting what it holds, is charged once. A service
// runs as a real OS process killed with SIGKILL (CRASH_AFTER); PostgreSQL only.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { call, client, eventually, isPostgres, orderBody, type Api, type Tenant } from '../support/helpers.js';
import { cardMethod } from '../support/payments.js';
import { startChild, type Child } from '../support/processes.js';
import { useDatabase } from '../support/fixtures.js';
import { expectLedgerClean } from '../support/payouts.js';
import { createConnectorAccount } from '../support/connectors.js';
import { newCustomer } from '../support/customers.js';
import { FakeAdyen } from '../support/fakes/adyen.js';
import { BACKUP } from '../connectors/contract/scenarios.js';

const CARD = '4242424242424242';
const CVC = '123';

describe.skipIf(!isPostgres)('a card payment killed between its phases on a route through Adyen, never retried: replayed by the worker', () => {
  const fake = new FakeAdyen();
  const h = useDatabase({ postgresOnly: true });
  let tenant: Tenant;
  let api: Api;
  let survivor: Child;
  let adyen: string;
  // A short lock needs a connector timeout to match (config.ts refuses a lock the route could outlast).
  const env = () => ({ DATABASE_URL: h.databaseUrl!, IDEMPOTENCY_LOCK_TIMEOUT_S: '3', CONNECTOR_TIMEOUT_MS: '700', STATUS_CHECK_INTERVAL_MS: '200', ADYEN_CHECKOUT_BASE_URL: fake.url });

  beforeAll(async () => {
    await fake.start();
    tenant = await h.createTenant('In-flight crash tenant');
    survivor = h.track(await startChild(env()));
    api = client(survivor.url, tenant.testKey);
    const account = await createConnectorAccount(api, 'adyen', 'inflight-adyen', { api_key: `AQE_inflight_${'k'.repeat(16)}`, merchant_account: 'InflightECOM', hmac_key: '5a'.repeat(32) });
    adyen = account.id;
    // Adyen first, a simulator behind it: the simulator can be asked, so Adyen alone may hold a lost payment.
    const routed = await api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: account.name }, { name: BACKUP }] }] } });
    expect(routed.status, routed.text).toBe(200);
  }, 120_000);
  afterAll(() => fake.close());

  const paymentRequests = (id: string) => fake.requests.filter((r) => r.path === '/v71/payments' && r.body.reference === id);
  const held = (id: string) => [...fake.payments.values()].filter((p) => p.reference === id).length;

  /** Sends the payment to a process that dies at `crashAfter`; the payment it left pending with no connector. */
  async function crashing(crashAfter: string, paymentMethod: unknown, extra: Record<string, unknown> = {}): Promise<{ id: string; order: string }> {
    const order = await call(survivor.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: crypto.randomUUID(), body: orderBody({ amount: 2500 }) });
    expect(order.status, order.text).toBe(201);
    const child = h.track(await startChild({ ...env(), CRASH_AFTER: crashAfter }));
    const body = { payment_order: order.body.id, payment_method: paymentMethod, ...extra };
    const attempt = await call(child.url, 'POST', '/v1/payments', { key: tenant.testKey, idempotencyKey: crypto.randomUUID(), body }).catch((err: Error) => err);
    expect(attempt).toBeInstanceOf(Error); // the connection died with the process
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const [payment] = await h.query(sql`SELECT id, status, connector FROM payments WHERE payment_order_id = ${parseId('ord', order.body.id)!}`);
    expect(payment).toMatchObject({ status: 'pending', connector: null });
    return { id: (await api.get(`/v1/payments?payment_order=${order.body.id}`)).body.data[0].id, order: order.body.id };
  }

  /** A worker process (after the crash: it would otherwise settle the payment before the crash point) until the payment is final. */
  async function recovered(id: string) {
    const worker = h.track(await startChild({ ...env(), ROLES: 'worker', WORKER_INTERVAL_MS: '100' }, 120_000));
    try {
      return await eventually(async () => (await api.get(`/v1/payments/${id}`)).body, (p) => p.status !== 'pending', 60_000);
    } finally {
      await worker.close();
    }
  }

  /** What the vault says of the payment: its unsealings (each naming it) and its kept card's record. */
  async function vaultOf(id: string) {
    const unsealings = await h.query(sql`SELECT movement_type, movement_id FROM vault_unsealings WHERE movement_id = ${id}`);
    const [row] = await h.query(sql`SELECT payment_method->>'in_flight_record' AS record FROM payments WHERE id = ${parseId('pay', id)!}`);
    const record = row!.record as string | null;
    const [kept] = record ? await h.query(sql`SELECT purpose, sealed_card, erased_at FROM vault_records WHERE id = ${parseId('vr', record)!}`) : [];
    return { unsealings, kept };
  }

  async function expectPaidOnce(order: string, id: string) {
    const [row] = await h.query(sql`SELECT status, amount_paid FROM payment_orders WHERE id = ${parseId('ord', order)!}`);
    expect(row).toEqual({ status: 'paid', amount_paid: 2500 });
    const entries = await h.query(sql`SELECT type FROM journal_entries WHERE source_id = ${parseId('pay', id)!}`);
    expect(entries).toEqual([{ type: 'payment' }]);
    await expectLedgerClean(h.db, tenant.accountId);
  }

  it.each(['payment_created', 'payment_connector_answered'])('a typed card killed at %s: replayed without its CVC, charged once, its kept card erased', async (crashAfter) => {
    const { id, order } = await crashing(crashAfter, cardMethod(CARD, { cvc: CVC }));
    expect(paymentRequests(id)).toHaveLength(crashAfter === 'payment_created' ? 0 : 1);
    const before = await vaultOf(id);
    expect(before.kept).toMatchObject({ purpose: 'payment', sealed_card: expect.any(String), erased_at: null });

    const payment = await recovered(id);
    expect(payment).toMatchObject({ status: 'succeeded', connector: adyen, attempts: [expect.objectContaining({ connector: adyen, outcome: 'succeeded' })] });
    expect(held(id)).toBe(1);
    // Sent once by the request that crashed (if it got that far), once by the worker: one charge.
    const requests = paymentRequests(id);
    expect(requests).toHaveLength(crashAfter === 'payment_created' ? 1 : 2);
    expect(new Set(requests.map((r) => r.key))).toEqual(new Set([id]));
    const replay = requests.at(-1)!.body;
    expect(replay.paymentMethod).toMatchObject({ number: CARD, expiryMonth: '12' });
    expect(replay.paymentMethod.cvc).toBeUndefined();
    expect(replay.shopperInteraction).toBe('Ecommerce');

    const after = await vaultOf(id);
    expect(after.unsealings).toEqual([{ movement_type: 'payment', movement_id: id }]);
    expect(after.kept).toMatchObject({ sealed_card: null, erased_at: expect.any(String) });
    await expectPaidOnce(order, id);
  }, 180_000);

  it.each(['payment_created', 'payment_connector_answered'])('an off-session saved card killed at %s: replayed merchant-initiated, charged once, the card still saved', async (crashAfter) => {
    const customer = await newCustomer(api);
    const saving = await api.post('/v1/payments', {
      payment_order: (await api.post('/v1/payment-orders', orderBody())).body.id,
      payment_method: cardMethod(CARD),
      customer: customer.id,
      setup_future_usage: 'off_session',
    });
    expect(saving.body, saving.text).toMatchObject({ status: 'succeeded', connector: adyen, payment_method_saved: expect.stringMatching(/^pm_/) });
    const pm = saving.body.payment_method_saved as string;

    const { id, order } = await crashing(crashAfter, { type: 'saved_card', saved_card: { id: pm } }, { off_session: true, off_session_reason: 'subscription' });
    const payment = await recovered(id);
    expect(payment).toMatchObject({ status: 'succeeded', connector: adyen });
    expect(held(id)).toBe(1);
    const requests = paymentRequests(id);
    expect(requests).toHaveLength(crashAfter === 'payment_created' ? 1 : 2);
    for (const { body } of requests) {
      expect(body).toMatchObject({ shopperInteraction: 'ContAuth', recurringProcessingModel: 'Subscription', paymentMethod: { number: CARD, networkPaymentReference: expect.any(String) } });
      expect(body.paymentMethod.cvc).toBeUndefined();
    }
    // Unsealed for the request that crashed (before its crash point), then for the worker's replay: each names the payment.
    const { unsealings, kept } = await vaultOf(id);
    expect(unsealings).toEqual([
      { movement_type: 'payment', movement_id: id },
      { movement_type: 'payment', movement_id: id },
    ]);
    expect(kept).toBeUndefined(); // a saved card is its method's record, never a second copy
    expect((await api.get(`/v1/payment-methods/${pm}`)).body.status).toBe('active');
    await expectPaidOnce(order, id);
  }, 180_000);
});
