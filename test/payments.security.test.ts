// Tenancy and authentication over every route of payments, refunds, routing and balance (the
// routes listed in payments.routes.ts; a guard test fails when one is added without a row here).
// Four principals: two accounts, each in test and live mode. Live mode routes to a lab connector
// that accepts everything (no real processor exists here). For every route: no key or a bad key
// is 401; another account's object answers exactly like one that never existed; this account's
// object in the other mode is missing too; lists, balances and routing show only the caller's own.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connector } from '../src/connectors/types.js';
import { call, createTenant, createTestDatabase, orderBody, type ApiResponse, type TestDatabase } from './helpers.js';
import { CARDS, cardMethod, startPaymentsService, type PaymentsTestService } from './payments.helpers.js';
import { PAYMENTS_AUTHENTICATED_ROUTES } from './payments.routes.js';

type Principal = 'aTest' | 'aLive' | 'bTest' | 'bLive';
const PRINCIPALS: Principal[] = ['aTest', 'aLive', 'bTest', 'bLive'];
const OTHER_ACCOUNT: Record<Principal, Principal> = { aTest: 'bTest', aLive: 'bLive', bTest: 'aTest', bLive: 'aLive' };
const OTHER_MODE: Record<Principal, Principal> = { aTest: 'aLive', aLive: 'aTest', bTest: 'bLive', bLive: 'bTest' };
const isLive = (p: Principal) => p.endsWith('Live');
const LIVE_CARD = '5555555555554444';

/** Accepts every live charge and refund at once: enough to have live objects to isolate. */
const lab: Connector = {
  name: 'lab_live',
  modes: ['live'],
  paymentMethodTypes: ['card'],
  charge: async (r) => ({ kind: 'succeeded', connectorReference: `lab_${r.reference}` }),
  chargeStatus: async (r) => ({ kind: 'succeeded', connectorReference: `lab_${r.reference}` }),
  refund: async (r) => ({ kind: 'succeeded', connectorReference: `lab_${r.reference}` }),
  refundStatus: async (r) => ({ kind: 'succeeded', connectorReference: `lab_${r.reference}` }),
  parseWebhook: () => {
    throw new Error('no webhooks');
  },
};

let testDb: TestDatabase;
let service: PaymentsTestService;
const keys = {} as Record<Principal, string>;
/** Per principal: a succeeded payment, a pending payment (test mode), a refund, open orders. */
const owned = {} as Record<Principal, { paid: string; pending?: string; refund: string; amount: number; funded: number; payments: string[]; refunds: string[] }>;

async function as(me: Principal, method: string, path: string, body?: unknown, idempotencyKey: string | undefined = crypto.randomUUID()) {
  return call(service.url, method, path, { key: keys[me], body, idempotencyKey: method === 'POST' ? idempotencyKey : undefined });
}

async function newPayment(me: Principal, amount: number, card = isLive(me) ? LIVE_CARD : CARDS.success): Promise<string> {
  const order = await as(me, 'POST', '/v1/payment-orders', orderBody({ amount }));
  const payment = await as(me, 'POST', '/v1/payments', { payment_order: order.body.id, payment_method: cardMethod(card) });
  expect(payment.status, payment.text).toBe(201);
  owned[me].payments.push(payment.body.id);
  return payment.body.id;
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  const { createSimulatorConnector, inProcessTransport } = await import('../src/connectors/simulator/connector.js');
  const { SimulatorHost } = await import('../src/connectors/simulator/processor.js');
  const { DEVELOPMENT_SIMULATOR_SECRET } = await import('../src/config.js');
  const host = new SimulatorHost({ familySecret: DEVELOPMENT_SIMULATOR_SECRET, pendingDelayMs: 600_000 });
  const simulators = ['simulator_a', 'simulator_b'].map((name) =>
    createSimulatorConnector({ name, transport: inProcessTransport(host), familySecret: DEVELOPMENT_SIMULATOR_SECRET }),
  );
  service = await startPaymentsService(testDb, { runtime: { connectors: [...simulators, lab] } });
  const a = await createTenant(testDb.database, 'Tenant A');
  const b = await createTenant(testDb.database, 'Tenant B');
  Object.assign(keys, { aTest: a.testKey, aLive: a.liveKey, bTest: b.testKey, bLive: b.liveKey });
  // Distinct amounts per principal, so a balance that mixed tenants or modes would show.
  const amounts: Record<Principal, number> = { aTest: 1100, aLive: 2200, bTest: 3300, bLive: 4400 };
  for (const me of PRINCIPALS) {
    owned[me] = { paid: '', refund: '', amount: amounts[me], funded: 0, payments: [], refunds: [] };
    owned[me].paid = await newPayment(me, amounts[me]);
    if (!isLive(me)) owned[me].pending = await newPayment(me, 500, CARDS.pending);
    const refund = await as(me, 'POST', '/v1/refunds', { payment: owned[me].paid, amount: 100 });
    expect(refund.status, refund.text).toBe(201);
    owned[me].refund = refund.body.id;
    owned[me].refunds.push(refund.body.id);
    if (!isLive(me)) {
      owned[me].funded = amounts[me] * 10;
      expect((await as(me, 'POST', '/v1/test-helpers/balance/fund', { amount: owned[me].funded, currency: 'EUR' })).status).toBe(201);
    }
  }
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
});

