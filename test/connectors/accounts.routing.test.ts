// Routing through connector accounts: rules name accounts (by name or id), payments and payouts go
// to them and name them by id, test mode without accounts keeps the simulators, defaults follow
// the accounts, typed errors for unknown, foreign, disabled or unreachable accounts, disabling and
// deleting an account in use, and inbound webhooks and test helpers for what an account holds.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxRouteLength } from '../../src/config.js';
import { client, createTenant, createTestDatabase, startTestService, type Api, type TestDatabase, type TestService } from '../support/helpers.js';
import { CARDS, orderAndPay } from '../support/payments.js';
import { fund, newBeneficiary, payout } from '../support/payouts.js';
import { chargeEvent, createConnectorAccount, newTenantClients, sendSimulatorWebhook } from '../support/connectors.js';

let testDb: TestDatabase;
let service: TestService;
let nextRandom = 0;

beforeAll(async () => {
  testDb = await createTestDatabase();
  service = await startTestService(testDb, { runtime: { random: () => nextRandom } });
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
});

const newTenant = () => newTenantClients(testDb, service.url);
const account = createConnectorAccount;

const putRules = (api: Api, rules: unknown[]) => api.request('PUT', '/v1/routing', { body: { rules } });
const attemptsOf = (payment: any) => payment.attempts.map((a: any) => [a.connector, a.outcome]);

