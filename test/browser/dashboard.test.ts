// The dashboard over plain HTTP (no browser): sign-in by CLI code and its one use, sessions that
// end with their key, every page rendered, the webhook-endpoint, payout, mandate and balance
// actions going through the API's service functions, output escaped, the Secure cookie behind
// TLS, and nothing of the dashboard in the OpenAPI document.
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { created, isPostgres, orderBody } from '../support/helpers.js';
import { baseEnv, runCliHere } from '../support/cli.js';
import { createSignInCode } from '../../src/domain/dashboard/sessions.js';
import { listKeys, revokeKey } from '../../src/domain/accounts/service.js';
import { CARDS, orderAndPay } from '../support/payments.js';
import { fund, newBeneficiary, payout } from '../support/payouts.js';
import { ENDINGS, newMandate } from '../support/mandates.js';
import { Visitor } from '../support/dashboard.js';

const h = useService();

const signedIn = (key = h.tenant.testKey) => Visitor.signedIn(h.url, key);

describe('dashboard sessions', () => {
  it('signs in once with a one-time code from the CLI, never with a key in a URL', async () => {
    let code: string;
    if (isPostgres) {
      const cli = await runCliHere(['dashboard', 'session', h.tenant.accountId, '--mode', 'test'], baseEnv({ DATABASE_URL: h.databaseUrl!, PUBLIC_BASE_URL: 'https://pay.example.com' }));
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.json).toMatchObject({ account: h.tenant.accountId, mode: 'test', sign_in_url: 'https://pay.example.com/dashboard/sign-in' });
      expect(cli.json.sign_in_url).not.toContain(cli.json.code);
      code = cli.json.code;
    } else {
      code = (await createSignInCode(h.db, h.tenant.accountId, false)).code;
    }
    const visitor = new Visitor(h.url);
    const res = await visitor.signIn({ code });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/payments');
    expect((await visitor.get('/dashboard/payments')).text).toContain('Test mode');

    const again = await new Visitor(h.url).signIn({ code });
    expect(again.status).toBe(401);
    expect((await new Visitor(h.url).signIn({ key: 'sk_test_' + 'x'.repeat(40) })).status).toBe(401);
  });

  // The CLI opens the database by URL: the embedded test database lives in this process only.
  it.skipIf(!isPostgres)('refuses a live code for an account not activated for live mode', async () => {
    const made = await runCliHere(['accounts', 'create', '--name', 'Not live'], baseEnv({ DATABASE_URL: h.databaseUrl! }));
    const cli = await runCliHere(['dashboard', 'session', made.json.id, '--mode', 'live'], baseEnv({ DATABASE_URL: h.databaseUrl! }));
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('live mode is not enabled');
  });

  it('ends with its key, and at sign-out', async () => {
    const tenant = await h.newTenant();
    const visitor = await signedIn(tenant.testKey);
    expect((await visitor.get('/dashboard/balance')).status).toBe(200);
    const out = await visitor.post('/dashboard/sign-out');
    expect(out.location).toBe('/dashboard/sign-in');
    expect((await visitor.get('/dashboard/balance')).location).toBe('/dashboard/sign-in');

    const again = await signedIn(tenant.testKey);
    const [key] = (await listKeys(h.db, tenant.accountId)).filter((k) => !k.livemode);
    await revokeKey(h.db, key!.id);
    const gone = await again.get('/dashboard/balance');
    expect(gone.status).toBe(303);
    expect(gone.location).toBe('/dashboard/sign-in');
  });

  it('marks the cookie Secure behind a TLS terminator (PUBLIC_BASE_URL https)', async () => {
    const service = await h.startService({ overrides: { publicBaseUrl: 'https://pay.example.com' } });
    const page = await fetch(`${service.url}/dashboard/sign-in`);
    expect(page.headers.getSetCookie()[0]).toMatch(/HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
  });

  it('is not part of the API document', async () => {
    const doc = (await h.api.get('/v1/openapi.json')).body;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/dashboard'))).toEqual([]);
  });
});

