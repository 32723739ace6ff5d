// Tenancy and authentication over every authenticated route the app registers. One table names each
// route and how to call it; a guard test reads the routes from the running app so that a route
// added without a row here fails the suite. For every route: no key → 401 api_key_missing; a bad
// key → 401 api_key_invalid; another account's object → 404 resource_missing revealing nothing;
// this account's object from the other mode → 404 resource_missing; nothing a refused request
// aimed at has changed; lists hold only the caller's own account and mode.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  client,
  createTenant,
  createTestDatabase,
  orderBody,
  startTestService,
  type ApiResponse,
  type TestDatabase,
  type TestService,
} from './helpers.js';
import { PAYMENTS_AUTHENTICATED_ROUTES, PAYMENTS_PUBLIC_ROUTES, SHARED_AUTHENTICATED_ROUTES } from './payments.routes.js';
import { MANDATES_AUTHENTICATED_ROUTES } from './mandates.routes.js';
import { PAYOUTS_AUTHENTICATED_ROUTES } from './payouts.routes.js';

type Resource = 'payment_order' | 'event' | 'webhook_endpoint' | 'connector_account';
type Principal = 'aTest' | 'aLive' | 'bTest' | 'bLive';
const PRINCIPALS: Principal[] = ['aTest', 'aLive', 'bTest', 'bLive'];
const OTHER_ACCOUNT: Record<Principal, Principal> = { aTest: 'bTest', aLive: 'bLive', bTest: 'aTest', bLive: 'aLive' };
const OTHER_MODE: Record<Principal, Principal> = { aTest: 'aLive', aLive: 'aTest', bTest: 'bLive', bLive: 'bTest' };
const isLive = (p: Principal) => p.endsWith('Live');

interface RouteCase {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** As fastify registers it, with `:id` for the object id. */
  url: string;
  /**
   * create: makes a new `resource`; list: lists `resource`; read: reads the object `:id` (or a list
   * under it); write: changes or acts on the object `:id`; reference: the same data for every key.
   */
  kind: 'create' | 'list' | 'read' | 'write' | 'reference';
  resource: Resource;
  /** The status the caller's own object gets. */
  ok?: number;
  /** A valid body for the route and caller, so that only authentication or tenancy can fail. */
  body?: (me: Principal) => unknown;
  idempotency?: 'required' | 'optional';
  /** Test helpers: a live key is refused with 403 permission_denied, whatever the id. */
  testOnly?: boolean;
}

const ROUTES: RouteCase[] = [
  // payment orders
  { method: 'POST', url: '/v1/payment-orders', kind: 'create', resource: 'payment_order', body: () => orderBody(), idempotency: 'required' },
  { method: 'GET', url: '/v1/payment-orders', kind: 'list', resource: 'payment_order' },
  { method: 'GET', url: '/v1/payment-orders/:id', kind: 'read', resource: 'payment_order', ok: 200 },
  { method: 'POST', url: '/v1/payment-orders/:id/cancel', kind: 'write', resource: 'payment_order', ok: 200, idempotency: 'optional' },
  // events
  { method: 'GET', url: '/v1/events', kind: 'list', resource: 'event' },
  { method: 'GET', url: '/v1/events/:id', kind: 'read', resource: 'event', ok: 200 },
  { method: 'GET', url: '/v1/events/:id/deliveries', kind: 'read', resource: 'event', ok: 200 },
  { method: 'POST', url: '/v1/events/:id/redeliver', kind: 'write', resource: 'event', ok: 202, idempotency: 'optional' },
  { method: 'GET', url: '/v1/event-types', kind: 'reference', resource: 'event' },
  // webhook endpoints
  { method: 'POST', url: '/v1/webhook-endpoints', kind: 'create', resource: 'webhook_endpoint', body: (me) => endpointBody(me) },
  { method: 'GET', url: '/v1/webhook-endpoints', kind: 'list', resource: 'webhook_endpoint' },
  { method: 'GET', url: '/v1/webhook-endpoints/:id', kind: 'read', resource: 'webhook_endpoint', ok: 200 },
  { method: 'GET', url: '/v1/webhook-endpoints/:id/deliveries', kind: 'read', resource: 'webhook_endpoint', ok: 200 },
  { method: 'PATCH', url: '/v1/webhook-endpoints/:id', kind: 'write', resource: 'webhook_endpoint', ok: 200, body: () => ({ description: 'changed' }) },
  { method: 'DELETE', url: '/v1/webhook-endpoints/:id', kind: 'write', resource: 'webhook_endpoint', ok: 200 },
  { method: 'POST', url: '/v1/webhook-endpoints/:id/rotate-secret', kind: 'write', resource: 'webhook_endpoint', ok: 200, idempotency: 'optional' },
  // connector accounts
  { method: 'POST', url: '/v1/connector-accounts', kind: 'create', resource: 'connector_account', body: (me) => connectorAccountBody(me) },
  { method: 'GET', url: '/v1/connector-accounts', kind: 'list', resource: 'connector_account' },
  { method: 'GET', url: '/v1/connector-accounts/:id', kind: 'read', resource: 'connector_account', ok: 200 },
  { method: 'PATCH', url: '/v1/connector-accounts/:id', kind: 'write', resource: 'connector_account', ok: 200, body: () => ({ metadata: { changed: 'yes' } }) },
  { method: 'DELETE', url: '/v1/connector-accounts/:id', kind: 'write', resource: 'connector_account', ok: 200 },
  {
    method: 'POST',
    url: '/v1/test-helpers/webhook-endpoints/:id/send',
    kind: 'write',
    resource: 'webhook_endpoint',
    ok: 200,
    body: () => ({ scenario: 'deliver' }),
    testOnly: true,
  },
];
/** Public routes under /v1 that need no key. */
const PUBLIC_V1 = new Set<string>(['GET /v1/openapi.json', ...PAYMENTS_PUBLIC_ROUTES]);