describe('routing through connector accounts', () => {
  it('test mode without connector accounts keeps the built-in simulators', async () => {
    const { test } = await newTenant();
    expect((await test.get('/v1/routing')).body).toMatchObject({
      is_default: true,
      rules: [{ name: 'default', connectors: [{ name: 'simulator_a' }, { name: 'simulator_b' }] }],
    });
    const { payment } = await orderAndPay(test, CARDS.processorError);
    expect(attemptsOf(payment)).toEqual([
      ['simulator_a', 'error'],
      ['simulator_b', 'succeeded'],
    ]);
  });

  it('by default a mode routes to its enabled accounts, oldest first; payments name the account by id', async () => {
    const { test } = await newTenant();
    const a = await account(test, 'simulator_a', 'first');
    const b = await account(test, 'simulator_b', 'second');
    // Without PUBLIC_BASE_URL, URLs handed out start with the address the service listens on.
    expect((a as any).webhook_url).toBe(`${service.url}/v1/connectors/simulator_a/webhooks`);
    const routing = (await test.get('/v1/routing')).body;
    expect(routing).toMatchObject({
      is_default: true,
      rules: [{ name: 'default', connectors: [{ name: 'first', connector_account: a.id }, { name: 'second', connector_account: b.id }] }],
    });
    expect(routing.connectors).toEqual([
      { name: 'first', connector: 'simulator_a', connector_account: a.id, circuit: 'closed' },
      { name: 'second', connector: 'simulator_b', connector_account: b.id, circuit: 'closed' },
      { name: 'simulator_a', connector: 'simulator_a', connector_account: null, circuit: 'closed' },
      { name: 'simulator_b', connector: 'simulator_b', connector_account: null, circuit: 'closed' },
    ]);
    const ok = (await orderAndPay(test, CARDS.success)).payment;
    expect(ok).toMatchObject({ status: 'succeeded', connector: a.id });
    // simulator_a answers this card with a processor error: the route falls back to the next account.
    const fallback = (await orderAndPay(test, CARDS.processorError)).payment;
    expect(fallback).toMatchObject({ status: 'succeeded', connector: b.id });
    expect(attemptsOf(fallback)).toEqual([
      [a.id, 'error'],
      [b.id, 'succeeded'],
    ]);
  });

  it('rules name accounts by name or by id; answers show the current name, and a rename keeps the rule', async () => {
    const { test } = await newTenant();
    const eu = await account(test, 'simulator_a', 'eu');
    const us = await account(test, 'simulator_b', 'us');
    const put = await putRules(test, [
      { name: 'usd', currencies: ['USD'], connectors: [{ connector_account: us.id }] },
      { name: 'rest', connectors: [{ name: 'eu', connector_account: eu.id }, { name: 'simulator_b' }] },
    ]);
    expect(put.status, put.text).toBe(200);
    expect(put.body.rules).toEqual([
      { name: 'usd', currencies: ['USD'], connectors: [{ name: 'us', connector_account: us.id }] },
      { name: 'rest', connectors: [{ name: 'eu', connector_account: eu.id }, { name: 'simulator_b' }] },
    ]);
    expect((await orderAndPay(test, CARDS.success, { currency: 'USD' })).payment.connector).toBe(us.id);
    expect((await orderAndPay(test, CARDS.success)).payment.connector).toBe(eu.id);
    expect(attemptsOf((await orderAndPay(test, CARDS.processorError)).payment)).toEqual([
      [eu.id, 'error'],
      ['simulator_b', 'succeeded'],
    ]);

    expect((await test.request('PATCH', `/v1/connector-accounts/${eu.id}`, { body: { name: 'europe' } })).status).toBe(200);
    const after = (await test.get('/v1/routing')).body;
    expect(after.rules[1].connectors[0]).toEqual({ name: 'europe', connector_account: eu.id });
    expect(after.version).toBe(put.body.version);
    expect((await orderAndPay(test, CARDS.success)).payment.connector).toBe(eu.id);
    // What GET answers can be PUT back as it is.
    const again = await putRules(test, after.rules);
    expect(again.status, again.text).toBe(200);
    expect(again.body.rules).toEqual(after.rules);
  });

  it('weights apply to accounts as to any connector', async () => {
    const { test } = await newTenant();
    const a = await account(test, 'simulator_b', 'light');
    const b = await account(test, 'simulator_b', 'heavy');
    await putRules(test, [{ connectors: [{ name: 'light', weight: 1 }, { name: 'heavy', weight: 3 }] }]);
    nextRandom = 0.1;
    expect((await orderAndPay(test, CARDS.success)).payment.connector).toBe(a.id);
    nextRandom = 0.9;
    expect((await orderAndPay(test, CARDS.success)).payment.connector).toBe(b.id);
  });

  it('refuses rules naming what cannot be routed to, with typed errors, changing nothing', async () => {
    const { test, live } = await newTenant();
    const stranger = await newTenant();
    const mine = await account(test, 'simulator_a', 'mine');
    const off = await account(test, 'simulator_b', 'off');
    await test.request('PATCH', `/v1/connector-accounts/${off.id}`, { body: { status: 'disabled' } });
    await account(test, 'gocardless', 'gocardless', { access_token: `sandbox_${'k'.repeat(24)}` });
    const theirs = await account(stranger.test, 'simulator_a', 'theirs');
    const liveOne = await account(live, 'stripe', 'live-stripe', { secret_key: `sk_live_${'y'.repeat(30)}` });
    const neverId = 'ca_01jd8x3v0pe7wbz0m4k6f2n9qa';
    const before = (await test.get('/v1/routing')).body;

    const cases: [unknown, number, string, string, RegExp][] = [
      [{ name: 'nobody' }, 400, 'parameter_invalid', 'rules.0.connectors.0.name', /no connector account named nobody in test mode; available: mine, off, gocardless, simulator_a, simulator_b/],
      [{ name: 'theirs' }, 400, 'parameter_invalid', 'rules.0.connectors.0.name', /no connector account named theirs/],
      [{ connector_account: neverId }, 404, 'resource_missing', 'rules.0.connectors.0.connector_account', /No such connector account/],
      [{ connector_account: 'ca_nonsense' }, 404, 'resource_missing', 'rules.0.connectors.0.connector_account', /No such connector account/],
      [{ connector_account: liveOne.id }, 404, 'resource_missing', 'rules.0.connectors.0.connector_account', /exists in live mode/],
      [{ name: 'off' }, 400, 'parameter_invalid', 'rules.0.connectors.0.name', /off \(ca_\w+\) is disabled/],
      [{ connector_account: off.id }, 400, 'parameter_invalid', 'rules.0.connectors.0.connector_account', /is disabled/],
      [{ name: 'other', connector_account: mine.id }, 400, 'parameter_invalid', 'rules.0.connectors.0.name', /is named mine, not other/],
      [{ weight: 2 }, 400, 'parameter_missing', 'rules.0.connectors.0.name', /name \(or rules\.0\.connectors\.0\.connector_account\)/],
    ];
    for (const [choice, status, code, param, message] of cases) {
      const res = await putRules(test, [{ connectors: [choice] }]);
      expect(res.status, res.text).toBe(status);
      expect(res.body.error).toMatchObject({ code, param });
      expect(res.body.error.message).toMatch(message);
    }
    // A foreign id answers exactly like one that never existed.
    const foreign = await putRules(test, [{ connectors: [{ connector_account: theirs.id }] }]);
    const absent = await putRules(test, [{ connectors: [{ connector_account: neverId }] }]);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.message.split(theirs.id).join('<id>')).toBe(absent.body.error.message.split(neverId).join('<id>'));
    // The same account twice, once by name and once by id.
    const twice = await putRules(test, [{ connectors: [{ name: 'mine' }, { connector_account: mine.id }] }]);
    expect(twice.body.error).toMatchObject({ code: 'parameter_invalid', param: 'rules.0.connectors.1.name' });
    expect((await test.get('/v1/routing')).body).toEqual(before);
  });

  it('a disabled account gets no new payments but settles what it holds; an account named by the rules cannot be deleted', async () => {
    const { test } = await newTenant();
    const a = await account(test, 'simulator_a', 'a');
    const b = await account(test, 'simulator_b', 'b');
    await putRules(test, [{ connectors: [{ name: 'a' }, { name: 'b' }] }]);
    const held = (await orderAndPay(test, CARDS.pending)).payment;
    expect(held).toMatchObject({ status: 'pending', connector: a.id });

    expect((await test.request('PATCH', `/v1/connector-accounts/${a.id}`, { body: { status: 'disabled' } })).status).toBe(200);
    const routing = (await test.get('/v1/routing')).body;
    expect(routing.rules[0].connectors.map((c: any) => c.name)).toEqual(['a', 'b']);
    expect(routing.connectors.map((c: any) => c.name)).not.toContain('a');
    const whileOff = (await orderAndPay(test, CARDS.success)).payment;
    expect(attemptsOf(whileOff)).toEqual([[b.id, 'succeeded']]);
    // What it holds still settles through it (the test helper asks its simulated processor).
    const resolved = await test.post(`/v1/test-helpers/payments/${held.id}/resolve`, { outcome: 'succeeded' });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.body).toMatchObject({ status: 'succeeded', connector: a.id });

    const refused = await test.request('DELETE', `/v1/connector-accounts/${b.id}`);
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.error).toMatchObject({ type: 'validation', code: 'connector_account_in_use' });
    expect(refused.body.error.message).toContain(b.id);
    expect((await test.get(`/v1/connector-accounts/${b.id}`)).status).toBe(200);

    // Out of the rules, it can go; what it holds still settles after.
    const pendingAtB = (await orderAndPay(test, CARDS.pending)).payment;
    expect(pendingAtB.connector).toBe(b.id);
    await test.request('PATCH', `/v1/connector-accounts/${a.id}`, { body: { status: 'enabled' } });
    await putRules(test, [{ connectors: [{ name: 'a' }] }]);
    expect((await test.request('DELETE', `/v1/connector-accounts/${b.id}`)).status).toBe(200);
    const settled = await test.post(`/v1/test-helpers/payments/${pendingAtB.id}/resolve`, { outcome: 'failed' });
    expect(settled.body).toMatchObject({ status: 'failed', connector: b.id });
    expect((await orderAndPay(test, CARDS.success)).payment.connector).toBe(a.id);
  });

  it("the simulators' webhooks settle what their accounts hold; another tenant's account URL settles nothing of this tenant's", async () => {
    const { test } = await newTenant();
    const sim = await account(test, 'simulator_a', 'sim');
    const first = (await orderAndPay(test, CARDS.pending)).payment;
    expect(first.connector).toBe(sim.id);
    const viaName = await sendSimulatorWebhook(service.url, '/v1/connectors/simulator_a/webhooks', 'simulator_a', chargeEvent(first, 'CAPTURED'));
    expect(viaName.body).toEqual({ received: true, duplicate: false, applied: true });
    expect((await test.get(`/v1/payments/${first.id}`)).body).toMatchObject({ status: 'succeeded', connector: sim.id });
    // The other simulator does not hold it.
    const second = (await orderAndPay(test, CARDS.pending)).payment;
    const wrong = await sendSimulatorWebhook(service.url, '/v1/connectors/simulator_b/webhooks', 'simulator_b', chargeEvent(second, 'CAPTURED'));
    expect(wrong.body).toEqual({ received: true, duplicate: false, applied: false });

    // The account's own URL, and someone else's account of the same simulator.
    const stranger = await account((await newTenant()).test, 'simulator_a', 'stranger');
    const foreign = await sendSimulatorWebhook(service.url, `/v1/connector-accounts/${stranger.id}/webhooks`, 'simulator_a', chargeEvent(second, 'CAPTURED'));
    expect(foreign.body).toEqual({ received: true, duplicate: false, applied: false });
    expect((await test.get(`/v1/payments/${second.id}`)).body.status).toBe('pending');
    const own = await sendSimulatorWebhook(service.url, `/v1/connector-accounts/${sim.id}/webhooks`, 'simulator_a', chargeEvent(second, 'REFUSED'));
    expect(own.body).toEqual({ received: true, duplicate: false, applied: true });
    expect((await test.get(`/v1/payments/${second.id}`)).body).toMatchObject({ status: 'failed', failure_code: 'insufficient_funds' });
    // Badly signed or for no account: typed errors.
    const badSignature = await sendSimulatorWebhook(service.url, `/v1/connector-accounts/${sim.id}/webhooks`, 'simulator_a', chargeEvent(second, 'CAPTURED'), { secretOf: 'simulator_b' });
    expect(badSignature.status).toBe(401);
    expect(badSignature.body.error.code).toBe('connector_webhook_signature_invalid');
    const nobody = await sendSimulatorWebhook(service.url, '/v1/connector-accounts/ca_01jd8x3v0pe7wbz0m4k6f2n9qa/webhooks', 'simulator_a', '{}');
    expect(nobody.status).toBe(404);
    expect(nobody.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
  });

  it("a GoCardless account's webhooks must carry GoCardless's signature with the account's secret", async () => {
    const { test } = await newTenant();
    const gocardless = await account(test, 'gocardless', 'gocardless', { access_token: `sandbox_${'k'.repeat(24)}`, webhook_secret: 'gc-secret' });
    const res = await sendSimulatorWebhook(service.url, `/v1/connector-accounts/${gocardless.id}/webhooks`, 'simulator_a', '{"events":[]}');
    expect(res.status, res.text).toBe(401);
    expect(res.body.error.code).toBe('connector_webhook_signature_invalid');
  });

  it('test mode: beside a GoCardless account (mandates only), cards and payouts keep going to the simulators', async () => {
    const { test } = await newTenant();
    const gocardless = await account(test, 'gocardless', 'gocardless', { access_token: `sandbox_${'k'.repeat(24)}` });
    expect((await test.get('/v1/routing')).body).toMatchObject({
      is_default: true,
      rules: [
        { name: 'default', payment_method_types: ['mandate'], connectors: [{ name: 'gocardless', connector_account: gocardless.id }] },
        { name: 'default', payment_method_types: ['card', 'payout'], connectors: [{ name: 'simulator_a' }, { name: 'simulator_b' }] },
      ],
    });
    expect((await orderAndPay(test, CARDS.success)).payment).toMatchObject({ status: 'succeeded', connector: 'simulator_a' });
  });

  it('live mode: a live GoCardless account takes mandates only; a card payment finds no route', async () => {
    const { live } = await newTenant();
    const gocardless = await account(live, 'gocardless', 'gocardless-live', { access_token: `live_${'k'.repeat(24)}` });
    expect((await live.get('/v1/routing')).body).toMatchObject({ is_default: true, rules: [{ connectors: [{ connector_account: gocardless.id }] }] });
    const order = (await live.post('/v1/payment-orders', { amount: 100, currency: 'EUR', reference: 'r', customer: { email: 'a@b.co' } })).body;
    const res = await live.post('/v1/payments', {
      payment_order: order.id,
      payment_method: { type: 'card', card: { number: '4111111111111111', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' } },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.error.code).toBe('routing_no_match');
  });

  it('payouts follow rules naming accounts', async () => {
    const { test } = await newTenant();
    const bank = await account(test, 'simulator_b', 'bank');
    await putRules(test, [{ payment_method_types: ['payout'], connectors: [{ name: 'bank' }] }]);
    await fund(test, 10_000);
    const beneficiary = await newBeneficiary(test);
    const created = await payout(test, beneficiary.id, 1000);
    expect(created.status, created.text).toBe(201);
    let seen: any;
    for (let i = 0; i < 100 && !(seen?.connector); i++) {
      seen = (await test.get(`/v1/payouts/${created.body.id}`)).body;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(seen).toMatchObject({ connector: bank.id });
    expect(seen.attempts.map((a: any) => a.connector)).toEqual([bank.id]);
  });
});

describe('how long a route may be', () => {
  it('is what two rounds of connector calls fit within the idempotency lock', () => {
    expect(maxRouteLength(60, 10_000)).toBe(2);
    expect(maxRouteLength(61, 10_000)).toBe(3);
    expect(maxRouteLength(60, 300)).toBe(99);
  });

  it('holds rules to it, and cuts default routes to it', async () => {
    // A second service on the same database, whose connector calls may take 10 s each.
    const slow = await startTestService(testDb, { settings: { connectorTimeoutMs: 10_000 } });
    try {
      const api = client(slow.url, (await createTenant(testDb.database)).testKey);
      const names = [] as string[];
      for (const connector of ['simulator_a', 'simulator_b', 'simulator_b']) names.push((await account(api, connector, `sim-${crypto.randomBytes(3).toString('hex')}`)).name);
      expect((await api.get('/v1/routing')).body.rules[0].connectors.map((c: any) => c.name)).toEqual(names.slice(0, 2));
      const res = await putRules(api, [{ connectors: names.map((name) => ({ name })) }]);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'rules.0.connectors' });
      expect(res.body.error.message).toMatch(/at most 2 connectors/);
    } finally {
      await slow.close();
    }
  });
});
