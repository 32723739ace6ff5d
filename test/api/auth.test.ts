// Authentication and modes (docs/api-conventions.md): the Authorization header, key validity (malformed, unknown,
// revoked, expired, rolled), suspended accounts, the one error shape, and the wall between test
// and live objects. Runs on PostgreSQL and on PGlite.
import { beforeAll, describe, expect, it } from 'vitest';
import { call, client, orderBody, type ApiResponse, type Tenant } from '../support/helpers.js';
import { activateLive, createAccount, issueKey, listKeys, reinstateAccount, revokeKey, rollKey, suspendAccount } from '../../src/domain/accounts/service.js';
import { newApiKey } from '../../src/kernel/secrets.js';
import { newId } from '../../src/kernel/ids.js';
import { useService } from '../support/fixtures.js';

/** No API-key cache: revocations and suspensions bite on the very next request. */
const h = useService({ overrides: { apiKeyCacheTtlMs: 0 } });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const db = () => h.db;
const listOrders = (key: string | undefined, headers: Record<string, string> = {}, url = h.url) =>
  call(url, 'GET', '/v1/payment-orders', { key, headers });

/** The exact error body: nothing more than type, code, message (and param when given) and request_id. */
function expectError(res: ApiResponse, status: number, type: string, code: string, param?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const requestId = res.headers.get('request-id');
  expect(requestId).toMatch(/^req_[0-9a-z]{26}$/);
  expect(res.body).toEqual({
    error: {
      type,
      code,
      message: expect.any(String),
      ...(param === undefined ? {} : { param }),
      request_id: requestId,
    },
  });
  expect(res.body.error.message.length).toBeGreaterThan(0);
  return res.body.error as { type: string; code: string; message: string; param?: string; request_id: string };
}

describe('authentication: the Authorization header', () => {
  it('a missing header is 401 api_key_missing', async () => {
    const res = await listOrders(undefined);
    const error = expectError(res, 401, 'authentication', 'api_key_missing');
    expect(error.message).toContain('Authorization: Bearer');
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });

  it.each([
    ['Basic', `Basic ${Buffer.from('user:pass').toString('base64')}`],
    ['Token with a valid key', 'Token sk_test_REPLACED'],
    ['bare key without a scheme', 'sk_test_REPLACED'],
    ['Bearer without a key', 'Bearer '],
    ['Bearer glued to the key', 'Bearersk_test_REPLACED'],
    ['empty header', ''],
  ])('a non-Bearer header (%s) is 401 api_key_missing', async (_name, header) => {
    const res = await listOrders(undefined, { authorization: header.replace('sk_test_REPLACED', h.tenant.testKey) });
    const error = expectError(res, 401, 'authentication', 'api_key_missing');
    expect(error.message).toContain('Bearer');
  });

  it('the scheme is case-insensitive, as HTTP says', async () => {
    const res = await listOrders(undefined, { authorization: `bearer ${h.tenant.testKey}` });
    expect(res.status).toBe(200);
  });

  it.each([
    ['too short', 'sk_test_abc123'],
    ['unknown prefix', `pk_test_${'a'.repeat(40)}`],
    ['unknown mode', `sk_prod_${'a'.repeat(40)}`],
    ['bad characters', `sk_test_${'a'.repeat(39)}-`],
    ['two tokens', `sk_test_${'a'.repeat(40)} extra`],
  ])('a malformed key (%s) is 401 api_key_invalid', async (_name, key) => {
    const res = await listOrders(undefined, { authorization: `Bearer ${key}` });
    expectError(res, 401, 'authentication', 'api_key_invalid');
  });

  it('an unknown well-formed key is 401 api_key_invalid', async () => {
    for (const key of [newApiKey(false), newApiKey(true)]) {
      const res = await listOrders(key);
      const error = expectError(res, 401, 'authentication', 'api_key_invalid');
      // The answer never echoes the key.
      expect(res.text).not.toContain(key);
      expect(error.message).not.toContain(key.slice(8));
    }
  });

  it("an almost-right key (one character changed) is 401 api_key_invalid", async () => {
    const last = h.tenant.testKey.at(-1)!;
    const tampered = h.tenant.testKey.slice(0, -1) + (last === 'a' ? 'b' : 'a');
    expectError(await listOrders(tampered), 401, 'authentication', 'api_key_invalid');
  });
});