function expectTyped(res: ApiResponse, status: number, type: string, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body?.error).toMatchObject({ type, code, request_id: res.headers.get('request-id') });
}

interface Case {
  route: (typeof PAYMENTS_AUTHENTICATED_ROUTES)[number];
  /** A valid request of `me` against `id` (an object of `me` unless the test says otherwise). */
  request: (me: Principal, id?: string) => Promise<ApiResponse>;
  /** Id routes: which object of a principal the route acts on. */
  object?: (p: Principal) => string | undefined;
  ok: number;
  testOnly?: boolean;
}

const CASES: Case[] = [
  { route: 'POST /v1/payments', ok: 201, request: async (me, id) => as(me, 'POST', '/v1/payments', { payment_order: id ?? (await as(me, 'POST', '/v1/payment-orders', orderBody())).body.id, payment_method: cardMethod(isLive(me) ? LIVE_CARD : CARDS.success) }), object: () => undefined },
  { route: 'GET /v1/payments', ok: 200, request: (me) => as(me, 'GET', '/v1/payments?limit=100') },
  { route: 'GET /v1/payments/:id', ok: 200, request: (me, id) => as(me, 'GET', `/v1/payments/${id}?refresh=true`), object: (p) => owned[p].paid },
  { route: 'POST /v1/refunds', ok: 201, request: (me, id) => as(me, 'POST', '/v1/refunds', { payment: id, amount: 1 }), object: (p) => owned[p].paid },
  { route: 'GET /v1/refunds', ok: 200, request: (me) => as(me, 'GET', '/v1/refunds?limit=100') },
  { route: 'GET /v1/refunds/:id', ok: 200, request: (me, id) => as(me, 'GET', `/v1/refunds/${id}`), object: (p) => owned[p].refund },
  { route: 'GET /v1/routing', ok: 200, request: (me) => as(me, 'GET', '/v1/routing') },
  { route: 'PUT /v1/routing', ok: 200, request: (me) => as(me, 'PUT', '/v1/routing', { rules: [{ connectors: [{ name: isLive(me) ? 'lab_live' : 'simulator_b' }] }] }) },
  { route: 'GET /v1/balance', ok: 200, request: (me) => as(me, 'GET', '/v1/balance') },
  { route: 'GET /v1/balance-transactions', ok: 200, request: (me) => as(me, 'GET', '/v1/balance-transactions?limit=100') },
  {
    route: 'POST /v1/test-helpers/payments/:id/resolve',
    ok: 200,
    testOnly: true,
    request: (me, id) => as(me, 'POST', `/v1/test-helpers/payments/${id}/resolve`, { outcome: 'succeeded' }),
    object: (p) => owned[p].pending ?? owned[p].paid,
  },
  { route: 'POST /v1/test-helpers/balance/fund', ok: 201, testOnly: true, request: (me) => as(me, 'POST', '/v1/test-helpers/balance/fund', { amount: 1, currency: 'JPY' }) },
];

