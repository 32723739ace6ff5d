// Tenancy and authentication over every authenticated route the app registers, from one table
// (test/support/isolation.routes.ts) and four principals: two accounts, each in test and live mode. A guard
// reads the routes from the running app, so a route added without a row fails the suite. For every
// route: no key → 401 api_key_missing; a bad key → 401 api_key_invalid; a test helper with a live
// key → 403 permission_denied; another account's object → 404 resource_missing exactly like one
// that never existed; this account's object in the other mode → 404 naming the mode; a body naming
// another account's or mode's object → 404 naming the field; what is created is seen by nobody
// else; lists (however filtered) hold only the caller's own; nothing a refused request aimed at
// has changed. Then balances and routing, each its own principal's.
import { beforeAll, describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { call, type ApiResponse } from '../support/helpers.js';
import { amountIn, inProcessSimulators, labLive } from '../support/payments.js';
import { isLive, OTHER_ACCOUNT, OTHER_MODE, PATHS, PRINCIPALS, World, type Principal } from '../support/isolation.routes.js';
import { ROUTES, type Route } from '../support/isolation.route-table.js';

const sims = inProcessSimulators();
const h = useService({ submitOnCreate: false, runtime: { connectors: [sims.a, sims.b, labLive] } });
let receiverUrl = '';
const w = new World(h, () => receiverUrl);
beforeAll(async () => {
  h.track(sims);
  receiverUrl = (await h.receiver()).url;
  await w.build([await h.createTenant('Tenant A'), await h.createTenant('Tenant B')]);
}, 120_000);

/** Public routes under /v1: they need no key. */
const PUBLIC_V1 = new Set([
  'GET /v1/openapi.json',
  'POST /v1/connectors/:name/webhooks',
  'POST /v1/connector-accounts/:id/webhooks',
  // Customer actions: a customer's browser, opened by the payment's (or the challenge's) random secret.
  'GET /v1/payments/:id/action/:token',
  'GET /v1/payments/:id/return/:token',
  'POST /v1/payments/:id/return/:token',
  'GET /v1/payment-methods/:id/return/:token',
  'POST /v1/payment-methods/:id/return/:token',
  'GET /v1/connectors/:name/challenges/:reference/:challenge',
  'POST /v1/connectors/:name/challenges/:reference/:challenge',
]);
const NEVER = '01jd8x3v0pe7wbz0m4k6f2n9qa';

/** "METHOD /url" for every route the running app registers (HEAD aside), read from its route tree. */
function registeredRoutes(): Set<string> {
  const tree = h.service.app!.printRoutes({ commonPrefix: false });
  const routes = new Set<string>();
  const segments: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│├└─\s]*)(\S.*?)(?: \(([^)]*)\))?\s*$/u.exec(line);
    if (!match) continue;
    segments.length = Math.max(0, match[1]!.length / 4 - 1);
    segments.push(match[2]!);
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim()).filter(Boolean)) {
      if (method !== 'HEAD') routes.add(`${method} ${segments.join('')}`);
    }
  }
  return routes;
}

function expectTyped(res: ApiResponse, status: number, type: string, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body?.error).toMatchObject({ type, code, request_id: res.headers.get('request-id') });
}

/** A message with the object id taken out, so the id's own characters cannot match a word. */
// The object's own name ("connector account") is taken out too: only what it says beyond that counts.
const messageWithout = (res: ApiResponse, id: string) => String(res.body.error.message).split(id).join('<id>').replace(/connector account/g, '<object>');
const first = (p: Principal, r: Route) => w.owned[p][r.resource!][0]!;

async function expectAuthenticationFirst(method: string, path: string, body: unknown) {
  const aTest = w.keys.aTest;
  const send = (headers: Record<string, string>) => call(h.url, method, path, { headers, body, idempotencyKey: method === 'POST' ? 'k' : undefined });
  expectTyped(await send({}), 401, 'authentication', 'api_key_missing');
  expectTyped(await send({ authorization: `Basic ${btoa('user:pass')}` }), 401, 'authentication', 'api_key_missing');
  for (const bad of [`sk_test_${'A'.repeat(40)}`, `sk_live_${'b'.repeat(40)}`, aTest.replace('sk_test_', 'sk_live_'), `${aTest}x`, aTest.slice(0, -1), 'sk_test_short', 'not-a-key']) {
    expectTyped(await send({ authorization: `Bearer ${bad}` }), 401, 'authentication', 'api_key_invalid');
  }
}

