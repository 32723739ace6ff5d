// Tenancy and authentication over every route of beneficiaries and payouts (payouts.routes.ts; the
// guard in isolation.security.test.ts fails when a route has no row). Four principals: two
// accounts, each in test and live mode; live mode pays out through a lab connector that pays at
// once (no real bank exists here). For every route: no key or a bad key is 401; another account's
// object answers exactly like one that never existed; this account's object in the other mode is
// missing too; lists show only the caller's own; refused requests change nothing.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connector } from '../src/connectors/types.js';
import { setPayoutSettings } from '../src/domain/accounts/service.js';
import { call, createTenant, createTestDatabase, orderBody, type ApiResponse, type TestDatabase } from './helpers.js';
import { cardMethod, startPaymentsService, type PaymentsTestService } from './payments.helpers.js';
import { bankAccount } from './payouts.helpers.js';
import { PAYOUTS_AUTHENTICATED_ROUTES } from './payouts.routes.js';

type Principal = 'aTest' | 'aLive' | 'bTest' | 'bLive';
const PRINCIPALS: Principal[] = ['aTest', 'aLive', 'bTest', 'bLive'];
const OTHER_ACCOUNT: Record<Principal, Principal> = { aTest: 'bTest', aLive: 'bLive', bTest: 'aTest', bLive: 'aLive' };
const OTHER_MODE: Record<Principal, Principal> = { aTest: 'aLive', aLive: 'aTest', bTest: 'bLive', bLive: 'bTest' };
const isLive = (p: Principal) => p.endsWith('Live');

const lab: Connector = {
  name: 'lab_live',
  modes: ['live'],
  paymentMethodTypes: ['card'],
  charge: async (r) => ({ kind: 'succeeded', connectorReference: `lab_${r.reference}` }),
  chargeStatus: async (r) => ({ kind: 'succeeded', connectorReference: `lab_${r.reference}` }),
  refund: async (r) => ({ kind: 'succeeded', connectorReference: `lab_${r.reference}` }),
  refundStatus: async (r) => ({ kind: 'succeeded', connectorReference: `lab_${r.reference}` }),
  // Live payouts wait at the "bank" (in transit), so they can be looked at and not cancelled.
  payout: async (r) => ({ kind: 'pending', connectorReference: `lab_${r.reference}` }),
  payoutStatus: async (r) => ({ kind: 'pending', connectorReference: `lab_${r.reference}` }),
  parseWebhook: () => {
    throw new Error('no webhooks');
  },
};

let testDb: TestDatabase;
let service: PaymentsTestService;
const keys = {} as Record<Principal, string>;
const owned = {} as Record<Principal, { beneficiary: string[]; payout: string[] }>;

function as(me: Principal | undefined, method: string, path: string, body?: unknown, key = me && keys[me]): Promise<ApiResponse> {
  return call(service.url, method, path, { key, body, idempotencyKey: method === 'POST' ? crypto.randomUUID() : undefined });
}

async function newBeneficiary(me: Principal): Promise<string> {
  const res = await as(me, 'POST', '/v1/beneficiaries', { name: `Owner ${me}`, type: 'individual', bank_account: bankAccount('0003'), metadata: { owner: me } });
  expect(res.status, res.text).toBe(201);
  owned[me].beneficiary.push(res.body.id);
  return res.body.id;
}

