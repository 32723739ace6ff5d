// Payments against mandates (direct debits): eligibility, the simulated bank settling the debit
// later through the inbound webhook, order and ledger moving exactly as for cards, a verified
// outgoing webhook at the end, revocation while a debit is pending, idempotency and resumption,
// and the worker expiring dormant mandates by its injected clock.
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWorkerOnce } from '../src/worker/worker.js';
import { parseId } from '../src/kernel/ids.js';
import { client, createTenant, createTestDatabase, type TestDatabase } from './helpers.js';
import { CARDS, cardMethod, eventTypesOf, eventually, newOrder, query, startPaymentsService, type Api, type PaymentsTestService } from './payments.helpers.js';
import { deliverAt, Receiver, verify, webhookOptions } from './webhooks.helpers.js';
import { ENDINGS, mandateBody, mandateMethod, newMandate } from './mandates.helpers.js';

let testDb: TestDatabase;
/** Debits wait a minute at the simulated bank: the helper settles them. */
let manual: PaymentsTestService;
/** Debits settle after 200 ms, reported by the simulated processor's webhook. */
let automatic: PaymentsTestService;
/** Its own clock, moved by the tests: for dormancy. */
let clocked: PaymentsTestService;
let clock = Date.now();
let api: Api;
let autoApi: Api;
let clockApi: Api;
let liveApi: Api;
let otherApi: Api;
const log = pino({ level: 'silent' });
const DAY = 86_400_000;

beforeAll(async () => {
  testDb = await createTestDatabase();
  manual = await startPaymentsService(testDb);
  automatic = await startPaymentsService(testDb, { settings: { simulator: { pendingDelayMs: 200 } } });
  clocked = await startPaymentsService(testDb, { settings: { mandateDormancyDays: 30 }, runtime: { now: () => new Date(clock) } });
  const tenant = await createTenant(testDb.database);
  const other = await createTenant(testDb.database, 'Other');
  api = client(manual.url, tenant.testKey);
  autoApi = client(automatic.url, tenant.testKey);
  clockApi = client(clocked.url, tenant.testKey);
  liveApi = client(manual.url, tenant.liveKey);
  otherApi = client(manual.url, other.testKey);
});
afterAll(async () => {
  await clocked?.close();
  await automatic?.close();
  await manual?.close();
  await testDb?.drop();
});

const balanceOf = async (a: Api, currency = 'EUR') =>
  ((await a.get('/v1/balance')).body.available as { currency: string; amount: number }[]).find((x) => x.currency === currency)?.amount ?? 0;

function debit(a: Api, orderId: string, mandateId: string, opts: { idempotencyKey?: string } = {}) {
  return a.post('/v1/payments', { payment_order: orderId, payment_method: mandateMethod(mandateId) }, opts);
}

function expectError(res: { status: number; body: any; text: string }, status: number, code: string, param?: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error.code, res.text).toBe(code);
  if (param !== undefined) expect(res.body.error.param, res.text).toBe(param);
}

