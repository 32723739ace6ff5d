// The operator CLI against PostgreSQL, run as a real child process on this file's own database, with
// the keys it issues and the accounts it changes checked against a real running service. PGlite is
// skipped: an in-memory database cannot be shared with a child process.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { accountPlan, activateLive, createAccount, getAccount, issueKey, listKeys } from '../../src/domain/accounts/service.js';
import { client, isPostgres } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';
import { baseEnv, runCli, runCliHere, tempDir } from '../support/cli.js';
import { textOf, visit } from '../support/checkout.js';
import { Visitor } from '../support/dashboard.js';

describe.skipIf(!isPostgres)('cli: accounts and keys against PostgreSQL', () => {
  // No key cache: what the CLI changes is visible to the very next request.
  const h = useService({ overrides: { apiKeyCacheTtlMs: 0 } });
  const cli = (...args: string[]) => runCli(args, baseEnv({ DATABASE_URL: h.databaseUrl!, DATA_DIR: path.join(tempDir(), 'unused') }));
  /** Runs a command that must succeed and answers its JSON. */
  const ok = async (...args: string[]) => {
    const res = await cli(...args);
    expect(res.stderr.split('\n').filter((l) => l.startsWith('error:'))).toEqual([]);
    expect(res.code).toBe(0);
    return res.json;
  };
  const listOrders = (key: string) => client(h.url, key).get('/v1/payment-orders');
  // Set-up goes through the domain functions directly (fast); the command under test is a child process.
  const db = () => h.db;
  const account = async (name: string, live = false) => {
    const created = await createAccount(db(), name);
    if (live) await activateLive(db(), created.id, { force: true });
    return created;
  };

  it('migrate is idempotent on a migrated database', async () => {
    expect(await ok('migrate')).toEqual({ migrated: true });
  });

  it('creates, shows and lists accounts', async () => {
    const { test_key: testKey, plan, ...created } = await ok('accounts', 'create', '--name', '  Acme Books  ');
    // The test key it prints works, and the plan starts with every item open.
    expect(testKey).toMatchObject({ account: created.id, livemode: false, name: 'onboarding', secret: expect.stringMatching(/^sk_test_/) });
    expect((await listOrders(testKey.secret)).status).toBe(200);
    expect(plan).toMatchObject({ object: 'integration_plan', account: created.id, complete: false });
    expect(plan.items.every((item: { status: string }) => item.status === 'open')).toBe(true);
    expect(await accountPlan(db(), created.id)).toEqual(plan);
    expect(created).toEqual({
      id: expect.stringMatching(/^acct_[0-9a-z]{26}$/),
      name: 'Acme Books',
      support_email: null,
      status: 'active',
      live_enabled: false,
      rate_limit: null,
      payouts: { live_enabled: false, max_amount: null },
      live_forced_at: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(await getAccount(db(), created.id)).toEqual(created);
    expect(await ok('accounts', 'show', created.id)).toEqual(created);
    const other = await account('Other');
    const list = await ok('accounts', 'list');
    expect(list).toEqual(expect.arrayContaining([created, other]));
    // newest first
    expect(list.findIndex((a: any) => a.id === other.id)).toBeLessThan(list.findIndex((a: any) => a.id === created.id));
  });

  it('names an account and its support contact: the checkout and the dashboard show them from the next page on', async () => {
    const created = await ok('accounts', 'create', '--name', 'Default account', '--support-email', 'help@acme.example');
    expect(created).toMatchObject({ name: 'Default account', support_email: 'help@acme.example' });
    const key = created.test_key.secret;
    const order = (await client(h.url, key).post('/v1/payment-orders', { amount: 1250, currency: 'EUR', reference: 'r-1', customer: { email: 'jane@example.com' } })).body;
    const dashboard = new Visitor(h.url);
    expect((await dashboard.signIn({ key })).status).toBe(303);

    const renamed = await ok('accounts', 'update', created.id, '--name', '  Blue & Bottle <Beans>  ', '--support-email', 'support+orders@blue-bottle.example.com');
    expect(renamed).toEqual({ ...(await getAccount(db(), created.id)), name: 'Blue & Bottle <Beans>', support_email: 'support+orders@blue-bottle.example.com' });
    const page = await visit(order.checkout_url);
    expect(page.status).toBe(200);
    // Escaped like every value from the database, in the title, the summary and the contact line.
    expect(page.html).toContain('<title>Pay Blue &amp; Bottle &lt;Beans&gt;</title>');
    expect(page.html).toContain(
      'Questions about this order? Write to Blue &amp; Bottle &lt;Beans&gt; at <a href="mailto:support+orders@blue-bottle.example.com">support+orders@blue-bottle.example.com</a>.',
    );
    expect(textOf(page.html)).toContain('Blue & Bottle <Beans>');
    expect(page.html).not.toContain('Default account');
    const home = await dashboard.get('/dashboard/payments');
    expect(home.status).toBe(200);
    expect(home.text).toContain('<span class="account">Blue &amp; Bottle &lt;Beans&gt; · test</span>');

    // Options left out keep their value; `none` removes the contact.
    expect(await ok('accounts', 'update', created.id, '--support-email', 'none')).toMatchObject({ name: 'Blue & Bottle <Beans>', support_email: null });
    expect((await visit(order.checkout_url)).html).not.toContain('Questions about this order');
    expect(await ok('accounts', 'update', created.id, '--name', 'Blue Bottle')).toMatchObject({ name: 'Blue Bottle', support_email: null });
    expect((await dashboard.get('/dashboard/payments')).text).toContain('<span class="account">Blue Bottle · test</span>');
  });

  it.each([
    [['--name', ' '], '--name must not be empty'],
    [['--name', 'x'.repeat(101)], '--name must be at most 100 characters, got 101'],
    [['--name', 'Acme\u0007'], '--name must not contain control characters'],
    [['--support-email', 'help'], '--support-email must be an email address such as support@example.com, got "help"'],
    [['--support-email', 'a@b'], '--support-email must be an email address'],
    [['--support-email', 'a b@example.com'], '--support-email must be an email address'],
    [['--support-email', 'a..b@example.com'], '--support-email must not have an empty part between dots'],
    [['--support-email', `${'a'.repeat(65)}@example.com`], '--support-email must have at most 64 characters before the @'],
    [['--support-email', `a@${'b'.repeat(250)}.com`], '--support-email must be at most 254 characters'],
    [[], 'give --name, --support-email or both'],
  ])('accounts update %j is refused before the database is touched (exit 2)', async (flags, message) => {
    const acct = await account('Unchanged');
    // In this process (fast): the checks run before any database is opened.
    const res = await runCliHere(['accounts', 'update', acct.id, ...(flags as string[])], baseEnv({ DATABASE_URL: h.databaseUrl! }));
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr.startsWith(`error: ${message}`), res.stderr).toBe(true);
    expect(res.stderr).toContain('usage: npm run cli -- accounts update ACCT_ID [--name NAME] [--support-email EMAIL|none]');
    expect(await getAccount(db(), acct.id)).toEqual(acct);
  });

  it('an unknown account or key is an onboarding error (exit 2)', async () => {
    const res = await cli('accounts', 'show', 'acct_01h455vb4pex5vsknk084sn02q');
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe('error: no account acct_01h455vb4pex5vsknk084sn02q\n');
    const key = await cli('keys', 'revoke', 'key_01h455vb4pex5vsknk084sn02q');
    expect(key.code).toBe(2);
    expect(key.stderr).toBe('error: no key key_01h455vb4pex5vsknk084sn02q\n');
  });

  it('refuses a live key until the account is activated for live use', async () => {
    const acct = await account('Onboarding');
    const refused = await cli('keys', 'create', acct.id, '--mode', 'live');
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(`error: live mode is not enabled for ${acct.id}; activate it first (accounts activate-live)\n`);
    expect(await listKeys(db(), acct.id)).toEqual([]);

    // Nothing of the implementation plan is done: refused, naming the open items, unless forced.
    const early = await cli('accounts', 'activate-live', acct.id);
    expect(early.code).toBe(2);
    expect(early.stderr).toMatch(new RegExp(`^error: ${acct.id} has open required items in its implementation plan: webhook_endpoint, .*card_success.*--force`));
    expect((await getAccount(db(), acct.id)).live_enabled).toBe(false);
    const activated = await ok('accounts', 'activate-live', acct.id, '--force');
    expect(activated).toEqual({ ...acct, live_enabled: true, live_forced_at: expect.stringMatching(/^\d{4}-/) });
    const live = await ok('keys', 'create', acct.id, '--mode', 'live', '--name', 'production');
    expect(live).toMatchObject({ account: acct.id, livemode: true, name: 'production', expires_at: null, revoked_at: null });
    expect(live.secret).toMatch(/^sk_live_[0-9A-Za-z]{32,}$/);
    const answer = await listOrders(live.secret);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ object: 'list', data: [], has_more: false });
  });

  it('issues a key whose secret is shown once and works; the list never shows secrets', async () => {
    const acct = await account('Keys');
    const created = await cli('keys', 'create', acct.id, '--mode', 'test', '--name', 'ci', '--expires-at', '2099-01-01T12:00:00+02:00');
    expect(created.code).toBe(0);
    expect(created.stderr).toMatch(/^note: the secret is shown only this once/);
    const key = created.json;
    expect(key).toEqual({
      id: expect.stringMatching(/^key_[0-9a-z]{26}$/),
      account: acct.id,
      livemode: false,
      redacted: `${key.secret.slice(0, 8)}…${key.secret.slice(-4)}`,
      name: 'ci',
      expires_at: '2099-01-01T10:00:00.000Z',
      revoked_at: null,
      created_at: expect.any(String),
      secret: expect.stringMatching(/^sk_test_[0-9A-Za-z]{32,}$/),
    });
    expect((await listOrders(key.secret)).status).toBe(200);

    const other = await issueKey(db(), acct.id, { livemode: false });
    const listed = await cli('keys', 'list', acct.id);
    expect(listed.code).toBe(0);
    for (const secret of [key.secret, other.secret]) {
      expect(listed.stdout).not.toContain(secret);
      expect(listed.stdout).not.toContain(secret.slice(8, 36));
    }
    expect(listed.stdout).not.toContain('secret');
    const { secret: _secret, ...withoutSecret } = key;
    const { secret: _other, ...otherWithoutSecret } = other;
    expect(listed.json).toEqual([otherWithoutSecret, withoutSecret]);
  });

  it('revokes a key: the service refuses it at once, and it cannot be rolled', async () => {
    const acct = await account('Revoke');
    const key = await issueKey(db(), acct.id, { livemode: false });
    expect((await listOrders(key.secret)).status).toBe(200);
    const revoked = await cli('keys', 'revoke', key.id);
    expect(revoked.code).toBe(0);
    expect(revoked.json).toMatchObject({ id: key.id, revoked_at: expect.any(String) });
    expect(revoked.json).not.toHaveProperty('secret');
    expect(revoked.stderr).toContain('API_KEY_CACHE_TTL_MS');
    const refused = await listOrders(key.secret);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('api_key_invalid');
    const roll = await cli('keys', 'roll', key.id);
    expect(roll.code).toBe(2);
    expect(roll.stdout).toBe('');
    expect(roll.stderr).toBe(`error: ${key.id} is revoked; issue a new key instead\n`);
  });

  it('rolls a key: a new key at once, the old one until the chosen time', async () => {
    const acct = await account('Roll', true);
    const old = await issueKey(db(), acct.id, { livemode: true, name: 'web' });

    const before = Date.now();
    const rolled = await cli('keys', 'roll', old.id, '--expires-in', '3');
    expect(rolled.code).toBe(0);
    const { old: oldView, new: fresh } = rolled.json;
    expect(oldView).toMatchObject({ id: old.id, revoked_at: null });
    expect(oldView).not.toHaveProperty('secret');
    expect(fresh).toMatchObject({ account: acct.id, livemode: true, name: 'web', expires_at: null });
    expect(fresh.id).not.toBe(old.id);
    expect(fresh.secret).toMatch(/^sk_live_/);
    expect(fresh.secret).not.toBe(old.secret);
    expect(rolled.stderr).toContain('shown only this once');
    expect(rolled.stderr).toContain(`the old key ${old.id} keeps working until ${oldView.expires_at}`);
    const until = Date.parse(oldView.expires_at);
    expect(until).toBeGreaterThanOrEqual(before + 3000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3000);

    if (Date.now() < until - 200) expect((await listOrders(old.secret)).status).toBe(200);
    expect((await listOrders(fresh.secret)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now() + 50)));
    const expired = await listOrders(old.secret);
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe('api_key_invalid');
    expect((await listOrders(fresh.secret)).status).toBe(200);
  });

  it('rolls with the default 24 hours, or until an explicit time, never beyond an earlier expiry', async () => {
    const acct = await account('Roll defaults');
    const a = await issueKey(db(), acct.id, { livemode: false });
    const before = Date.now();
    const byDefault = await ok('keys', 'roll', a.id);
    const until = Date.parse(byDefault.old.expires_at);
    expect(until).toBeGreaterThanOrEqual(before + 24 * 3600 * 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + 24 * 3600 * 1000);
    expect((await listOrders(a.secret)).status).toBe(200);

    const b = await issueKey(db(), acct.id, { livemode: false });
    const at = new Date(Date.now() + 3600 * 1000);
    at.setUTCMilliseconds(0);
    const explicit = await ok('keys', 'roll', b.id, '--expires-at', at.toISOString());
    expect(explicit.old.expires_at).toBe(at.toISOString());
    // Rolling again cannot extend the old key past the hour it was already given.
    const again = await ok('keys', 'roll', b.id, '--expires-in', String(48 * 3600));
    expect(again.old.expires_at).toBe(at.toISOString());

    // --expires-in 0 retires the old key at once.
    const c = await issueKey(db(), acct.id, { livemode: false });
    const now = await ok('keys', 'roll', c.id, '--expires-in', '0');
    expect(Date.parse(now.old.expires_at)).toBeLessThanOrEqual(Date.now());
    expect((await listOrders(c.secret)).status).toBe(401);
    expect((await listOrders(now.new.secret)).status).toBe(200);
  });

  it('suspends an account (403 for every key) and reinstates it', async () => {
    const acct = await account('Suspend', true);
    const test = await issueKey(db(), acct.id, { livemode: false });
    const live = await issueKey(db(), acct.id, { livemode: true });
    const suspended = await cli('accounts', 'suspend', acct.id);
    expect(suspended.code).toBe(0);
    expect(suspended.json).toMatchObject({ id: acct.id, status: 'suspended' });
    expect(suspended.stderr).toContain('API_KEY_CACHE_TTL_MS');
    for (const key of [test, live]) {
      const res = await listOrders(key.secret);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ type: 'authentication', code: 'account_suspended' });
    }
    expect(await ok('accounts', 'reinstate', acct.id)).toMatchObject({ id: acct.id, status: 'active' });
    expect((await listOrders(test.secret)).status).toBe(200);
    expect((await listOrders(live.secret)).status).toBe(200);
  });

  it("sets an account's own rate-limit budget and clears it with --default", async () => {
    const acct = await account('Budget');
    const key = await issueKey(db(), acct.id, { livemode: false });
    const set = await ok('accounts', 'set-rate-limit', acct.id, '--per-second', '3', '--burst', '4');
    expect(set).toMatchObject({ id: acct.id, rate_limit: { per_second: 3, burst: 4 } });
    expect((await getAccount(db(), acct.id)).rate_limit).toEqual({ per_second: 3, burst: 4 });

    const first = await listOrders(key.secret);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('4');
    expect(first.headers.get('ratelimit-policy')).toBe('3;w=1;burst=4');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await listOrders(key.secret)).status);
    expect(statuses).toContain(429);

    const cleared = await ok('accounts', 'set-rate-limit', acct.id, '--default');
    expect(cleared.rate_limit).toBeNull();
    // Back to the test service's configured default budget for test keys.
    const after = await listOrders(key.secret);
    expect(after.headers.get('ratelimit-limit')).toBe(String(h.service.config.rateLimit.test.burst));
    expect(after.headers.get('ratelimit-policy')).toBe(`${h.service.config.rateLimit.test.perSecond};w=1;burst=${h.service.config.rateLimit.test.burst}`);
  });
});
