// Tenancy and authentication over every route of mandates (the routes listed in mandates.routes.ts;
// a guard test fails when one is added without a row here). Four principals: two accounts, each in
// test and live mode; live mode uses a lab connector that accepts every mandate and debit (no real
// processor exists here). For every route: no key or a bad key is 401; another account's mandate
// answers exactly like one that never existed; this account's mandate in the other mode is missing
// too; refused requests change nothing; lists show only the caller's own.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connector } from '../src/connectors/types.js';
import { call, createTenant, createTestDatabase, type ApiResponse, type TestDatabase } from './helpers.js';
import { startPaymentsService, type PaymentsTestService } from './payments.helpers.js';
import { MANDATES_AUTHENTICATED_ROUTES } from './mandates.routes.js';
import { ENDINGS, mandateBody } from './mandates.helpers.js';

type Principal = 'aTest' | 'aLive' | 'bTest' | 'bLive';
const PRINCIPALS: Principal[] = ['aTest', 'aLive', 'bTest', 'bLive'];
const OTHER_ACCOUNT: Record<Principal, Principal> = { aTest: 'bTest', aLive: 'bLive', bTest: 'aTest', bLive: 'aLive' };
const OTHER_MODE: Record<Principal, Principal> = { aTest: 'aLive', aLive: 'aTest', bTest: 'bLive', bLive: 'bTest' };
const isLive = (p: Principal) => p.endsWith('Live');

/** Accepts every live mandate at once; pending for the 0003 ending, like the simulator. */
const lab: Connector = {
  name: 'lab_live',
  modes: ['live'],
  paymentMethodTypes: ['card', 'mandate'],
  charge: async (r) => ({ kind: 'pending', connectorReference: `lab_${r.reference}` }),
  chargeStatus: async (r) => ({ kind: 'pending', connectorReference: `lab_${r.reference}` }),
  refund: async (r) => ({ kind: 'succeeded', connectorReference: `lab_${r.reference}` }),
  refundStatus: async (r) => ({ kind: 'succeeded', connectorReference: `lab_${r.reference}` }),
  setupMandate: async (r) => ({ kind: r.account.secret.endsWith(ENDINGS.pending) ? 'pending' : 'active', connectorReference: `lab_${r.reference}` }),
  mandateStatus: async (r) => ({ kind: 'active', connectorReference: `lab_${r.reference}` }),
  cancelMandate: async (r) => ({ kind: 'revoked', by: 'merchant', connectorReference: `lab_${r.reference}` }),
  parseWebhook: () => {
    throw new Error('no webhooks');
  },
};

let testDb: TestDatabase;
let service: PaymentsTestService;
const keys = {} as Record<Principal, string>;
/** Per principal: an active mandate never changed, a pending one, and every id created. */
const owned = {} as Record<Principal, { active: string; pending: string; all: string[] }>;

async function as(me: Principal, method: string, path: string, body?: unknown, idempotencyKey: string | undefined = crypto.randomUUID()) {
  return call(service.url, method, path, { key: keys[me], body, idempotencyKey: method === 'POST' ? idempotencyKey : undefined });
}