describe('a direct debit, end to end', () => {
  it('starts pending, settles through the inbound webhook, pays the order, credits the balance once, and is delivered signed', async () => {
    const receiver = await Receiver.start();
    try {
      const endpoint = await autoApi.post('/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['payment.*', 'mandate.*', 'payment_order.paid'] });
      expect(endpoint.status, endpoint.text).toBe(201);
      const before = await balanceOf(autoApi);
      const mandate = await newMandate(autoApi, 'sepa_core', ENDINGS.success, { max_amount: 10_000 });
      const order = await newOrder(autoApi, { amount: 2500 });
      const res = await debit(autoApi, order.id, mandate.id);
      expect(res.status, res.text).toBe(201);
      const payment = res.body;
      expect(payment).toMatchObject({
        status: 'pending',
        amount: 2500,
        currency: 'EUR',
        connector: 'simulator_a',
        payment_method: { type: 'mandate', mandate: mandate.id, scheme: 'sepa_core', last4: mandate.bank_account.last4 },
        version: 2,
      });
      expect(Object.keys(payment.payment_method).sort()).toEqual(['last4', 'mandate', 'scheme', 'type']);
      expect(payment.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'pending' })]);
      expect((await autoApi.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('processing');

      const settled = await eventually(
        () => autoApi.get(`/v1/payments/${payment.id}`),
        (r) => r.body.status !== 'pending',
      );
      expect(settled.body).toMatchObject({ status: 'succeeded', version: 3 });
      expect((await autoApi.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 2500 });
      expect((await balanceOf(autoApi)) - before).toBe(2500);
      expect(await eventTypesOf(autoApi, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded']);
      const [webhookRow] = await query(testDb, sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${payment.id}`);
      expect(webhookRow!.n).toBe(1);
      // The mandate records the debit: dormancy counts from it.
      const after = (await autoApi.get(`/v1/mandates/${mandate.id}`)).body;
      expect(after.last_debit_at).not.toBeNull();
      expect(after).toMatchObject({ status: 'active', version: mandate.version + 1 });

      // Our own webhooks, verified as an integrator would, with the published package.
      const options = webhookOptions(automatic.config);
      await deliverAt(testDb.database, options);
      await receiver.waitFor(() => receiver.requests.some((r) => JSON.parse(r.body).type === 'payment.succeeded' && JSON.parse(r.body).data.object.id === payment.id));
      const delivered = receiver.requests.map((r) => verify(endpoint.body.secret, r));
      const succeeded = delivered.find((e: any) => e.type === 'payment.succeeded' && e.data.object.id === payment.id);
      expect(succeeded.data.object).toMatchObject({ status: 'succeeded', payment_method: { type: 'mandate', mandate: mandate.id } });
      const types = delivered.filter((e: any) => [mandate.id, payment.id, order.id].includes(e.data.object.id)).map((e: any) => e.type);
      expect(types).toEqual(expect.arrayContaining(['mandate.created', 'mandate.active', 'payment.created', 'payment.pending', 'payment.succeeded', 'payment_order.paid']));
    } finally {
      await receiver.close();
    }
  });

  it.each(['bacs', 'ach'] as const)('%s debits settle the same way (test helper)', async (scheme) => {
    const currency = scheme === 'bacs' ? 'GBP' : 'USD';
    const before = await balanceOf(api, currency);
    const mandate = await newMandate(api, scheme);
    const order = await newOrder(api, { amount: 700, currency });
    const payment = (await debit(api, order.id, mandate.id)).body;
    expect(payment).toMatchObject({ status: 'pending', payment_method: { type: 'mandate', scheme } });
    const resolved = await api.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'succeeded' });
    expect(resolved.body).toMatchObject({ status: 'succeeded', version: 3 });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
    expect((await balanceOf(api, currency)) - before).toBe(700);
  });

  it('a returned debit fails (debit_declined): the order opens again, the balance does not move', async () => {
    const before = await balanceOf(api);
    const mandate = await newMandate(api);
    const order = await newOrder(api, { amount: 900 });
    const payment = (await debit(api, order.id, mandate.id)).body;
    const resolved = await api.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'failed' });
    expect(resolved.body).toMatchObject({ status: 'failed', failure_code: 'debit_declined' });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    expect(await balanceOf(api)).toBe(before);
    expect((await api.get(`/v1/mandates/${mandate.id}`)).body.last_debit_at).toBeNull();
    // The order can be paid again, by card this time.
    const card = await api.post('/v1/payments', { payment_order: order.id, payment_method: cardMethod(CARDS.success) });
    expect(card.body.status).toBe('succeeded');
  });

  it('a mandate activated through fallback (0005) is debited at simulator_b, its holder, and nowhere else', async () => {
    const mandate = await newMandate(api, 'sepa_core', ENDINGS.processorError);
    expect(mandate.connector).toBe('simulator_b');
    const order = await newOrder(api);
    const payment = (await debit(api, order.id, mandate.id)).body;
    expect(payment).toMatchObject({ status: 'pending', connector: 'simulator_b' });
    expect(payment.attempts.map((a: any) => a.connector)).toEqual(['simulator_b']);
  });
});

describe('eligibility', () => {
  it('only an active mandate: pending, failed, revoked are mandate_not_active; nothing is created', async () => {
    const pending = await newMandate(api, 'sepa_core', ENDINGS.pending);
    const failed = await newMandate(api, 'sepa_core', ENDINGS.closed);
    const revoked = await newMandate(api);
    await api.post(`/v1/mandates/${revoked.id}/revoke`);
    for (const [m, status] of [[pending, 'pending'], [failed, 'failed'], [revoked, 'revoked']] as const) {
      const order = await newOrder(api);
      const res = await debit(api, order.id, m.id);
      expectError(res, 422, 'mandate_not_active', 'payment_method.mandate');
      expect(res.body.error.type).toBe('eligibility');
      expect(res.body.error.message).toContain(status);
      expect((await api.get(`/v1/payments?payment_order=${order.id}`)).body.data).toEqual([]);
      expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    }
  });

  it('the order currency must be the mandate currency: currency_mismatch', async () => {
    const mandate = await newMandate(api, 'bacs');
    const order = await newOrder(api, { currency: 'EUR' });
    const res = await debit(api, order.id, mandate.id);
    expectError(res, 422, 'currency_mismatch', 'payment_method.mandate');
    expect(res.body.error.type).toBe('eligibility');
  });

  it('the amount must be within max_amount: amount_above_limit (equal is fine)', async () => {
    const mandate = await newMandate(api, 'sepa_core', ENDINGS.success, { max_amount: 1000 });
    expectError(await debit(api, (await newOrder(api, { amount: 1001 })).id, mandate.id), 422, 'amount_above_limit', 'payment_method.mandate');
    expect((await debit(api, (await newOrder(api, { amount: 1000 })).id, mandate.id)).status).toBe(201);
  });

  it("another account's or mode's mandate is 404 resource_missing, like one that never existed", async () => {
    const mine = await newMandate(api);
    const theirs = await newMandate(otherApi);
    const order = await newOrder(api);
    const foreign = await debit(api, order.id, theirs.id);
    expectError(foreign, 404, 'resource_missing', 'payment_method.mandate');
    const never = await debit(api, order.id, 'mdt_01jd8x3v0pe7wbz0m4k6f2n9qa');
    expectError(never, 404, 'resource_missing', 'payment_method.mandate');
    expect(foreign.body.error.message.split(theirs.id).join('<id>')).toBe(never.body.error.message.split('mdt_01jd8x3v0pe7wbz0m4k6f2n9qa').join('<id>'));
    const liveOrder = await newOrder(liveApi);
    expectError(await debit(liveApi, liveOrder.id, mine.id), 404, 'resource_missing', 'payment_method.mandate');
    expectError(await debit(api, order.id, 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa'), 404, 'resource_missing', 'payment_method.mandate');
  });

  it('the payment method must be one or the other', async () => {
    const mandate = await newMandate(api);
    const order = await newOrder(api);
    const pay = (payment_method: unknown) => api.post('/v1/payments', { payment_order: order.id, payment_method });
    expectError(await pay({ type: 'mandate' }), 400, 'parameter_missing', 'payment_method.mandate');
    expectError(await pay({ type: 'card' }), 400, 'parameter_missing', 'payment_method.card');
    expectError(await pay({ type: 'mandate', mandate: mandate.id, card: cardMethod(CARDS.success).card }), 400, 'parameter_invalid', 'payment_method.card');
    expectError(await pay({ ...cardMethod(CARDS.success), mandate: mandate.id }), 400, 'parameter_invalid', 'payment_method.mandate');
    expectError(await pay({ type: 'sepa', mandate: mandate.id }), 400, 'parameter_invalid', 'payment_method.type');
  });

  it('routing rules by payment method type apply to debits', async () => {
    const mandate = await newMandate(api);
    const put = (rules: unknown) => api.request('PUT', '/v1/routing', { body: { rules } });
    try {
      expect((await put([{ payment_method_types: ['card'], connectors: [{ name: 'simulator_a' }] }])).status).toBe(200);
      expectError(await debit(api, (await newOrder(api)).id, mandate.id), 422, 'routing_no_match');
      // A rule for debits that does not list the mandate's holder cannot route it either.
      expect((await put([{ payment_method_types: ['mandate'], connectors: [{ name: 'simulator_b' }] }])).status).toBe(200);
      const res = await debit(api, (await newOrder(api)).id, mandate.id);
      expectError(res, 422, 'routing_no_match');
      expect(res.body.error.message).toContain('simulator_a');
      expect((await put([{ payment_method_types: ['mandate'], connectors: [{ name: 'simulator_b' }, { name: 'simulator_a' }] }])).status).toBe(200);
      expect((await debit(api, (await newOrder(api)).id, mandate.id)).body).toMatchObject({ status: 'pending', connector: 'simulator_a' });
    } finally {
      await put([{ connectors: [{ name: 'simulator_a' }, { name: 'simulator_b' }] }]);
    }
  });
});

describe('revocation while a debit is pending', () => {
  it('the merchant revokes: the pending debit still settles, once; a new debit is refused', async () => {
    const before = await balanceOf(api);
    const mandate = await newMandate(api);
    const order = await newOrder(api, { amount: 1234 });
    const payment = (await debit(api, order.id, mandate.id)).body;
    expect(payment.status).toBe('pending');
    const revoked = await api.post(`/v1/mandates/${mandate.id}/revoke`);
    expect(revoked.body.status).toBe('revoked');
    expectError(await debit(api, (await newOrder(api)).id, mandate.id), 422, 'mandate_not_active');

    const resolved = await api.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'succeeded' });
    expect(resolved.body).toMatchObject({ status: 'succeeded', version: 3 });
    // The processor's webhook about it comes too; nothing happens twice.
    await eventually(
      () => query(testDb, sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${payment.id}`),
      (rows) => Number(rows[0]!.n) >= 1,
      3000,
    );
    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded']);
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 1234 });
    expect((await balanceOf(api)) - before).toBe(1234);
    const entries = await query(testDb, sql`SELECT count(*)::int AS n FROM journal_entries WHERE source_id = ${parseId('pay', payment.id)!}`);
    expect(entries[0]!.n).toBe(1);
    // The mandate stays revoked, with the debit recorded.
    const after = (await api.get(`/v1/mandates/${mandate.id}`)).body;
    expect(after).toMatchObject({ status: 'revoked', revoked_by: 'merchant' });
    expect(after.last_debit_at).not.toBeNull();
  });

  it('the bank revokes: the pending debit settles by itself through the webhook, once', async () => {
    const before = await balanceOf(autoApi);
    const mandate = await newMandate(autoApi);
    const order = await newOrder(autoApi, { amount: 4321 });
    const payment = (await debit(autoApi, order.id, mandate.id)).body;
    const revoked = await autoApi.post(`/v1/test-helpers/mandates/${mandate.id}/resolve`, { outcome: 'revoked' });
    expect(revoked.body).toMatchObject({ status: 'revoked', revoked_by: 'bank' });
    const settled = await eventually(
      () => autoApi.get(`/v1/payments/${payment.id}`),
      (r) => r.body.status !== 'pending',
    );
    expect(settled.body.status).toBe('succeeded');
    expect((await balanceOf(autoApi)) - before).toBe(4321);
    expect(await eventTypesOf(autoApi, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded']);
    expect(await eventTypesOf(autoApi, mandate.id)).toEqual(['mandate.created', 'mandate.active', 'mandate.revoked']);
    expectError(await debit(autoApi, (await newOrder(autoApi)).id, mandate.id), 422, 'mandate_not_active');
  });

  it('a revocation racing debits: each debit is either created (and settles once) or refused, never both', async () => {
    const mandate = await newMandate(api);
    const orders = await Promise.all([1, 2, 3, 4].map(() => newOrder(api, { amount: 100 })));
    const results = await Promise.all([
      ...orders.map((o) => debit(api, o.id, mandate.id)),
      api.post(`/v1/mandates/${mandate.id}/revoke`),
    ]);
    const revoke = results.pop()!;
    expect(revoke.body.status).toBe('revoked');
    for (const [i, res] of results.entries()) {
      if (res.status === 201) {
        expect(res.body.status).toBe('pending');
        const done = await api.post(`/v1/test-helpers/payments/${res.body.id}/resolve`, { outcome: 'succeeded' });
        expect(done.body.status).toBe('succeeded');
        expect((await api.get(`/v1/payment-orders/${orders[i]!.id}`)).body.status).toBe('paid');
      } else {
        expectError(res, 422, 'mandate_not_active');
        expect((await api.get(`/v1/payments?payment_order=${orders[i]!.id}`)).body.data).toEqual([]);
      }
    }
  });
});

describe('idempotency and crash safety of debits', () => {
  it('the same key replays the debit; the bank saw one request', async () => {
    const mandate = await newMandate(api);
    const order = await newOrder(api);
    const key = `debit-${order.id}`;
    const first = await debit(api, order.id, mandate.id, { idempotencyKey: key });
    const again = await debit(api, order.id, mandate.id, { idempotencyKey: key });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    const sim = manual.payments.connectors.simulator!.processors.get('simulator_a')!;
    expect(sim.chargeRequests.get(first.body.id)).toBe(1);
  });

  it('a request that dies after the first phase is resumed by its retry: one debit, sent once', async () => {
    const mandate = await newMandate(api);
    const order = await newOrder(api);
    const key = `debit-crash-${order.id}`;
    const original = manual.payments.crashPoint;
    manual.payments.crashPoint = (point) => {
      if (point === 'payment_created') throw new Error('simulated crash after the first phase');
    };
    try {
      expect((await debit(api, order.id, mandate.id, { idempotencyKey: key })).status).toBe(500);
    } finally {
      manual.payments.crashPoint = original;
    }
    const retried = await debit(api, order.id, mandate.id, { idempotencyKey: key });
    expect(retried.status, retried.text).toBe(201);
    expect(retried.body).toMatchObject({ status: 'pending', connector: 'simulator_a', payment_method: { type: 'mandate', mandate: mandate.id } });
    expect((await api.get(`/v1/payments?payment_order=${order.id}`)).body.data).toHaveLength(1);
    const sim = manual.payments.connectors.simulator!.processors.get('simulator_a')!;
    expect(sim.chargeRequests.get(retried.body.id)).toBe(1);
  });
});

describe('expiry of dormant mandates, by the worker and its clock', () => {
  it('expires an active mandate unused for MANDATE_DORMANCY_DAYS, counted from activation or the last successful debit', async () => {
    const t0 = Date.now();
    clock = t0;
    const unused = await newMandate(clockApi);
    const used = await newMandate(clockApi);
    const pendingOne = await newMandate(clockApi, 'sepa_core', ENDINGS.pending);
    // Day 25: a debit on `used` settles.
    clock = t0 + 25 * DAY;
    const order = await newOrder(clockApi, { expires_at: new Date(t0 + 29 * DAY).toISOString() });
    const payment = (await debit(clockApi, order.id, used.id)).body;
    expect((await clockApi.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'succeeded' })).body.status).toBe('succeeded');
    expect((await clockApi.get(`/v1/mandates/${used.id}`)).body.last_debit_at).toBe(new Date(t0 + 25 * DAY).toISOString());

    const pass = (at: number) => runWorkerOnce({ db: testDb.database.db, log, now: () => new Date(at), payments: clocked.payments });
    // Day 29: nothing is 30 days dormant yet.
    expect((await pass(t0 + 29 * DAY)).mandates!.expired).toBe(0);
    // Day 31: the unused one expires; the one debited on day 25 does not.
    expect((await pass(t0 + 31 * DAY)).mandates!.expired).toBeGreaterThanOrEqual(1);
    expect((await clockApi.get(`/v1/mandates/${unused.id}`)).body).toMatchObject({ status: 'expired', version: unused.version + 1 });
    expect((await clockApi.get(`/v1/mandates/${used.id}`)).body.status).toBe('active');
    expect((await clockApi.get(`/v1/mandates/${pendingOne.id}`)).body.status).toBe('pending');
    expect(await eventTypesOf(clockApi, unused.id)).toEqual(['mandate.created', 'mandate.active', 'mandate.expired']);
    // Day 56: 31 days after its last debit, the other expires too; a second pass finds nothing.
    await pass(t0 + 56 * DAY);
    expect((await clockApi.get(`/v1/mandates/${used.id}`)).body.status).toBe('expired');
    expect((await pass(t0 + 56 * DAY)).mandates!.expired).toBe(0);

    // An expired mandate debits nothing and cannot be revoked.
    clock = t0 + 26 * DAY;
    const late = await newOrder(clockApi, { expires_at: new Date(t0 + 29 * DAY).toISOString() });
    expectError(await debit(clockApi, late.id, unused.id), 422, 'mandate_not_active');
    const revoke = await clockApi.post(`/v1/mandates/${unused.id}/revoke`);
    expectError(revoke, 422, 'invalid_state');
    expect(revoke.body.error.message).toContain('status is expired');
  });
});