let testDb: TestDatabase;
let service: TestService;
/** Receives the test-mode webhook sends; answers 204 to everything. */
let receiver: http.Server;
let receiverUrl: string;
const keys = {} as Record<Principal, string>;
/** The objects each principal owns, by resource; index 0 is never changed by any test. */
const owned = {} as Record<Principal, Record<Resource, string[]>>;

function endpointBody(me: Principal) {
  // Live mode needs a public https destination (never called: no worker runs here); test mode
  // may use the local receiver.
  return { url: isLive(me) ? 'https://example.com/hooks' : `${receiverUrl}/hooks/${me}`, enabled_events: ['*'], metadata: { owner: me } };
}

function connectorAccountBody(me: Principal) {
  const name = `${me}-${crypto.randomUUID().slice(0, 8)}`;
  // The simulators serve test mode only; a live Stripe account needs a live key.
  return isLive(me) ? { connector: 'stripe', name, credentials: { secret_key: `sk_live_${'k'.repeat(32)}` } } : { connector: 'simulator_a', name, metadata: { owner: me } };
}

const RESOURCES: Record<Resource, { path: (id: string) => string; create: (me: Principal) => Promise<string>; snapshot: (id: string) => string[] }> = {
  payment_order: {
    path: (id) => `/v1/payment-orders/${id}`,
    async create(me) {
      const res = await client(service.url, keys[me]).post('/v1/payment-orders', orderBody({ metadata: { owner: me } }));
      expect(res.status, res.text).toBe(201);
      owned[me].payment_order.push(res.body.id);
      return res.body.id;
    },
    snapshot: (id) => [`/v1/payment-orders/${id}`],
  },
  event: {
    path: (id) => `/v1/events/${id}`,
    async create(me) {
      const orderId = await RESOURCES.payment_order.create(me);
      const res = await client(service.url, keys[me]).get('/v1/events?type=payment_order.created&limit=1');
      expect(res.body.data[0].data.object.id).toBe(orderId);
      owned[me].event.push(res.body.data[0].id);
      return res.body.data[0].id;
    },
    snapshot: (id) => [`/v1/events/${id}`, `/v1/events/${id}/deliveries`],
  },
  webhook_endpoint: {
    path: (id) => `/v1/webhook-endpoints/${id}`,
    async create(me) {
      const res = await client(service.url, keys[me]).post('/v1/webhook-endpoints', endpointBody(me), { idempotencyKey: undefined });
      expect(res.status, res.text).toBe(201);
      owned[me].webhook_endpoint.push(res.body.id);
      return res.body.id;
    },
    snapshot: (id) => [`/v1/webhook-endpoints/${id}`, `/v1/webhook-endpoints/${id}/deliveries`],
  },
  connector_account: {
    path: (id) => `/v1/connector-accounts/${id}`,
    async create(me) {
      const res = await client(service.url, keys[me]).post('/v1/connector-accounts', connectorAccountBody(me), { idempotencyKey: undefined });
      expect(res.status, res.text).toBe(201);
      owned[me].connector_account.push(res.body.id);
      return res.body.id;
    },
    snapshot: (id) => [`/v1/connector-accounts/${id}`],
  },
};

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  testDb = await createTestDatabase();
  service = await startTestService(testDb);
  const a = await createTenant(testDb.database, 'Tenant A');
  const b = await createTenant(testDb.database, 'Tenant B');
  Object.assign(keys, { aTest: a.testKey, aLive: a.liveKey, bTest: b.testKey, bLive: b.liveKey });
  for (const p of PRINCIPALS) owned[p] = { payment_order: [], event: [], webhook_endpoint: [], connector_account: [] };
  for (const p of PRINCIPALS) {
    for (let i = 0; i < 2; i++) {
      await RESOURCES.event.create(p); // an order and its event
      await RESOURCES.webhook_endpoint.create(p);
      await RESOURCES.connector_account.create(p);
    }
  }
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** "METHOD /url" for every route the running app registers (HEAD aside), read from its route tree. */
function registeredRoutes(): Set<string> {
  const tree = service.app!.printRoutes({ commonPrefix: false });
  const routes = new Set<string>();
  const segments: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│├└─\s]*)(\S.*?)(?: \(([^)]*)\))?\s*$/u.exec(line);
    if (!match) continue;
    const depth = Math.max(0, match[1]!.length / 4 - 1);
    segments.length = depth;
    segments.push(match[2]!);
    const url = segments.join('');
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim()).filter(Boolean)) {
      if (method !== 'HEAD') routes.add(`${method} ${url}`);
    }
  }
  return routes;
}