/** Another account's object is missing exactly like one that never was; this account's from the other mode, missing too. */
async function expectForeignMissing(me: Principal, theirs: string, otherMode: string, send: (id: string) => Promise<ApiResponse>) {
  const foreign = await send(theirs);
  expectTyped(foreign, 404, 'validation', 'resource_missing');
  const never = `${theirs.split('_')[0]}_${NEVER}`;
  const absent = await send(never);
  expectTyped(absent, 404, 'validation', 'resource_missing');
  expect(messageWithout(foreign, theirs)).toBe(messageWithout(absent, never));
  expect(messageWithout(foreign, theirs)).not.toMatch(/\b(live|test)\b|mode|exist|account|tenant|permission|forbidden/i);
  expect(foreign.body.error.param).toBe(absent.body.error.param);
  const cross = await send(otherMode);
  expectTyped(cross, 404, 'validation', 'resource_missing');
  expect(cross.body.error.message, `${me}: the other mode's object`).toContain(`${isLive(me) ? 'test' : 'live'} mode`);
}

async function expectOwnListOnly(me: Principal, r: Route, url: string) {
  const items = await w.listAll(me, url);
  const mine = w.allOwned(me);
  const foreign = new Set(PRINCIPALS.filter((p) => p !== me).flatMap((p) => [...w.allOwned(p)]));
  for (const item of items) {
    expect(item.livemode).toBe(isLive(me));
    const id = r.resource === 'event' ? item.data.object.id : item.object === 'balance_transaction' ? item.source : item.id;
    if (id === null || item.type === 'webhook_endpoint.test') continue;
    expect(foreign.has(id), `${me} lists ${id}`).toBe(false);
    expect(mine.has(id), `${me} lists ${id}`).toBe(true);
  }
  return items;
}