async function newPayout(me: Principal): Promise<string> {
  const res = await as(me, 'POST', '/v1/payouts', { beneficiary: owned[me].beneficiary[0], amount: 10, currency: 'EUR', reference: `iso-${me}` });
  expect(res.status, res.text).toBe(201);
  owned[me].payout.push(res.body.id);
  return res.body.id;
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
  service = await startPaymentsService(testDb, {
    runtime: { connectors: [...simulators, lab] },
    overrides: { payouts: { submitOnCreate: false, batchSize: 50 } },
  });
  const a = await createTenant(testDb.database, 'Tenant A');
  const b = await createTenant(testDb.database, 'Tenant B');
  Object.assign(keys, { aTest: a.testKey, aLive: a.liveKey, bTest: b.testKey, bLive: b.liveKey });
  for (const t of [a, b]) await setPayoutSettings(testDb.database.db, t.accountId, { liveEnabled: true });
  for (const me of PRINCIPALS) {
    owned[me] = { beneficiary: [], payout: [] };
    if (isLive(me)) {
      // Live money comes from a live payment through the lab connector.
      expect((await as(me, 'PUT', '/v1/routing', { rules: [{ connectors: [{ name: 'lab_live' }] }] })).status).toBe(200);
      const order = await as(me, 'POST', '/v1/payment-orders', orderBody({ amount: 100_000 }));
      const paid = await as(me, 'POST', '/v1/payments', { payment_order: order.body.id, payment_method: cardMethod('5555555555554444') });
      expect(paid.body.status, paid.text).toBe('succeeded');
    } else {
      expect((await as(me, 'POST', '/v1/test-helpers/balance/fund', { amount: 100_000, currency: 'EUR' })).status).toBe(201);
    }
    await newBeneficiary(me);
    await newBeneficiary(me);
    await newPayout(me);
    await newPayout(me);
  }
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
});

interface Case {
  route: (typeof PAYOUTS_AUTHENTICATED_ROUTES)[number];
  resource: 'beneficiary' | 'payout';
  kind: 'create' | 'list' | 'read' | 'write';
  ok: number;
  body?: (me: Principal) => unknown;
  testOnly?: boolean;
  /** Writes act on a fresh object of the caller's own; its id. */
  fresh?: (me: Principal) => Promise<string>;
}

const CASES: Case[] = [
  { route: 'POST /v1/beneficiaries', resource: 'beneficiary', kind: 'create', ok: 201, body: () => ({ name: 'New', type: 'business', bank_account: bankAccount('0000', 'gb') }) },
  { route: 'GET /v1/beneficiaries', resource: 'beneficiary', kind: 'list', ok: 200 },
  { route: 'GET /v1/beneficiaries/:id', resource: 'beneficiary', kind: 'read', ok: 200 },
  { route: 'PATCH /v1/beneficiaries/:id', resource: 'beneficiary', kind: 'write', ok: 200, body: () => ({ name: 'Changed' }), fresh: newBeneficiary },
  { route: 'DELETE /v1/beneficiaries/:id', resource: 'beneficiary', kind: 'write', ok: 200, fresh: newBeneficiary },
  { route: 'POST /v1/payouts', resource: 'payout', kind: 'create', ok: 201, body: (me) => ({ beneficiary: owned[me].beneficiary[0], amount: 5, currency: 'EUR', reference: 'iso-create' }) },
  { route: 'GET /v1/payouts', resource: 'payout', kind: 'list', ok: 200 },
  { route: 'GET /v1/payouts/:id', resource: 'payout', kind: 'read', ok: 200 },
  { route: 'POST /v1/payouts/:id/cancel', resource: 'payout', kind: 'write', ok: 200, fresh: newPayout },
  { route: 'POST /v1/test-helpers/payouts/:id/resolve', resource: 'payout', kind: 'write', ok: 200, body: () => ({ outcome: 'paid' }), testOnly: true, fresh: newPayout },
];

const pathOf = (c: Case, id = 'unused') => c.route.split(' ')[1]!.replace(':id', id);
const methodOf = (c: Case) => c.route.split(' ')[0]!;

function expectTyped(res: ApiResponse, status: number, type: string, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body?.error).toMatchObject({ type, code });
}

async function snapshot() {
  const seen: Record<string, unknown> = {};
  for (const p of PRINCIPALS) {
    for (const id of [owned[p].beneficiary[0]!, owned[p].payout[0]!]) {
      const res = await as(p, 'GET', id.startsWith('ben_') ? `/v1/beneficiaries/${id}` : `/v1/payouts/${id}`);
      expect(res.status).toBe(200);
      seen[`${p} ${id}`] = res.body;
    }
  }
  return seen;
}