function send(route: RouteCase, me: Principal, key: string | undefined, id?: string, headers?: Record<string, string>): Promise<ApiResponse> {
  return call(service.url, route.method, route.url.replace(':id', id ?? 'unused'), {
    key,
    headers,
    body: route.body?.(me),
    idempotencyKey: route.idempotency === 'required' ? crypto.randomUUID() : undefined,
  });
}

function expectTyped(res: ApiResponse, status: number, type: string, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body?.error).toMatchObject({ type, code, request_id: res.headers.get('request-id') });
}

/** A message with the object id taken out, so the id's own characters cannot match a word. */
const messageWithout = (res: ApiResponse, id: string) => String(res.body.error.message).split(id).join('<id>');

/** What the owners see of everyone's untouchable objects (index 0), to prove refusals changed nothing. */
async function snapshotAll(resource: Resource) {
  const seen: Record<string, unknown> = {};
  for (const p of PRINCIPALS) {
    for (const path of RESOURCES[resource].snapshot(owned[p][resource][0]!)) {
      const res = await call(service.url, 'GET', path, { key: keys[p] });
      expect(res.status, res.text).toBe(200);
      seen[`${p} ${path}`] = res.body;
    }
  }
  return seen;
}

/** Every id a principal owns, whatever the resource. */
const allOwned = (p: Principal) => new Set(Object.values(owned[p]).flat());