describe('isolation and authentication over every route', () => {
  it('the table covers every authenticated /v1 route the app registers, and only those', () => {
    const registered = [...registeredRoutes()].filter((r) => r.split(' ')[1]!.startsWith('/v1/') && !PUBLIC_V1.has(r));
    expect(registered.length).toBeGreaterThan(40);
    expect(ROUTES.map((r) => r.route).sort()).toEqual(registered.sort());
    for (const r of ROUTES) {
      const [method, url] = r.route.split(' ') as ['GET', string];
      expect(h.service.app!.hasRoute({ method, url }), r.route).toBe(true);
    }
  });

  it.each(ROUTES.map((r) => [r.route, r] as const))('%s', async (_name, r) => {
    const [method, template] = r.route.split(' ') as [string, string];
    const path = (id = 'unused') => template.replace(':id', id) + (r.query ?? '');
    const send = async (me: Principal, id?: string, body?: unknown) => w.as(me, method, path(id), body ?? (await r.body?.(w, me)));
    await expectAuthenticationFirst(method, path(r.resource && first('aTest', r)), await r.body?.(w, 'aTest'));
    const before = await w.snapshot();

    for (const me of PRINCIPALS) {
      if (r.testOnly && isLive(me)) {
        // A live key may not use test helpers at all: the same refusal whoever owns the id.
        for (const p of r.resource ? [me, OTHER_ACCOUNT[me], OTHER_MODE[me]] : [me]) {
          expectTyped(await send(me, r.resource && first(p, r)), 403, 'authentication', 'permission_denied');
        }
        continue;
      }
      let mine: ApiResponse | undefined;
      if (r.kind === 'read' || r.kind === 'write') {
        await expectForeignMissing(me, first(OTHER_ACCOUNT[me], r), first(OTHER_MODE[me], r), (id) => send(me, id));
        // The caller's own works, so the 404s above are about tenancy. Writes act on a fresh one.
        mine = await send(me, r.kind === 'write' ? await w.make[r.resource!](me) : first(me, r));
      }
      for (const ref of r.refs ?? []) {
        const id = r.kind === 'write' ? await w.make[r.resource!](me) : undefined;
        for (const other of [OTHER_ACCOUNT[me], OTHER_MODE[me]]) {
          const res = await send(me, id, await ref.body(w, me, w.owned[other][ref.resource][0]!));
          expectTyped(res, 404, 'validation', 'resource_missing');
          expect(res.body.error.param).toBe(ref.param);
        }
      }
      if (r.kind === 'create' || r.kind === 'account') mine = await send(me);
      if (mine) {
        expect(mine.status, `${me}: ${mine.text}`).toBe(isLive(me) ? (r.okLive ?? r.ok) : r.ok);
        // Reference data (event types, the catalogue) has no mode.
        if (mine.body?.object === 'list') for (const item of mine.body.data) if ('livemode' in item) expect(item.livemode).toBe(isLive(me));
        else if (mine.body?.livemode !== undefined) expect(mine.body.livemode).toBe(isLive(me));
      }
      if (r.kind === 'create' && mine!.status === r.ok) {
        w.owned[me][r.resource!].push(mine!.body.id);
        // Nobody else can read it.
        for (const other of [OTHER_ACCOUNT[me], OTHER_MODE[me]]) {
          expectTyped(await w.as(other, 'GET', PATHS[r.resource!](mine!.body.id)[0]!), 404, 'validation', 'resource_missing');
        }
      }
      if (r.kind === 'list') {
        const listed = await expectOwnListOnly(me, r, template);
        if (r.resource) expect(listed.map((item) => item.id)).toContain(first(me, r));
        else expect(listed.length).toBeGreaterThan(0);
        // Filters and cursors never widen the scope.
        const them = OTHER_ACCOUNT[me];
        const filtered = await expectOwnListOnly(me, r, `${template}?created%5Bgte%5D=2000-01-01T00:00:00Z`);
        expect(filtered.map((item) => item.id)).toEqual(listed.map((item) => item.id));
        if (r.resource) await expectOwnListOnly(me, r, `${template}?ending_before=${first(them, r)}`);
        if (r.filter) await expectOwnListOnly(me, r, `${template}?${r.filter(w, them)}`);
      }
    }
    // Nothing a foreign, cross-mode or refused request aimed at has changed.
    expect(await w.snapshot()).toEqual(before);
  });

  it('each balance is its own principal’s, exactly', async () => {
    for (const me of PRINCIPALS) {
      const sum = (items: any[], pick: (x: any) => boolean) => items.filter((x) => x.currency === 'EUR' && pick(x)).reduce((s, x) => s + x.amount, 0);
      const [payments, refunds, payouts, funding] = await Promise.all([
        w.listAll(me, '/v1/payments'),
        w.listAll(me, '/v1/refunds'),
        w.listAll(me, '/v1/payouts'),
        w.listAll(me, '/v1/balance-transactions?type=test_funding'),
      ]);
      const balance = (await w.as(me, 'GET', '/v1/balance')).body;
      expect(balance.livemode).toBe(isLive(me));
      expect(sum(funding, () => true)).toBe(w.funded[me]);
      const inFlight = sum(refunds, (x) => x.status === 'pending') + sum(payouts, (x) => ['pending', 'processing'].includes(x.status));
      expect(amountIn(balance.reserved, 'EUR')).toBe(inFlight);
      expect(amountIn(balance.available, 'EUR') + amountIn(balance.reserved, 'EUR')).toBe(
        // What a payment took is what it captured: a manual one's captures, not its amount.
        sum(payments.map((x) => ({ ...x, amount: x.amount_captured })), (x) => x.status === 'succeeded') - sum(refunds, (x) => x.status === 'succeeded') - sum(payouts, (x) => x.status === 'paid') + w.funded[me],
      );
    }
  });

  it('routing is per account and mode', async () => {
    const usdOnly = { rules: [{ currencies: ['USD'], connectors: [{ name: 'simulator_b' }] }] };
    expect((await w.as('aTest', 'PUT', '/v1/routing', usdOnly)).status).toBe(200);
    expect((await w.as('aTest', 'GET', '/v1/routing')).body).toMatchObject({ is_default: false, rules: [{ currencies: ['USD'] }] });
    for (const other of ['bTest', 'aLive'] as const) {
      expect((await w.as(other, 'GET', '/v1/routing')).body.rules).not.toEqual(usdOnly.rules);
    }
    // A live configuration cannot name test-mode connectors, and a test one cannot name live ones.
    expectTyped(await w.as('aLive', 'PUT', '/v1/routing', { rules: [{ connectors: [{ name: 'simulator_a' }] }] }), 400, 'validation', 'parameter_invalid');
    expectTyped(await w.as('aTest', 'PUT', '/v1/routing', { rules: [{ connectors: [{ name: 'lab_live' }] }] }), 400, 'validation', 'parameter_invalid');
  });
});
