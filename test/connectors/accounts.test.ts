// Connector accounts (/v1/connector-accounts) and the catalogue (GET /v1/connectors): create,
// read, list, rotate, enable/disable and delete per account and mode; credentials checked for shape
// per processor, sealed at rest, never answered nor logged; webhook_url from PUBLIC_BASE_URL; the
// Idempotency-Key honoured on create; sealed values moved to a new encryption key.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorAccountSource, resealConnectorAccounts } from '../../src/connectors/account-credentials.js';
import { createEncryptor, DEVELOPMENT_KEY } from '../../src/kernel/encryption.js';
import { parseId } from '../../src/kernel/ids.js';
import { client, createTenant, createTestDatabase, LogCapture, rowsOf, startTestService, type Tenant, type TestDatabase, type TestService } from '../support/helpers.js';

const PUBLIC_BASE_URL = 'https://pay.example.com/base';

let testDb: TestDatabase;
let service: TestService;
let tenant: Tenant;
let test: ReturnType<typeof client>;
let live: ReturnType<typeof client>;
let other: ReturnType<typeof client>;
const logs = new LogCapture();

beforeAll(async () => {
  testDb = await createTestDatabase();
  service = await startTestService(testDb, { overrides: { publicBaseUrl: PUBLIC_BASE_URL }, logs });
  tenant = await createTenant(testDb.database);
  test = client(service.url, tenant.testKey);
  live = client(service.url, tenant.liveKey);
  other = client(service.url, (await createTenant(testDb.database, 'Other')).testKey);
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
});

/** Secrets unlike anything else in a response or a log line, so that finding one is a leak. */
const secret = (prefix: string, tail = crypto.randomBytes(4).toString('hex')) => `${prefix}LEAKCHECK${crypto.randomBytes(12).toString('hex')}${tail}`;
const every: string[] = [];
const remember = <T extends Record<string, string>>(credentials: T): T => {
  // The middle of each secret: the last four are shown by design. Short non-secrets (a merchant account) are left out.
  for (const value of Object.values(credentials)) if (value.length >= 16) every.push(value.slice(6, -4));
  return credentials;
};

const stripeTest = () => remember({ secret_key: secret('sk_test_', 'a1b2'), webhook_secret: secret('whsec_', 'c3d4') });
const adyenHmac = () => crypto.randomBytes(32).toString('hex').toUpperCase();
const adyenLive = () => remember({ api_key: secret('AQEyhm'), merchant_account: 'AcmeECOM', hmac_key: adyenHmac(), live_url_prefix: '1797a841fbb37ca7-AcmeShop' });
const uniqueName = (base: string) => `${base}-${crypto.randomBytes(3).toString('hex')}`;