describe('beneficiaries and payouts: isolation and authentication', () => {
  it('has a row for every route of payouts.routes.ts', () => {
    expect(CASES.map((c) => c.route).sort()).toEqual([...PAYOUTS_AUTHENTICATED_ROUTES].sort());
  });

  it.each(CASES.map((c) => [c.route, c] as const))('%s', async (_name, c) => {
    const someId = owned.aTest[c.resource][0]!;
    expectTyped(await as(undefined, methodOf(c), pathOf(c, someId), c.body?.('aTest'), undefined), 401, 'authentication', 'api_key_missing');
    for (const bad of [`sk_test_${'A'.repeat(40)}`, keys.aTest.replace('sk_test_', 'sk_live_'), `${keys.aTest}x`, 'not-a-key']) {
      expectTyped(await as('aTest', methodOf(c), pathOf(c, someId), c.body?.('aTest'), bad), 401, 'authentication', 'api_key_invalid');
    }
    const before = await snapshot();
    for (const me of PRINCIPALS) {
      const theirs = owned[OTHER_ACCOUNT[me]][c.resource][0]!;
      const otherMode = owned[OTHER_MODE[me]][c.resource][0]!;
      if (c.testOnly && isLive(me)) {
        for (const id of [theirs, otherMode, owned[me][c.resource][0]!]) expectTyped(await as(me, methodOf(c), pathOf(c, id), c.body?.(me)), 403, 'authentication', 'permission_denied');
        continue;
      }
      if (c.kind === 'read' || c.kind === 'write') {
        const foreign = await as(me, methodOf(c), pathOf(c, theirs), c.body?.(me));
        expectTyped(foreign, 404, 'validation', 'resource_missing');
        const never = `${theirs.split('_')[0]}_01jd8x3v0pe7wbz0m4k6f2n9qa`;
        const absent = await as(me, methodOf(c), pathOf(c, never), c.body?.(me));
        expect(String(foreign.body.error.message).split(theirs).join('<id>')).toBe(String(absent.body.error.message).split(never).join('<id>'));
        expectTyped(await as(me, methodOf(c), pathOf(c, otherMode), c.body?.(me)), 404, 'validation', 'resource_missing');
        const mineId = c.fresh ? await c.fresh(me) : owned[me][c.resource][0]!;
        const mine = await as(me, methodOf(c), pathOf(c, mineId), c.body?.(me));
        expect(mine.status, mine.text).toBe(c.ok);
        expect(mine.body.livemode).toBe(isLive(me));
      }
      if (c.kind === 'create') {
        const res = await as(me, methodOf(c), pathOf(c), c.body?.(me));
        expect(res.status, res.text).toBe(201);
        expect(res.body.livemode).toBe(isLive(me));
        owned[me][c.resource].push(res.body.id);
        for (const other of [OTHER_ACCOUNT[me], OTHER_MODE[me]]) {
          expectTyped(await as(other, 'GET', `${pathOf(c)}/${res.body.id}`), 404, 'validation', 'resource_missing');
        }
        // Another account's beneficiary cannot be paid either.
        if (c.resource === 'payout') {
          const foreignBen = await as(me, 'POST', '/v1/payouts', { beneficiary: owned[OTHER_ACCOUNT[me]].beneficiary[0], amount: 5, currency: 'EUR', reference: 'x' });
          expectTyped(foreignBen, 404, 'validation', 'resource_missing');
          expect(foreignBen.body.error.param).toBe('beneficiary');
        }
      }
      if (c.kind === 'list') {
        const page = await as(me, 'GET', `${pathOf(c)}?limit=100`);
        expect(page.status, page.text).toBe(200);
        const mine = new Set(owned[me][c.resource]);
        expect(page.body.data.map((x: { id: string }) => x.id)).toContain(owned[me][c.resource][0]);
        for (const item of page.body.data) {
          expect(item.livemode).toBe(isLive(me));
          expect(mine.has(item.id)).toBe(true);
        }
        const filter = c.resource === 'payout' ? `beneficiary=${owned[OTHER_ACCOUNT[me]].beneficiary[0]}` : `status=active`;
        const filtered = await as(me, 'GET', `${pathOf(c)}?limit=100&${filter}`);
        for (const item of filtered.body.data) expect(mine.has(item.id)).toBe(true);
      }
    }
    expect(await snapshot()).toEqual(before);
  });
});