describe('mandates abandoned by a crashed request, found by the worker', () => {
  async function crashAfterFirstPhase(ending: string) {
    const original = clocked.payments.crashPoint;
    clocked.payments.crashPoint = (point) => {
      if (point === 'mandate_created') throw new Error('simulated crash after the first phase');
    };
    try {
      const body = mandateBody('sepa_core', ending);
      expect((await clockApi.post('/v1/mandates', body)).status).toBe(500);
      const [row] = await query(testDb, sql`SELECT id FROM mandates WHERE reference = ${body.reference}`);
      const { toPublicId } = await import('../src/kernel/ids.js');
      return toPublicId('mdt', String(row!.id));
    } finally {
      clocked.payments.crashPoint = original;
    }
  }

  it('fails it (processing_error) once its retry window is over, when no connector holds it', async () => {
    clock = Date.now();
    const id = await crashAfterFirstPhase(ENDINGS.success);
    const pass = () => runWorkerOnce({ db: testDb.database.db, log, now: () => new Date(clock), payments: clocked.payments });
    await pass();
    expect((await clockApi.get(`/v1/mandates/${id}`)).body.status).toBe('pending');
    clock += 10 * 60_000;
    await pass();
    const after = (await clockApi.get(`/v1/mandates/${id}`)).body;
    expect(after).toMatchObject({ status: 'failed', failure_code: 'processing_error', connector: null });
    expect(await eventTypesOf(clockApi, id)).toEqual(['mandate.created', 'mandate.failed']);
  });

  it('adopts it when a connector of its route holds it', async () => {
    clock = Date.now();
    const id = await crashAfterFirstPhase(ENDINGS.success);
    const sim = clocked.payments.connectors.simulator!.processors.get('simulator_b')!;
    sim.mandates.create({
      merchant_reference: id,
      scheme: 'SEPA_CORE',
      currency: 'EUR',
      account: { country: 'DE', number: '370400440532010000', bank_code: null },
      payer: { email: 'payer@example.com', name: null },
    });
    clock += 10 * 60_000;
    await runWorkerOnce({ db: testDb.database.db, log, now: () => new Date(clock), payments: clocked.payments });
    expect((await clockApi.get(`/v1/mandates/${id}`)).body).toMatchObject({ status: 'active', connector: 'simulator_b' });
  });
});