describe('authentication: key lifecycle', () => {
  it('a revoked key is 401 api_key_invalid; the other keys of the account keep working', async () => {
    const t = await h.createTenant('Revocation');
    const extra = await issueKey(db(), t.accountId, { livemode: false });
    expect((await listOrders(extra.secret)).status).toBe(200);
    await revokeKey(db(), extra.id);
    expectError(await listOrders(extra.secret), 401, 'authentication', 'api_key_invalid');
    expect((await listOrders(t.testKey)).status).toBe(200);
  });

  it('an expired key is 401 api_key_invalid', async () => {
    const account = await createAccount(db(), 'Expiry');
    const past = await issueKey(db(), account.id, { livemode: false, expiresAt: new Date(Date.now() - 1000) });
    expectError(await listOrders(past.secret), 401, 'authentication', 'api_key_invalid');

    const soon = await issueKey(db(), account.id, { livemode: false, expiresAt: new Date(Date.now() + 1500) });
    const before = await listOrders(soon.secret);
    if (Date.now() < Date.parse(soon.expires_at!) - 100) expect(before.status).toBe(200);
    await sleep(Math.max(0, Date.parse(soon.expires_at!) - Date.now() + 50));
    expectError(await listOrders(soon.secret), 401, 'authentication', 'api_key_invalid');
  });

  it('a rolled key works until its time, then 401; the new key works at once', async () => {
    const t = await h.createTenant('Roll');
    const old = await issueKey(db(), t.accountId, { livemode: true });
    const rolled = await rollKey(db(), old.id, new Date(Date.now() + 1500));
    expect(rolled.new.livemode).toBe(true);
    const until = Date.parse(rolled.old.expires_at!);
    const oldNow = await listOrders(old.secret);
    if (Date.now() < until - 100) expect(oldNow.status).toBe(200);
    const fresh = await listOrders(rolled.new.secret);
    expect(fresh.status).toBe(200);
    await sleep(Math.max(0, until - Date.now() + 50));
    expectError(await listOrders(old.secret), 401, 'authentication', 'api_key_invalid');
    expect((await listOrders(rolled.new.secret)).status).toBe(200);
  });

  it('a suspended account is 403 account_suspended (type authentication) for all its keys, until reinstated', async () => {
    const t = await h.createTenant('Suspension');
    await suspendAccount(db(), t.accountId);
    for (const key of [t.testKey, t.liveKey]) {
      const res = await listOrders(key);
      expectError(res, 403, 'authentication', 'account_suspended');
      // Nothing was let through: a create is refused the same way and creates nothing.
      const created = await client(h.url, key).post('/v1/payment-orders', orderBody());
      expectError(created, 403, 'authentication', 'account_suspended');
    }
    // A revoked key of a suspended account is still just an invalid key (no account state leaks).
    const revoked = await issueKey(db(), t.accountId, { livemode: false });
    await revokeKey(db(), revoked.id);
    expectError(await listOrders(revoked.secret), 401, 'authentication', 'api_key_invalid');

    await reinstateAccount(db(), t.accountId);
    const after = await listOrders(t.testKey);
    expect(after.status).toBe(200);
    expect(after.body).toEqual({ object: 'list', data: [], has_more: false });
  });

  it('with a key cache, a revocation takes effect within API_KEY_CACHE_TTL_MS', async () => {
    const ttlMs = 1500;
    const cached = await h.startService({ overrides: { apiKeyCacheTtlMs: ttlMs } });
    try {
      const t = await h.createTenant('Cached');
      const firstLookupAt = Date.now();
      expect((await listOrders(t.testKey, {}, cached.url)).status).toBe(200);
      const [testKeyView] = (await listKeys(db(), t.accountId)).filter((k) => !k.livemode);
      const revokedAt = Date.now();
      await revokeKey(db(), testKeyView!.id);
      // The uncached service refuses the key at once.
      expectError(await listOrders(t.testKey), 401, 'authentication', 'api_key_invalid');
      // The cached one still accepts it while its lookup is fresh (that is the documented staleness)...
      const stale = await listOrders(t.testKey, {}, cached.url);
      if (Date.now() - firstLookupAt < ttlMs - 100) expect(stale.status).toBe(200);
      // ...but never for longer than the TTL.
      let refusedAt: number | undefined;
      while (Date.now() - revokedAt < ttlMs + 2000) {
        const res = await listOrders(t.testKey, {}, cached.url);
        if (res.status === 401) {
          refusedAt = Date.now();
          break;
        }
        expect(res.status).toBe(200);
        await sleep(100);
      }
      expect(refusedAt).toBeDefined();
      expect(refusedAt! - revokedAt).toBeLessThanOrEqual(ttlMs + 1000);
    } finally {
      await cached.close();
    }
  });
});