describe('isolation and authentication over every route', () => {
  it('the table covers every authenticated /v1 route the app registers, and only those', () => {
    const registered = [...registeredRoutes()].filter((r) => r.split(' ')[1]!.startsWith('/v1/') && !PUBLIC_V1.has(r));
    // Payments, refunds, routing and balance have their own table: payments.security.test.ts;
    // mandates theirs: mandates.security.test.ts; beneficiaries and payouts: payouts.security.test.ts.
    const table = [
      ...ROUTES.map((r) => `${r.method} ${r.url}`),
      ...PAYMENTS_AUTHENTICATED_ROUTES,
      ...MANDATES_AUTHENTICATED_ROUTES,
      ...PAYOUTS_AUTHENTICATED_ROUTES,
      ...SHARED_AUTHENTICATED_ROUTES,
    ];
    expect(registered.length).toBeGreaterThan(0);
    expect([...new Set(table)].sort()).toEqual([...registered].sort());
    for (const route of ROUTES) expect(service.app!.hasRoute({ method: route.method, url: route.url })).toBe(true);
  });

  it.each(ROUTES.map((r) => [`${r.method} ${r.url}`, r] as const))('%s', async (_name, route) => {
    const someId = owned.aTest[route.resource][0];

    // Authentication comes first, whatever the route and the rest of the request.
    expectTyped(await send(route, 'aTest', undefined, someId), 401, 'authentication', 'api_key_missing');
    expectTyped(await send(route, 'aTest', undefined, someId, { authorization: `Basic ${btoa('user:pass')}` }), 401, 'authentication', 'api_key_missing');
    for (const badKey of [
      `sk_test_${'A'.repeat(40)}`, // well formed, never issued
      `sk_live_${'b'.repeat(40)}`,
      keys.aTest.replace('sk_test_', 'sk_live_'), // a test key's secret under the live prefix
      `${keys.aTest}x`,
      keys.aTest.slice(0, -1),
      'sk_test_short',
      'not-a-key',
    ]) {
      expectTyped(await send(route, 'aTest', badKey, someId), 401, 'authentication', 'api_key_invalid');
    }

    const before = await snapshotAll(route.resource);

    for (const me of PRINCIPALS) {
      const key = keys[me];
      const theirs = owned[OTHER_ACCOUNT[me]][route.resource][0]!;
      const otherMode = owned[OTHER_MODE[me]][route.resource][0]!;

      if (route.testOnly && isLive(me)) {
        // A live key may not use test helpers at all: the same refusal whoever owns the id.
        for (const id of [theirs, otherMode, owned[me][route.resource][0]!]) {
          expectTyped(await send(route, me, key, id), 403, 'authentication', 'permission_denied');
        }
        continue;
      }

      if (route.kind === 'read' || route.kind === 'write') {
        // Another account's object: indistinguishable from one that never existed.
        const foreign = await send(route, me, key, theirs);
        expectTyped(foreign, 404, 'validation', 'resource_missing');
        const foreignMessage = messageWithout(foreign, theirs);
        // The object's own name aside ("No such connector account"), nothing hints at an owner.
        expect(foreignMessage.replace('connector account', 'object')).not.toMatch(/\b(live|test)\b|mode|exist|account|tenant|permission|forbidden/i);
        const neverId = `${theirs.split('_')[0]}_01jd8x3v0pe7wbz0m4k6f2n9qa`;
        const absent = await send(route, me, key, neverId);
        expectTyped(absent, 404, 'validation', 'resource_missing');
        expect(foreignMessage).toBe(messageWithout(absent, neverId));
        expect(foreign.body.error.param).toBe(absent.body.error.param);

        // This account's object in the other mode: missing too (the message may say where it is).
        expectTyped(await send(route, me, key, otherMode), 404, 'validation', 'resource_missing');

        // The caller's own object works, so the 404s above are about tenancy. Writes get a fresh one.
        const mineId = route.kind === 'write' ? await RESOURCES[route.resource].create(me) : owned[me][route.resource][0]!;
        const mine = await send(route, me, key, mineId);
        expect(mine.status, mine.text).toBe(route.ok);
        if (mine.body?.object === 'list') {
          for (const item of mine.body.data) expect(item.livemode).toBe(isLive(me));
        } else if (mine.body?.livemode !== undefined) {
          expect(mine.body.livemode).toBe(isLive(me));
        }
      }

      if (route.kind === 'create') {
        const res = await send(route, me, key);
        expect(res.status, res.text).toBe(201);
        expect(res.body.livemode).toBe(isLive(me));
        owned[me][route.resource].push(res.body.id);
        // Nobody else can read it.
        for (const other of [OTHER_ACCOUNT[me], OTHER_MODE[me]]) {
          const peek = await call(service.url, 'GET', RESOURCES[route.resource].path(res.body.id), { key: keys[other] });
          expectTyped(peek, 404, 'validation', 'resource_missing');
        }
      }

      if (route.kind === 'reference') {
        const res = await send(route, me, key);
        expect(res.status, res.text).toBe(200);
        expect(res.body.data.length).toBeGreaterThan(0);
      }

      if (route.kind === 'list') {
        const page = await call(service.url, 'GET', `${route.url}?limit=100`, { key });
        expect(page.status, page.text).toBe(200);
        expect(page.body.has_more).toBe(false);
        const listed: any[] = page.body.data;
        const mineIds = new Set(owned[me][route.resource]);
        const foreignIds = new Set(PRINCIPALS.filter((p) => p !== me).flatMap((p) => [...allOwned(p)]));
        // The caller's untouched objects are there...
        expect(listed.map((item) => item.id)).toContain(owned[me][route.resource][0]);
        // ...and nothing else's.
        for (const item of listed) {
          expect(item.livemode).toBe(isLive(me));
          expect(foreignIds.has(item.id)).toBe(false);
          if (route.resource === 'event') expect(allOwned(me).has(item.data.object.id)).toBe(true);
          else expect(mineIds.has(item.id)).toBe(true);
        }
        // Filters and cursors never widen the scope.
        const filtered = await call(service.url, 'GET', `${route.url}?limit=100&created[gte]=2000-01-01T00:00:00Z`.replace(/\[/g, '%5B').replace(/\]/g, '%5D'), { key });
        expect(filtered.body.data.map((item: any) => item.id)).toEqual(listed.map((item) => item.id));
        const theirCursor = owned[OTHER_ACCOUNT[me]][route.resource][0]!;
        const paged = await call(service.url, 'GET', `${route.url}?limit=100&ending_before=${theirCursor}`, { key });
        for (const item of paged.body.data ?? []) {
          expect(item.livemode).toBe(isLive(me));
          expect(foreignIds.has(item.id)).toBe(false);
        }
      }
    }

    // Nothing a foreign, cross-mode or refused request aimed at has changed.
    expect(await snapshotAll(route.resource)).toEqual(before);
  });
});