async function create(api: ReturnType<typeof client>, body: Record<string, unknown>) {
  const res = await api.post('/v1/connector-accounts', body, { idempotencyKey: undefined });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('the connector catalogue', () => {
  it('lists every processor with its capabilities, modes and credential fields', async () => {
    const res = await test.get('/v1/connectors');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', has_more: false });
    const byName = Object.fromEntries(res.body.data.map((c: any) => [c.name, c]));
    expect(Object.keys(byName)).toEqual(['stripe', 'adyen', 'gocardless', 'simulator_a', 'simulator_b']);
    expect(byName.stripe).toMatchObject({
      object: 'connector',
      modes: ['test', 'live'],
      capabilities: { card_payments: true, refunds: true, manual_capture: true, multiple_captures: false, customer_actions: true, mandate_schemes: [], payouts: false },
      routable: true,
    });
    expect(byName.adyen).toMatchObject({ routable: true, capabilities: { card_payments: true, refunds: true, manual_capture: true, multiple_captures: true, customer_actions: true } });
    expect(byName.adyen.capabilities.currencies).not.toContain('MGA');
    expect(byName.gocardless.routable).toBe(true);
    expect(byName.stripe.capabilities.currencies).toContain('EUR');
    expect(byName.stripe.credential_fields.map((f: any) => [f.name, f.required])).toEqual([
      ['secret_key', 'always'],
      ['webhook_secret', 'never'],
    ]);
    expect(byName.adyen.credential_fields.find((f: any) => f.name === 'live_url_prefix').required).toBe('live');
    expect(byName.gocardless.capabilities).toEqual({
      card_payments: false,
      refunds: false,
      manual_capture: false,
      multiple_captures: false,
      customer_actions: false,
      card_verification: false,
      mandate_schemes: ['sepa_core', 'bacs', 'ach'],
      payouts: false,
      currencies: ['EUR', 'GBP', 'USD'],
    });
    expect(byName.simulator_a).toMatchObject({ modes: ['test'], credential_fields: [], routable: true, capabilities: { card_payments: true, payouts: true, manual_capture: true, multiple_captures: true, card_verification: true } });
    expect((await live.get('/v1/connectors')).body).toEqual(res.body);
    expect((await client(service.url).get('/v1/connectors')).body.error.code).toBe('api_key_missing');
    expect((await client(service.url, `sk_test_${'A'.repeat(40)}`).get('/v1/connectors')).body.error.code).toBe('api_key_invalid');
  });
});

describe('connector accounts', () => {
  it('creates a Stripe account: credentials shown as set with their last four, webhook_url from PUBLIC_BASE_URL', async () => {
    const credentials = stripeTest();
    const created = await create(test, { connector: 'stripe', name: 'stripe-eu', credentials, metadata: { team: 'payments' } });
    expect(created.id).toMatch(/^ca_[0-9a-z]{26}$/);
    expect(created).toEqual({
      id: created.id,
      object: 'connector_account',
      livemode: false,
      connector: 'stripe',
      name: 'stripe-eu',
      status: 'enabled',
      credentials: { secret_key: { set: true, last4: 'a1b2' }, webhook_secret: { set: true, last4: 'c3d4' } },
      webhook_url: `${PUBLIC_BASE_URL}/v1/connector-accounts/${created.id}/webhooks`,
      previous_webhook_secret_expires_at: null,
      metadata: { team: 'payments' },
      version: 1,
      created_at: expect.any(String),
      updated_at: created.created_at,
    });
    expect((await test.get(`/v1/connector-accounts/${created.id}`)).body).toEqual(created);
    const listed = (await test.get('/v1/connector-accounts?connector=stripe')).body;
    expect(listed.data.map((a: any) => a.id)).toContain(created.id);
    expect((await test.get('/v1/connector-accounts?connector=adyen')).body.data.map((a: any) => a.id)).not.toContain(created.id);
  });

  it('a webhook secret may come later, once the processor has issued it for webhook_url', async () => {
    const { secret_key } = stripeTest();
    const created = await create(test, { connector: 'stripe', name: uniqueName('later'), credentials: { secret_key } });
    expect(created.credentials.webhook_secret).toEqual({ set: false, last4: null });
    const { webhook_secret } = stripeTest();
    const patched = await test.request('PATCH', `/v1/connector-accounts/${created.id}`, { body: { credentials: { webhook_secret } } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ credentials: { secret_key: { set: true }, webhook_secret: { set: true, last4: 'c3d4' } }, version: 2 });
    // No previous secret to keep: there was none.
    expect(patched.body.previous_webhook_secret_expires_at).toBeNull();
  });

  it('creates the accounts of each processor in each mode', async () => {
    const adyen = await create(live, { connector: 'adyen', name: 'adyen-live', credentials: adyenLive() });
    expect(adyen).toMatchObject({ livemode: true, connector: 'adyen' });
    expect(Object.keys(adyen.credentials)).toEqual(['api_key', 'merchant_account', 'hmac_key', 'live_url_prefix', 'payout_api_key', 'balance_account_id', 'payout_hmac_key']);
    expect(adyen.credentials.payout_api_key).toEqual({ set: false, last4: null });
    const adyenTest = await create(test, { connector: 'adyen', name: 'adyen-test', credentials: remember({ api_key: secret('AQEyhm'), merchant_account: 'AcmeECOM' }) });
    expect(adyenTest.credentials.hmac_key.set).toBe(false);
    await create(test, { connector: 'gocardless', name: 'gc', credentials: remember({ access_token: secret('sandbox_'), webhook_secret: secret('gcwh__') }) });
    await create(live, { connector: 'gocardless', name: 'gc', credentials: remember({ access_token: secret('live_') }) });
    await create(live, { connector: 'stripe', name: 'stripe-live', credentials: remember({ secret_key: secret('rk_live_') }) });
    const sim = await create(test, { connector: 'simulator_b', name: 'sim-b' });
    // The built-in simulators keep reporting to their own path.
    expect(sim).toMatchObject({ credentials: {}, webhook_url: `${PUBLIC_BASE_URL}/v1/connectors/simulator_b/webhooks` });
  });

  const HEX64 = 'ab'.repeat(32);
  it.each([
    ['stripe: a live key with a test key', 'test', { connector: 'stripe', name: 'x', credentials: { secret_key: secret('sk_live_') } }, 'parameter_invalid', 'credentials.secret_key'],
    ['stripe: a test key with a live key', 'live', { connector: 'stripe', name: 'x', credentials: { secret_key: secret('sk_test_') } }, 'parameter_invalid', 'credentials.secret_key'],
    ['stripe: a publishable key', 'test', { connector: 'stripe', name: 'x', credentials: { secret_key: secret('pk_test_') } }, 'parameter_invalid', 'credentials.secret_key'],
    ['stripe: no secret key', 'test', { connector: 'stripe', name: 'x', credentials: { webhook_secret: secret('whsec_') } }, 'parameter_missing', 'credentials.secret_key'],
    ['stripe: no credentials at all', 'test', { connector: 'stripe', name: 'x' }, 'parameter_missing', 'credentials.secret_key'],
    ['stripe: a webhook secret that is not whsec_', 'test', { connector: 'stripe', name: 'x', credentials: { secret_key: secret('sk_test_'), webhook_secret: secret('wh_') } }, 'parameter_invalid', 'credentials.webhook_secret'],
    ['stripe: a field of another processor', 'test', { connector: 'stripe', name: 'x', credentials: { secret_key: secret('sk_test_'), api_key: secret('AQE') } }, 'parameter_unknown', 'credentials.api_key'],
    ['stripe: a key with a space', 'test', { connector: 'stripe', name: 'x', credentials: { secret_key: `sk_test_${secret('a')} x` } }, 'parameter_invalid', 'credentials.secret_key'],
    ['stripe: a number for a key', 'test', { connector: 'stripe', name: 'x', credentials: { secret_key: 42 } }, 'parameter_invalid', 'credentials.secret_key'],
    ['adyen: no merchant account', 'test', { connector: 'adyen', name: 'x', credentials: { api_key: secret('AQE') } }, 'parameter_missing', 'credentials.merchant_account'],
    ['adyen: an HMAC key that is not hex', 'test', { connector: 'adyen', name: 'x', credentials: { api_key: secret('AQE'), merchant_account: 'M', hmac_key: secret('zz') } }, 'parameter_invalid', 'credentials.hmac_key'],
    ['adyen: a live URL prefix with a test key', 'test', { connector: 'adyen', name: 'x', credentials: { api_key: secret('AQE'), merchant_account: 'M', live_url_prefix: '1797a841fbb37ca7-Acme' } }, 'parameter_invalid', 'credentials.live_url_prefix'],
    ['adyen: no live URL prefix with a live key', 'live', { connector: 'adyen', name: 'x', credentials: { api_key: secret('AQE'), merchant_account: 'M', hmac_key: HEX64 } }, 'parameter_missing', 'credentials.live_url_prefix'],
    ['adyen: a live URL prefix that would change the host', 'live', { connector: 'adyen', name: 'x', credentials: { api_key: secret('AQE'), merchant_account: 'M', live_url_prefix: 'evil.example.com/x' } }, 'parameter_invalid', 'credentials.live_url_prefix'],
    ['adyen: a live URL prefix in upper-case hex', 'live', { connector: 'adyen', name: 'x', credentials: { api_key: secret('AQE'), merchant_account: 'M', live_url_prefix: '1797A841FBB37CA7-Acme' } }, 'parameter_invalid', 'credentials.live_url_prefix'],
    ['gocardless: a live token with a test key', 'test', { connector: 'gocardless', name: 'x', credentials: { access_token: secret('live_') } }, 'parameter_invalid', 'credentials.access_token'],
    ['gocardless: a sandbox token with a live key', 'live', { connector: 'gocardless', name: 'x', credentials: { access_token: secret('sandbox_') } }, 'parameter_invalid', 'credentials.access_token'],
    ['a simulator with credentials', 'test', { connector: 'simulator_a', name: 'x', credentials: { secret_key: secret('sk_test_') } }, 'parameter_unknown', 'credentials.secret_key'],
    ['a simulator with a live key', 'live', { connector: 'simulator_a', name: 'x' }, 'parameter_invalid', 'connector'],
    ['an unknown processor', 'test', { connector: 'paypal', name: 'x' }, 'parameter_invalid', 'connector'],
    ['no name', 'test', { connector: 'simulator_a' }, 'parameter_missing', 'name'],
    ['a name with a space', 'test', { connector: 'simulator_a', name: 'my sim' }, 'parameter_invalid', 'name'],
    ["a built-in connector's name", 'test', { connector: 'simulator_b', name: 'simulator_a' }, 'parameter_invalid', 'name'],
    ['an unknown field', 'test', { connector: 'simulator_a', name: 'x', status: 'disabled' }, 'parameter_unknown', 'status'],
  ])('refuses %s with a typed 400 that never repeats the credentials', async (_what, mode, body, code, param) => {
    const api = mode === 'live' ? live : test;
    const before = (await api.get('/v1/connector-accounts?limit=100')).body.data.length;
    const res = await api.post('/v1/connector-accounts', body, { idempotencyKey: undefined });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'validation', code, param });
    for (const value of Object.values((body as { credentials?: Record<string, unknown> }).credentials ?? {})) {
      if (typeof value === 'string' && value.length >= 16) expect(res.text).not.toContain(value.slice(4));
    }
    expect((await api.get('/v1/connector-accounts?limit=100')).body.data.length).toBe(before);
  });

  it('names are unique per account and mode; the other mode and other accounts may reuse them', async () => {
    await create(test, { connector: 'simulator_a', name: 'shared-name' });
    const twice = await test.post('/v1/connector-accounts', { connector: 'simulator_b', name: 'shared-name' }, { idempotencyKey: undefined });
    expect(twice.status, twice.text).toBe(400);
    expect(twice.body.error).toMatchObject({ code: 'parameter_invalid', param: 'name' });
    await create(live, { connector: 'stripe', name: 'shared-name', credentials: remember({ secret_key: secret('sk_live_') }) });
    await create(other, { connector: 'simulator_a', name: 'shared-name' });
  });

  it('rotates credentials field by field; a new webhook secret keeps the previous one verifying for the grace period', async () => {
    const first = stripeTest();
    const created = await create(test, { connector: 'stripe', name: uniqueName('rotate'), credentials: first });
    const source = connectorAccountSource(testDb.database.db, createEncryptor([DEVELOPMENT_KEY]));
    const owner = { accountId: parseId('acct', tenant.accountId)!, livemode: false };

    const second = { secret_key: secret('sk_test_', 'e5f6') };
    remember(second);
    const rotatedKey = await test.request('PATCH', `/v1/connector-accounts/${created.id}`, { body: { credentials: second } });
    expect(rotatedKey.status, rotatedKey.text).toBe(200);
    expect(rotatedKey.body).toMatchObject({ credentials: { secret_key: { last4: 'e5f6' }, webhook_secret: { last4: 'c3d4' } }, previous_webhook_secret_expires_at: null, version: 2 });
    expect((await source(created.id, owner))!.credentials).toEqual({ secret_key: second.secret_key, webhook_secret: first.webhook_secret });

    const newHook = remember({ webhook_secret: secret('whsec_', 'g7h8') });
    const before = Date.now();
    const rotatedHook = await test.request('PATCH', `/v1/connector-accounts/${created.id}`, { body: { credentials: newHook } });
    expect(rotatedHook.body.credentials.webhook_secret.last4).toBe('g7h8');
    const expires = Date.parse(rotatedHook.body.previous_webhook_secret_expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 86_400_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 86_400_000 + 1000);
    expect((await source(created.id, owner))!.webhookSecrets).toEqual([newHook.webhook_secret, first.webhook_secret]);

    // Rotating with no grace ends the previous secret at once; removing the optional field leaves none.
    const third = remember({ webhook_secret: secret('whsec_') });
    const noGrace = await test.request('PATCH', `/v1/connector-accounts/${created.id}`, { body: { credentials: third, grace_period_seconds: 0 } });
    expect(noGrace.body.previous_webhook_secret_expires_at).toBeNull();
    expect((await source(created.id, owner))!.webhookSecrets).toEqual([third.webhook_secret]);
    const removed = await test.request('PATCH', `/v1/connector-accounts/${created.id}`, { body: { credentials: { webhook_secret: null }, grace_period_seconds: 0 } });
    expect(removed.body.credentials.webhook_secret).toEqual({ set: false, last4: null });

    // A required field cannot go, and a bad value changes nothing.
    const version = removed.body.version;
    for (const [credentials, code] of [
      [{ secret_key: null }, 'parameter_missing'],
      [{ secret_key: secret('sk_live_') }, 'parameter_invalid'],
    ] as const) {
      const refused = await test.request('PATCH', `/v1/connector-accounts/${created.id}`, { body: { credentials } });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.error).toMatchObject({ code, param: 'credentials.secret_key' });
    }
    expect((await test.get(`/v1/connector-accounts/${created.id}`)).body.version).toBe(version);
    expect((await source(created.id, owner))!.credentials.secret_key).toBe(second.secret_key);
    // Only this account and mode open it.
    expect(await source(created.id, { ...owner, livemode: true })).toBeUndefined();
  });

  it('renames, disables and enables', async () => {
    const created = await create(test, { connector: 'simulator_a', name: uniqueName('sim') });
    const renamed = await test.request('PATCH', `/v1/connector-accounts/${created.id}`, { body: { name: 'renamed-sim', status: 'disabled', metadata: { a: 'b' } } });
    expect(renamed.body).toMatchObject({ name: 'renamed-sim', status: 'disabled', metadata: { a: 'b' }, version: 2 });
    expect((await test.get('/v1/connector-accounts?status=disabled')).body.data.map((a: any) => a.id)).toContain(created.id);
    expect((await test.request('PATCH', `/v1/connector-accounts/${created.id}`, { body: { status: 'enabled' } })).body).toMatchObject({ status: 'enabled', version: 3 });
    const clash = await test.request('PATCH', `/v1/connector-accounts/${created.id}`, { body: { name: 'shared-name' } });
    expect(clash.body.error).toMatchObject({ code: 'parameter_invalid', param: 'name' });
    const builtIn = await test.request('PATCH', `/v1/connector-accounts/${created.id}`, { body: { name: 'simulator_b' } });
    expect(builtIn.body.error).toMatchObject({ code: 'parameter_invalid', param: 'name' });
  });

  it('deletes: the account answers 404 afterwards and its name is free again', async () => {
    const name = uniqueName('gone');
    const created = await create(test, { connector: 'simulator_a', name });
    const deleted = await test.request('DELETE', `/v1/connector-accounts/${created.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ id: created.id, object: 'connector_account', deleted: true });
    expect((await test.get(`/v1/connector-accounts/${created.id}`)).status).toBe(404);
    expect((await test.request('PATCH', `/v1/connector-accounts/${created.id}`, { body: { name: 'x' } })).status).toBe(404);
    expect((await test.request('DELETE', `/v1/connector-accounts/${created.id}`)).status).toBe(404);
    expect((await test.get('/v1/connector-accounts?limit=100')).body.data.map((a: any) => a.id)).not.toContain(created.id);
    await create(test, { connector: 'simulator_b', name });
  });

  it('another account and the other mode get 404; lists hold only their own', async () => {
    const mine = await create(test, { connector: 'simulator_a', name: uniqueName('mine') });
    for (const [api, hint] of [
      [other, false],
      [live, true],
    ] as const) {
      for (const [method, opts] of [
        ['GET', {}],
        ['PATCH', { body: { status: 'disabled' } }],
        ['DELETE', {}],
      ] as const) {
        const res = await api.request(method, `/v1/connector-accounts/${mine.id}`, opts);
        expect(res.status, res.text).toBe(404);
        expect(res.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
        expect(res.body.error.message.includes('test mode')).toBe(hint);
      }
      expect((await api.get('/v1/connector-accounts?limit=100')).body.data.map((a: any) => a.id)).not.toContain(mine.id);
    }
    expect((await test.get(`/v1/connector-accounts/${mine.id}`)).body).toMatchObject({ status: 'enabled', version: 1 });
    expect((await test.get('/v1/connector-accounts/ca_nonsense')).status).toBe(404);
    expect((await test.get(`/v1/connector-accounts/${mine.id.replace('ca_', 'we_')}`)).status).toBe(404);
  });

  it('honours an Idempotency-Key on create: the replay is the same answer, one account exists', async () => {
    const key = crypto.randomUUID();
    const body = { connector: 'stripe', name: uniqueName('idem'), credentials: stripeTest() };
    const first = await test.post('/v1/connector-accounts', body, { idempotencyKey: key });
    expect(first.status, first.text).toBe(201);
    const again = await test.post('/v1/connector-accounts', body, { idempotencyKey: key });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const reused = await test.post('/v1/connector-accounts', { ...body, name: uniqueName('idem') }, { idempotencyKey: key });
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
    const named = (await test.get('/v1/connector-accounts?limit=100')).body.data.filter((a: any) => a.name === body.name);
    expect(named).toHaveLength(1);
  });

  it('no credential is ever in an answer, a stored answer, the table in clear, or a log line', async () => {
    expect(every.length).toBeGreaterThan(20);
    const answers = [
      (await test.get('/v1/connector-accounts?limit=100')).text,
      (await live.get('/v1/connector-accounts?limit=100')).text,
      ...(await rowsOf(testDb.database, sql`SELECT response_body FROM idempotency_keys WHERE response_body IS NOT NULL`)).map((r) => String(r.response_body)),
      JSON.stringify(await rowsOf(testDb.database, sql`SELECT * FROM connector_accounts`)),
      logs.text,
    ];
    expect(logs.lines.length).toBeGreaterThan(20);
    for (const text of answers) for (const value of every) expect(text).not.toContain(value);
  });
});

describe('sealing', () => {
  it('re-seals credentials and previous webhook secrets with the active key when the keys rotate', async () => {
    const created = await create(test, { connector: 'stripe', name: uniqueName('reseal'), credentials: stripeTest() });
    await test.request('PATCH', `/v1/connector-accounts/${created.id}`, { body: { credentials: { webhook_secret: secret('whsec_') } } });
    const owner = { accountId: parseId('acct', tenant.accountId)!, livemode: false };
    const before = await connectorAccountSource(testDb.database.db, createEncryptor([DEVELOPMENT_KEY]))(created.id, owner);
    const newKey = { id: 'k_2', key: crypto.randomBytes(32) };
    const rotated = createEncryptor([newKey, DEVELOPMENT_KEY]);
    let moved = 0;
    for (let n = await resealConnectorAccounts(testDb.database.db, rotated, 3); n > 0; n = await resealConnectorAccounts(testDb.database.db, rotated, 3)) moved += n;
    expect(moved).toBeGreaterThan(3);
    const rows = await rowsOf(testDb.database, sql`SELECT credentials_encrypted, previous_webhook_secret_encrypted FROM connector_accounts`);
    for (const row of rows) {
      expect(String(row.credentials_encrypted)).toMatch(/^v1\.k_2\./);
      if (row.previous_webhook_secret_encrypted !== null) expect(String(row.previous_webhook_secret_encrypted)).toMatch(/^v1\.k_2\./);
    }
    // The new key alone opens them now, to the same values.
    expect(await connectorAccountSource(testDb.database.db, createEncryptor([newKey]))(created.id, owner)).toEqual(before);
    expect(await resealConnectorAccounts(testDb.database.db, rotated)).toBe(0);
  });
});