async function newMandate(me: Principal, ending: string = ENDINGS.success): Promise<string> {
  const res = await as(me, 'POST', '/v1/mandates', mandateBody('sepa_core', ending, { metadata: { owner: me } }));
  expect(res.status, res.text).toBe(201);
  owned[me].all.push(res.body.id);
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
  service = await startPaymentsService(testDb, { runtime: { connectors: [...simulators, lab] } });
  const a = await createTenant(testDb.database, 'Tenant A');
  const b = await createTenant(testDb.database, 'Tenant B');
  Object.assign(keys, { aTest: a.testKey, aLive: a.liveKey, bTest: b.testKey, bLive: b.liveKey });
  for (const me of PRINCIPALS) {
    owned[me] = { active: '', pending: '', all: [] };
    owned[me].active = await newMandate(me);
    owned[me].pending = await newMandate(me, ENDINGS.pending);
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
  route: (typeof MANDATES_AUTHENTICATED_ROUTES)[number];
  request: (me: Principal, id?: string) => Promise<ApiResponse>;
  /** Id routes: which mandate of a principal the route acts on (a fresh one for changes). */
  object?: (p: Principal) => string | Promise<string>;
  ok: number;
  testOnly?: boolean;
}

const CASES: Case[] = [
  { route: 'POST /v1/mandates', ok: 201, request: (me) => as(me, 'POST', '/v1/mandates', mandateBody()) },
  { route: 'GET /v1/mandates', ok: 200, request: (me) => as(me, 'GET', '/v1/mandates?limit=100') },
  { route: 'GET /v1/mandates/:id', ok: 200, request: (me, id) => as(me, 'GET', `/v1/mandates/${id}`), object: (p) => owned[p].active },
  { route: 'POST /v1/mandates/:id/revoke', ok: 200, request: (me, id) => as(me, 'POST', `/v1/mandates/${id}/revoke`), object: (p) => owned[p].active },
  {
    route: 'POST /v1/test-helpers/mandates/:id/resolve',
    ok: 200,
    testOnly: true,
    request: (me, id) => as(me, 'POST', `/v1/test-helpers/mandates/${id}/resolve`, { outcome: 'active' }),
    object: (p) => owned[p].pending,
  },
];

/** What every principal sees of its own untouchable mandates. */
async function snapshot() {
  const seen: Record<string, unknown> = {};
  for (const p of PRINCIPALS) {
    for (const id of [owned[p].active, owned[p].pending]) seen[`${p} ${id}`] = (await as(p, 'GET', `/v1/mandates/${id}`)).body;
  }
  return seen;
}

describe('mandates: isolation and authentication', () => {
  it('the table covers every route of mandates.routes.ts, and these are all registered', () => {
    expect(CASES.map((c) => c.route).sort()).toEqual([...MANDATES_AUTHENTICATED_ROUTES].sort());
    for (const route of MANDATES_AUTHENTICATED_ROUTES) {
      const [method, url] = route.split(' ') as [string, string];
      expect(service.app!.hasRoute({ method: method as 'GET', url }), route).toBe(true);
    }
  });

  it.each(CASES.map((c) => [c.route, c] as const))('%s', async (route, c) => {
    const [method, template] = route.split(' ') as [string, string];
    const path = template.replace(':id', owned.aTest.active);
    const body = method === 'GET' ? undefined : {};
    expectTyped(await call(service.url, method, path, { body, idempotencyKey: 'k' }), 401, 'authentication', 'api_key_missing');
    for (const bad of [`sk_test_${'A'.repeat(40)}`, keys.aTest.replace('sk_test_', 'sk_live_'), `${keys.aTest}x`, 'not-a-key']) {
      expectTyped(await call(service.url, method, path, { key: bad, body, idempotencyKey: 'k' }), 401, 'authentication', 'api_key_invalid');
    }
    const before = await snapshot();

    for (const me of PRINCIPALS) {
      if (c.testOnly && isLive(me)) {
        for (const id of [owned[me].pending, owned[OTHER_ACCOUNT[me]].pending, owned[OTHER_MODE[me]].pending]) {
          expectTyped(await c.request(me, id), 403, 'authentication', 'permission_denied');
        }
        continue;
      }
      if (c.object) {
        const theirs = await c.object(OTHER_ACCOUNT[me]);
        const foreign = await c.request(me, theirs);
        expectTyped(foreign, 404, 'validation', 'resource_missing');
        const foreignMessage = String(foreign.body.error.message).split(theirs).join('<id>');
        expect(foreignMessage).not.toMatch(/\b(live|test)\b|mode|exist|account|tenant|permission|forbidden/i);
        const never = 'mdt_01jd8x3v0pe7wbz0m4k6f2n9qa';
        const absent = await c.request(me, never);
        expectTyped(absent, 404, 'validation', 'resource_missing');
        expect(foreignMessage).toBe(String(absent.body.error.message).split(never).join('<id>'));
        expect(foreign.body.error.param).toBe(absent.body.error.param);
        expectTyped(await c.request(me, await c.object(OTHER_MODE[me])), 404, 'validation', 'resource_missing');
      }
      // The caller's own (fresh for changes) works, so the 404s above are about tenancy.
      const mineId = c.object ? (method === 'POST' ? await newMandate(me, c.testOnly ? ENDINGS.pending : ENDINGS.success) : await c.object(me)) : undefined;
      const mine = await c.request(me, mineId);
      expect(mine.status, `${me}: ${mine.text}`).toBe(c.ok);
      if (mine.body.object === 'mandate') {
        expect(mine.body.livemode).toBe(isLive(me));
        if (!owned[me].all.includes(mine.body.id)) owned[me].all.push(mine.body.id);
        for (const other of [OTHER_ACCOUNT[me], OTHER_MODE[me]]) {
          expectTyped(await as(other, 'GET', `/v1/mandates/${mine.body.id}`), 404, 'validation', 'resource_missing');
        }
      }
      if (mine.body.object === 'list') {
        expect(mine.body.data.length).toBeGreaterThan(0);
        for (const item of mine.body.data) {
          expect(item.livemode).toBe(isLive(me));
          expect(owned[me].all, item.id).toContain(item.id);
        }
        // Filters and cursors never widen the scope.
        const cursor = await as(me, 'GET', `/v1/mandates?limit=100&ending_before=${owned[OTHER_ACCOUNT[me]].active}`);
        for (const item of cursor.body.data) expect(owned[me].all).toContain(item.id);
        const byEmail = await as(me, 'GET', '/v1/mandates?limit=100&customer_email=payer%40example.com');
        for (const item of byEmail.body.data) expect(owned[me].all).toContain(item.id);
      }
    }
    // Nothing a foreign, cross-mode or refused request aimed at has changed.
    expect(await snapshot()).toEqual(before);
  });
});