describe('dashboard pages', () => {
  it('renders every page, escaping what merchants and customers typed', async () => {
    const order = await created(h.api, '/v1/payment-orders', orderBody({ reference: '<b>ref</b>', description: '"><script>alert(1)</script>' }));
    const visitor = await signedIn();
    for (const page of ['payment-orders', 'payments', 'customers', 'payouts', 'beneficiaries', 'mandates', 'balance', 'events', 'webhook-endpoints', 'routing']) {
      const res = await visitor.get(`/dashboard/${page}`);
      expect(res.status, `${page}: ${res.text.slice(0, 300)}`).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    }
    const detail = await visitor.get(`/dashboard/payment-orders/${order.id}`);
    expect(detail.text).toContain('&lt;b&gt;ref&lt;/b&gt;');
    expect(detail.text).not.toContain('<script>');
    expect((await visitor.get('/dashboard/payments?status=nonsense')).status).toBe(400);
    expect((await visitor.get(`/dashboard/search?q=${encodeURIComponent('<b>ref</b>')}`)).location).toBe(`/dashboard/payment-orders/${order.id}`);
  });

  it("shows a payment's routing explanation, and the window's authorisation rates on the routing page", async () => {
    const tenant = await h.newTenant();
    const visitor = await signedIn(tenant.testKey);
    const { payment } = await orderAndPay(tenant.api, CARDS.processorError);
    const page = (await visitor.get(`/dashboard/payments/${payment.id}`)).text;
    const section = page.slice(page.indexOf('<h2>Routing</h2>'), page.indexOf('<h2>Refunds</h2>'));
    expect(section).toContain('<dt>Strategy</dt><dd>priority</dd>');
    expect(section).toContain('<dt>Chosen</dt><dd>simulator_b</dd>');
    expect(section).toMatch(/<td[^>]*>simulator_a<\/td>/);
    const routing = (await visitor.get('/dashboard/routing')).text;
    expect(routing).toContain('Authorisation rates since');
    // simulator_a failed once, simulator_b authorised once.
    expect(routing).toContain('0 (0.0%)');
    expect(routing).toContain('1 (100.0%)');
  });

  it('creates, tests, rotates and disables a webhook endpoint', async () => {
    const receiver = await h.receiver();
    const visitor = await signedIn();
    await visitor.get('/dashboard/webhook-endpoints');
    const made = await visitor.post('/dashboard/webhook-endpoints', { url: receiver.url, enabled_events: 'payment.* refund.*' });
    expect(made.status).toBe(201);
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(made.text)![0];
    const id = /we_[0-9a-z]{26}/.exec(made.text)![0];
    expect((await h.api.get(`/v1/webhook-endpoints/${id}`)).body.enabled_events).toEqual(['payment.*', 'refund.*']);

    await visitor.get(`/dashboard/webhook-endpoints/${id}`);
    const tested = await visitor.post(`/dashboard/webhook-endpoints/${id}/test`, { scenario: 'deliver' });
    expect(tested.status, tested.text).toBe(200);
    expect(tested.text).toContain('s-passed');
    expect(receiver.requests).toHaveLength(1);

    await visitor.get(`/dashboard/webhook-endpoints/${id}`);
    const rotated = await visitor.post(`/dashboard/webhook-endpoints/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(/whsec_[A-Za-z0-9+/=]+/.exec(rotated.text)![0]).not.toBe(secret);

    await visitor.get(`/dashboard/webhook-endpoints/${id}`);
    expect((await visitor.post(`/dashboard/webhook-endpoints/${id}/status`, { status: 'disabled' })).status).toBe(303);
    expect((await h.api.get(`/v1/webhook-endpoints/${id}`)).body.status).toBe('disabled');
  });

  it('funds the test balance, settles a payout and a mandate, and shows them', async () => {
    const tenant = await h.newTenant();
    const visitor = await signedIn(tenant.testKey);
    await visitor.get('/dashboard/balance');
    expect((await visitor.post('/dashboard/balance/fund', { amount: '120.50', currency: 'EUR' })).location).toBe('/dashboard/balance?notice=funded');
    expect((await tenant.api.get('/v1/balance')).body.available).toEqual([{ currency: 'EUR', amount: 12050 }]);
    expect((await visitor.get('/dashboard/balance')).text).toContain('120.50 EUR');

    const beneficiary = await newBeneficiary(tenant.api, ENDINGS.pending);
    const sent = (await payout(tenant.api, beneficiary.id, 1000)).body;
    await visitor.get(`/dashboard/payouts/${sent.id}`);
    expect((await visitor.post(`/dashboard/payouts/${sent.id}/resolve`, { outcome: 'paid' })).status).toBe(303);
    expect((await tenant.api.get(`/v1/payouts/${sent.id}`)).body.status).toBe('paid');
    expect((await visitor.get('/dashboard/beneficiaries')).text).toContain(beneficiary.id);

    const mandate = await newMandate(tenant.api, 'sepa_core', ENDINGS.pending);
    await visitor.get(`/dashboard/mandates/${mandate.id}`);
    expect((await visitor.post(`/dashboard/mandates/${mandate.id}/resolve`, { outcome: 'active' })).status).toBe(303);
    expect((await tenant.api.get(`/v1/mandates/${mandate.id}`)).body.status).toBe('active');
    expect((await visitor.get(`/dashboard/mandates/${mandate.id}`)).text).toContain('mandate.active');
  });

  it('answers 404 for every page and action on another account\'s or the other mode\'s objects', async () => {
    const owner = await h.newTenant();
    await fund(owner.api, 10_000);
    const receiver = await h.receiver();
    const endpoint = await created(owner.api, '/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['*'] });
    const { order, payment } = await orderAndPay(owner.api);
    const pendingPayment = (await orderAndPay(owner.api, CARDS.pending)).payment;
    const beneficiary = await newBeneficiary(owner.api, ENDINGS.pending);
    const sent = (await payout(owner.api, beneficiary.id, 1000)).body;
    const mandate = await newMandate(owner.api, 'sepa_core', ENDINGS.pending);
    const [event] = (await owner.api.get('/v1/events?limit=1')).body.data;
    const pages = [`payment-orders/${order.id}`, `payments/${payment.id}`, `payouts/${sent.id}`, `mandates/${mandate.id}`, `events/${event.id}`, `webhook-endpoints/${endpoint.id}`];
    const actions: [string, Record<string, string>][] = [
      [`payments/${payment.id}/refund`, { amount: '1.00' }],
      [`payments/${payment.id}/capture`, { amount: '1.00' }],
      [`payments/${payment.id}/cancel`, {}],
      [`payments/${pendingPayment.id}/resolve`, { outcome: 'succeeded' }],
      [`payment-orders/${order.id}/cancel`, {}],
      [`payouts/${sent.id}/resolve`, { outcome: 'paid' }],
      [`mandates/${mandate.id}/resolve`, { outcome: 'active' }],
      [`events/${event.id}/redeliver`, {}],
      [`webhook-endpoints/${endpoint.id}/status`, { status: 'disabled' }],
      [`webhook-endpoints/${endpoint.id}/rotate-secret`, {}],
    ];
    const stranger = await h.newTenant();
    for (const [visitor, live] of [[await signedIn(owner.liveKey), true], [await signedIn(stranger.testKey), false]] as const) {
      for (const page of pages) expect((await visitor.get(`/dashboard/${page}`)).status, page).toBe(404);
      for (const [action, form] of actions) {
        await visitor.get('/dashboard/webhook-endpoints'); // a page with a form: its CSRF token and a fresh idempotency key
        // Test helpers refuse a live session outright (403), as they refuse a live key.
        expect((await visitor.post(`/dashboard/${action}`, form)).status, action).toBe(live && action.endsWith('/resolve') ? 403 : 404);
      }
    }
    expect((await owner.api.get(`/v1/refunds?payment=${payment.id}`)).body.data).toHaveLength(0);
    expect((await owner.api.get(`/v1/payments/${pendingPayment.id}`)).body.status).toBe('pending');
    expect((await owner.api.get(`/v1/payouts/${sent.id}`)).body.status).not.toBe('paid');
    expect((await owner.api.get(`/v1/mandates/${mandate.id}`)).body.status).toBe('pending');
    expect((await owner.api.get(`/v1/webhook-endpoints/${endpoint.id}`)).body).toMatchObject({ status: 'enabled', previous_secret_expires_at: null });
    expect(receiver.requests).toHaveLength(0);
  });

  it('captures an authorised payment in parts with its capture and void buttons, and lists the captures', async () => {
    const { payment } = await orderAndPay(h.api, CARDS.success, { amount: 5000, capture_method: 'manual' });
    const visitor = await signedIn();
    const page = await visitor.get(`/dashboard/payments/${payment.id}`);
    expect(page.text).toContain(`action="/dashboard/payments/${payment.id}/capture"`);
    expect(page.text).toContain(`action="/dashboard/payments/${payment.id}/cancel"`);
    expect(page.text).toContain('Void the authorisation');
    expect(page.text).toContain('No captures.');
    const first = await visitor.post(`/dashboard/payments/${payment.id}/capture`, { amount: '20.00', final_capture: 'false' });
    expect(first.location).toBe(`/dashboard/payments/${payment.id}?notice=captured`);
    expect((await h.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'requires_capture', amount_captured: 2000, amount_capturable: 3000 });
    const after = await visitor.get(`/dashboard/payments/${payment.id}`);
    const [capture] = (await h.api.get(`/v1/payments/${payment.id}`)).body.captures;
    expect(after.text).toContain(capture.id);
    expect(after.text).toContain('30.00');
    // Too much: the API's words, nothing taken.
    const refused = await visitor.post(`/dashboard/payments/${payment.id}/capture`, { amount: '40.00' });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('above what the authorisation still holds');
    await visitor.get(`/dashboard/payments/${payment.id}`);
    await visitor.post(`/dashboard/payments/${payment.id}/capture`, { amount: '30.00', final_capture: 'true' });
    expect((await h.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'succeeded', amount_captured: 5000 });
    const done = await visitor.get(`/dashboard/payments/${payment.id}`);
    expect(done.text).not.toContain(`/dashboard/payments/${payment.id}/capture"`);
    expect(done.text).not.toContain('Void the authorisation');
  });

  it('voids an authorised payment with its void button: canceled, its order open again', async () => {
    const { order, payment } = await orderAndPay(h.api, CARDS.success, { amount: 5000, capture_method: 'manual' });
    const visitor = await signedIn();
    await visitor.get(`/dashboard/payments/${payment.id}`);
    const voided = await visitor.post(`/dashboard/payments/${payment.id}/cancel`, {});
    expect(voided.location).toBe(`/dashboard/payments/${payment.id}?notice=voided`);
    expect((await h.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'canceled', cancellation_reason: 'requested_by_customer', amount_captured: 0 });
    expect((await h.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    expect((await visitor.get(`/dashboard/payments/${payment.id}`)).text).not.toContain('Void the authorisation');
  });

  it('shows a refused refund as the API words it, and refunds nothing', async () => {
    const { payment } = await orderAndPay(h.api);
    const visitor = await signedIn();
    await visitor.get(`/dashboard/payments/${payment.id}`);
    const refused = await visitor.post(`/dashboard/payments/${payment.id}/refund`, { amount: '500.00' });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('above what remains refundable');
    expect((await h.api.get(`/v1/refunds?payment=${payment.id}`)).body.data).toHaveLength(0);
  });
});