describe('modes: a key sees only its own mode of its own account', () => {
  let other: Tenant;
  let testOrder: any;
  let liveOrder: any;

  beforeAll(async () => {
    other = await h.createTenant('Other tenant');
    const test = await h.api.post('/v1/payment-orders', orderBody());
    const live = await h.live.post('/v1/payment-orders', orderBody());
    expect(test.status).toBe(201);
    expect(live.status).toBe(201);
    testOrder = test.body;
    liveOrder = live.body;
  });

  it('objects carry the mode of the key that created them', () => {
    expect(testOrder.livemode).toBe(false);
    expect(liveOrder.livemode).toBe(true);
  });

  it('each key lists and fetches only its own mode', async () => {
    const testApi = h.api;
    const liveApi = h.live;
    const testList = (await testApi.get('/v1/payment-orders?limit=100')).body.data.map((o: any) => o.id);
    const liveList = (await liveApi.get('/v1/payment-orders?limit=100')).body.data.map((o: any) => o.id);
    expect(testList).toContain(testOrder.id);
    expect(testList).not.toContain(liveOrder.id);
    expect(liveList).toContain(liveOrder.id);
    expect(liveList).not.toContain(testOrder.id);
    expect((await testApi.get(`/v1/payment-orders/${testOrder.id}`)).body).toEqual(testOrder);
    expect((await liveApi.get(`/v1/payment-orders/${liveOrder.id}`)).body).toEqual(liveOrder);
  });

  it("the other mode's object is 404 resource_missing, and the message names the other mode", async () => {
    const fromTest = await h.api.get(`/v1/payment-orders/${liveOrder.id}`);
    const testError = expectError(fromTest, 404, 'validation', 'resource_missing', 'id');
    expect(testError.message).toContain(liveOrder.id);
    expect(testError.message).toContain('live mode');

    const fromLive = await h.live.get(`/v1/payment-orders/${testOrder.id}`);
    const liveError = expectError(fromLive, 404, 'validation', 'resource_missing', 'id');
    expect(liveError.message).toContain(testOrder.id);
    expect(liveError.message).toContain('test mode');

    // Acting on it is refused the same way, and changes nothing.
    const cancel = await h.api.post(`/v1/payment-orders/${liveOrder.id}/cancel`);
    expectError(cancel, 404, 'validation', 'resource_missing', 'id');
    expect((await h.live.get(`/v1/payment-orders/${liveOrder.id}`)).body.status).toBe('open');
  });

  it("another account's object is 404 resource_missing exactly like an id that does not exist", async () => {
    const absent = newId('ord').id;
    for (const key of [other.testKey, other.liveKey]) {
      const api = client(h.url, key);
      for (const order of [testOrder, liveOrder]) {
        const res = await api.get(`/v1/payment-orders/${order.id}`);
        const error = expectError(res, 404, 'validation', 'resource_missing', 'id');
        expect(error.message).not.toMatch(/mode/i);
        const missing = expectError(await api.get(`/v1/payment-orders/${absent}`), 404, 'validation', 'resource_missing', 'id');
        // Same message once the id itself is set aside: nothing tells "exists elsewhere" from "absent".
        expect(error.message.replace(order.id, '<id>')).toBe(missing.message.replace(absent, '<id>'));
      }
    }
  });

  it('a live key cannot be issued before live activation, so a fresh account has only test objects', async () => {
    const account = await createAccount(db(), 'Not yet live');
    await expect(issueKey(db(), account.id, { livemode: true })).rejects.toThrow(/live mode is not enabled/);
    await activateLive(db(), account.id, { force: true });
    const live = await issueKey(db(), account.id, { livemode: true });
    expect((await listOrders(live.secret)).status).toBe(200);
  });
});