describe('payments, refunds, routing and balance: isolation and authentication', () => {
  it('the table covers every route of payments.routes.ts, and these are all registered', () => {
    expect(CASES.map((c) => c.route).sort()).toEqual([...PAYMENTS_AUTHENTICATED_ROUTES].sort());
    for (const route of PAYMENTS_AUTHENTICATED_ROUTES) {
      const [method, url] = route.split(' ') as [string, string];
      expect(service.app!.hasRoute({ method: method as 'GET', url }), route).toBe(true);
    }
  });

  it.each(CASES.map((c) => [c.route, c] as const))('%s', async (route, c) => {
    const [method, template] = route.split(' ') as [string, string];
    const path = template.replace(':id', c.object?.('aTest') ?? 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa');
    const body = method === 'GET' ? undefined : {};
    expectTyped(await call(service.url, method, path, { body, idempotencyKey: 'k' }), 401, 'authentication', 'api_key_missing');
    for (const bad of [`sk_test_${'A'.repeat(40)}`, keys.aTest.replace('sk_test_', 'sk_live_'), `${keys.aTest}x`, 'not-a-key']) {
      expectTyped(await call(service.url, method, path, { key: bad, body, idempotencyKey: 'k' }), 401, 'authentication', 'api_key_invalid');
    }

    for (const me of PRINCIPALS) {
      if (c.testOnly && isLive(me)) {
        for (const id of [c.object?.(me), c.object?.(OTHER_ACCOUNT[me]), c.object?.(OTHER_MODE[me])]) {
          expectTyped(await c.request(me, id), 403, 'authentication', 'permission_denied');
        }
        continue;
      }
      if (c.object) {
        const theirs = c.object(OTHER_ACCOUNT[me]);
        const otherMode = c.object(OTHER_MODE[me]);
        if (theirs && otherMode) {
          const foreign = await c.request(me, theirs);
          expectTyped(foreign, 404, 'validation', 'resource_missing');
          const never = `${theirs.split('_')[0]}_01jd8x3v0pe7wbz0m4k6f2n9qa`;
          const absent = await c.request(me, never);
          expectTyped(absent, 404, 'validation', 'resource_missing');
          expect(String(foreign.body.error.message).split(theirs).join('<id>')).toBe(String(absent.body.error.message).split(never).join('<id>'));
          expect(foreign.body.error.param).toBe(absent.body.error.param);
          expectTyped(await c.request(me, otherMode), 404, 'validation', 'resource_missing');
        }
      }
      if (route === 'POST /v1/payments') {
        // Another account's or mode's open order cannot be paid.
        for (const other of [OTHER_ACCOUNT[me], OTHER_MODE[me]]) {
          const order = (await as(other, 'POST', '/v1/payment-orders', orderBody())).body.id;
          expectTyped(await c.request(me, order), 404, 'validation', 'resource_missing');
          expect((await as(other, 'GET', `/v1/payment-orders/${order}`)).body.status).toBe('open');
        }
      }
      const mine = await c.request(me, c.object?.(me));
      expect(mine.status, `${me}: ${mine.text}`).toBe(c.ok);
      if (mine.body.object !== 'list') expect(mine.body.livemode).toBe(isLive(me));
      if (mine.body.object === 'payment') owned[me].payments.push(mine.body.id);
      if (mine.body.object === 'refund') owned[me].refunds.push(mine.body.id);
      if (mine.body.object === 'list') {
        const ownIds = new Set([...owned[me].payments, ...owned[me].refunds]);
        for (const item of mine.body.data) {
          expect(item.livemode).toBe(isLive(me));
          if (item.object === 'balance_transaction') {
            if (item.source) expect(ownIds.has(item.source), item.source).toBe(true);
          } else expect(ownIds.has(item.id), item.id).toBe(true);
        }
        expect(mine.body.data.length).toBeGreaterThan(0);
      }
    }
  });

  it('each balance is its own principal’s, exactly', async () => {
    for (const me of PRINCIPALS) {
      const payments = (await as(me, 'GET', '/v1/payments?limit=100')).body.data.filter((p: any) => p.status === 'succeeded');
      const refunds = (await as(me, 'GET', '/v1/refunds?limit=100')).body.data.filter((r: any) => r.status === 'succeeded');
      const fundedEur = (await as(me, 'GET', '/v1/balance-transactions?type=test_funding&currency=EUR&limit=100')).body.data.reduce((s: number, t: any) => s + t.amount, 0);
      const expected = payments.reduce((s: number, p: any) => s + p.amount, 0) - refunds.reduce((s: number, r: any) => s + r.amount, 0) + fundedEur;
      const balance = (await as(me, 'GET', '/v1/balance')).body;
      expect(balance.livemode).toBe(isLive(me));
      expect(balance.available.find((x: any) => x.currency === 'EUR')?.amount).toBe(expected);
      expect(fundedEur).toBe(owned[me].funded);
    }
  });

  it('routing is per account and mode', async () => {
    await as('aTest', 'PUT', '/v1/routing', { rules: [{ currencies: ['USD'], connectors: [{ name: 'simulator_b' }] }] });
    expect((await as('aTest', 'GET', '/v1/routing')).body).toMatchObject({ is_default: false, rules: [{ currencies: ['USD'] }] });
    for (const other of ['bTest', 'aLive'] as const) {
      const routing = (await as(other, 'GET', '/v1/routing')).body;
      expect(routing.rules).not.toEqual([{ currencies: ['USD'], connectors: [{ name: 'simulator_b' }] }]);
    }
    // A live configuration cannot name test-mode connectors, and a test one cannot name live ones.
    expectTyped(await as('aLive', 'PUT', '/v1/routing', { rules: [{ connectors: [{ name: 'simulator_a' }] }] }), 400, 'validation', 'parameter_invalid');
    expectTyped(await as('aTest', 'PUT', '/v1/routing', { rules: [{ connectors: [{ name: 'lab_live' }] }] }), 400, 'validation', 'parameter_invalid');
  });
});
