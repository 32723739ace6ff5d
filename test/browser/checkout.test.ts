// The hosted checkout over HTTP (docs/checkout-and-dashboard.md): checkout_url on every order (random, not the id),
// the page (merchant, amount, currency, description; strict CSP; no script but its own), payment
// through the API's own path (routing, idempotency, events), decline and retry, success_url and
// cancel_url, orders that take no card, CSRF, and isolation between orders, accounts and modes.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { expectError, LogCapture } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';
import { CARDS, eventTypesOf, newOrder, pay } from '../support/payments.js';
import { MAX_PAYMENTS_PER_ORDER } from '../../src/domain/checkout/service.js';
import { CARD, payThroughCheckout, resolve, textOf, visit } from '../support/checkout.js';
import { newCustomer } from '../support/customers.js';

const s = useService({ tenantName: 'Acme Coffee & Co' });
const SHOP = { success_url: 'https://shop.example.com/thanks?cart=7', cancel_url: 'https://shop.example.com/cart' };

const paymentsOf = async (orderId: string) => (await s.api.get(`/v1/payments?payment_order=${orderId}&limit=100`)).body.data as any[];

describe('checkout_url', () => {
  it('is on the created, retrieved and listed order: PUBLIC_BASE_URL base, a random token that is not the id', async () => {
    const order = await newOrder(s.api, { ...SHOP, description: 'Two bags of beans' });
    const token = order.checkout_url.slice(`${s.url}/checkout/`.length);
    expect(order.checkout_url).toBe(`${s.url}/checkout/${token}`);
    // The order's account (base64url of its 16 bytes), then 32 random bytes.
    const account = Buffer.from(parseId('acct', s.tenant.accountId)!.replace(/-/g, ''), 'hex').toString('base64url');
    expect(token).toMatch(new RegExp(`^${account}\\.[A-Za-z0-9_-]{43}$`));
    const uuid = parseId('ord', order.id)!;
    for (const part of [order.id, order.id.slice(4), uuid, uuid.replace(/-/g, '')]) expect(token).not.toContain(part);
    expect(order).toMatchObject(SHOP);
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.checkout_url).toBe(order.checkout_url);
    const listed = (await s.api.get('/v1/payment-orders?limit=5')).body.data.find((o: any) => o.id === order.id);
    expect(listed.checkout_url).toBe(order.checkout_url);
    const other = await newOrder(s.api);
    expect(other.checkout_url).not.toBe(order.checkout_url);
    expect(other).toMatchObject({ success_url: null, cancel_url: null });
  });

  it('is built from PUBLIC_BASE_URL, never from the Host header', async () => {
    const service = await s.startService({ overrides: { publicBaseUrl: 'https://pay.example.com/base' } });
    const res = await fetch(`${service.url}/v1/payment-orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.tenant.testKey}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'application/json', host: 'evil.example.com' },
      body: JSON.stringify({ amount: 500, currency: 'EUR', reference: 'r', customer: { email: 'a@example.com' } }),
    });
    expect((await res.json()).checkout_url).toMatch(/^https:\/\/pay\.example\.com\/base\/checkout\/[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
  });

  it('refuses success_url and cancel_url that are not absolute http(s) URLs, and http in live mode', async () => {
    expectError(await s.api.post('/v1/payment-orders', { ...orderBase(), success_url: 'javascript:alert(1)' }), 400, 'parameter_invalid', { param: 'success_url' });
    expectError(await s.api.post('/v1/payment-orders', { ...orderBase(), cancel_url: '/relative' }), 400, 'parameter_invalid', { param: 'cancel_url' });
    expectError(await s.live.post('/v1/payment-orders', { ...orderBase(), success_url: 'http://shop.example.com/' }), 400, 'parameter_invalid', { param: 'success_url' });
  });
});

function orderBase() {
  return { amount: 1999, currency: 'EUR', reference: `ref-${crypto.randomUUID()}`, customer: { email: 'jane@example.com' } };
}

describe('the page', () => {
  it('shows the merchant, amount, currency and description under a strict CSP, with no script but its own', async () => {
    const order = await newOrder(s.api, { amount: 123456, description: 'Beans <b>& more</b>', ...SHOP });
    const page = await visit(order.checkout_url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const text = textOf(page.html);
    expect(text).toContain('Acme Coffee & Co');
    expect(text).toContain('1,234.56 EUR');
    expect(page.html).toContain('Beans &lt;b&gt;&amp; more&lt;/b&gt;');
    expect(text).toContain('Test mode');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).not.toMatch(/unsafe|https?:/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.html).not.toMatch(/<script[^>]+src=|<link|https?:\/\/(?!shop\.example\.com)/);
    // The form works without the script: labelled fields posted to the page itself.
    for (const name of ['number', 'expiry', 'cvc']) expect(page.html).toMatch(new RegExp(`<label for="${name}">[\\s\\S]*?<input id="${name}" name="${name}"`));
    expect(page.html).toContain(`action="/checkout/${order.checkout_url.split('/').pop()}"`);
    expect(page.html).toContain(`href="${SHOP.cancel_url}"`);
    expect(page.cookie).toMatch(/^checkout_csrf=/);
    expect(page.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Lax/);
  });

  it('answers 404 for an unknown or malformed token, and for nothing else than the token', async () => {
    const order = await newOrder(s.api);
    const token = order.checkout_url.split('/').pop();
    for (const bad of ['x'.repeat(43), token.slice(0, -1), order.id, `${token}x`]) {
      const res = await visit(`${s.url}/checkout/${encodeURIComponent(bad)}`);
      expect(res.status).toBe(404);
      expect(textOf(res.html)).toContain('Checkout not found');
    }
  });
});

describe('paying', () => {
  it('with the success card: 303 to the page, which says paid and leads to success_url; the API path made it', async () => {
    const order = await newOrder(s.api, SHOP);
    const { answer } = await payThroughCheckout(order.checkout_url);
    expect(answer.status, answer.html).toBe(303);
    const [payment] = await paymentsOf(order.id);
    expect(payment).toMatchObject({ status: 'succeeded', amount: order.amount, payment_method: { card: { last4: '4242' } }, return_url: order.checkout_url });
    expect(resolve(order.checkout_url, answer.location)).toBe(`${order.checkout_url}?payment=${payment.id}`);
    const after = await visit(resolve(order.checkout_url, answer.location));
    expect(textOf(after.html)).toContain('Payment received');
    expect(after.html).toContain(`href="${SHOP.success_url.replace('&', '&amp;')}"`);
    expect(after.html).not.toContain('name="number"');
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: order.amount });
    expect(await eventTypesOf(s.api, payment.id)).toEqual(['payment.created', 'payment.succeeded']);
    expect(await eventTypesOf(s.api, order.id)).toEqual(['payment_order.created', 'payment_order.processing', 'payment_order.paid']);
  });

  it("a manual order's checkout authorises only: the page says the amount is held; the merchant's capture pays the order", async () => {
    const order = await newOrder(s.api, { ...SHOP, capture_method: 'manual' });
    const { answer } = await payThroughCheckout(order.checkout_url);
    expect(answer.status, answer.html).toBe(303);
    const [payment] = await paymentsOf(order.id);
    expect(payment).toMatchObject({ status: 'requires_capture', capture_method: 'manual', amount_capturable: order.amount, amount_captured: 0 });
    const after = await visit(resolve(order.checkout_url, answer.location));
    expect(textOf(after.html)).toContain('Payment authorised');
    expect(textOf(after.html)).toContain('held on your card');
    expect(after.html).toContain(`href="${SHOP.success_url.replace('&', '&amp;')}"`);
    expect(after.html).not.toContain('name="number"');
    expect(await eventTypesOf(s.api, payment.id)).toEqual(['payment.created', 'payment.authorized']);
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('processing');
    const captured = await s.api.post(`/v1/payments/${payment.id}/capture`, {});
    expect(captured.status, captured.text).toBe(201);
    expect(textOf((await visit(order.checkout_url)).html)).toContain('Payment received');
  });

  it('the same form sent twice pays once and answers the same', async () => {
    const order = await newOrder(s.api);
    const { page, form, answer } = await payThroughCheckout(order.checkout_url);
    const again = await visit(order.checkout_url, { cookie: page.cookie, form });
    expect(again.status).toBe(303);
    expect(again.location).toBe(answer.location);
    const payments = await paymentsOf(order.id);
    expect(payments).toHaveLength(1);
    expect(s.service.simulator().chargeRequests.get(payments[0].id)).toBe(1);
  });

  it('a decline says so, keeps the order open and takes another card', async () => {
    const order = await newOrder(s.api);
    const declined = await payThroughCheckout(order.checkout_url, { number: CARDS.declined });
    expect(declined.answer.status).toBe(303);
    const page = await visit(resolve(order.checkout_url, declined.answer.location), { cookie: declined.page.cookie });
    expect(textOf(page.html)).toContain('Your card was declined');
    expect(page.html).toContain('role="alert"');
    expect(page.attempt).not.toBe(declined.form.attempt);
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    const retry = await visit(order.checkout_url, { cookie: page.cookie, form: { ...CARD, csrf: page.csrf!, attempt: page.attempt! } });
    expect(retry.status).toBe(303);
    expect((await paymentsOf(order.id)).map((p) => p.status)).toEqual(['succeeded', 'failed']);
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
  });

  it('checks the card on the server: Luhn, expiry and CVC, with a message per field and nothing charged', async () => {
    const order = await newOrder(s.api);
    const { answer } = await payThroughCheckout(order.checkout_url, { number: '4242 4242 4242 4241', expiry: '01 / 20', cvc: '12' });
    expect(answer.status).toBe(422);
    const text = textOf(answer.html);
    expect(text).toContain('This card number is not valid');
    expect(text).toContain('This card has expired');
    expect(text).toContain('3-digit security code');
    expect(answer.html).not.toContain('4241');
    expect(answer.html.match(/aria-invalid="true"/g)).toHaveLength(3);
    expect(await paymentsOf(order.id)).toHaveLength(0);
    // A valid number the simulators do not know: refused by the payment service itself.
    const unknown = await payThroughCheckout(order.checkout_url, { number: '5555 5555 5555 4444' });
    expect(unknown.answer.status).toBe(400);
    expect(textOf(unknown.answer.html)).toContain('Test mode takes only test cards');
  });

  it('refuses a form without the CSRF token, with another checkout token, without the cookie or from another site', async () => {
    const order = await newOrder(s.api);
    const other = await newOrder(s.api);
    const page = await visit(order.checkout_url);
    const otherPage = await visit(other.checkout_url, { cookie: page.cookie });
    const form = { ...CARD, attempt: page.attempt!, csrf: page.csrf! };
    const attempts = [
      visit(order.checkout_url, { cookie: page.cookie, form: { ...form, csrf: '' } }),
      visit(order.checkout_url, { cookie: page.cookie, form: { ...form, csrf: otherPage.csrf! } }),
      visit(order.checkout_url, { form }),
      visit(order.checkout_url, { cookie: page.cookie, form, headers: { 'sec-fetch-site': 'cross-site' } }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      expect(textOf(res.html)).toContain('Nothing was charged');
    }
    expect(await paymentsOf(order.id)).toHaveLength(0);
  });
});

describe('saving the card (an order with setup_future_usage)', () => {
  const orderFor = async (setup_future_usage?: string) => {
    const customer = await newCustomer(s.api);
    return { customer, order: await newOrder(s.api, { customer: { id: customer.id }, ...(setup_future_usage ? { setup_future_usage } : {}) }) };
  };
  const savedOf = async (customerId: string) => (await s.api.get(`/v1/payment-methods?customer=${customerId}`)).body.data as any[];
  const BOX = /<input type="checkbox" id="save_card" name="save_card" value="yes">/;

  it('ticked: the box (never ticked in advance) says what the merchant may do; the payment saves the card for the customer', async () => {
    const { customer, order } = await orderFor('off_session');
    const page = await visit(order.checkout_url);
    expect(page.html).toMatch(BOX);
    expect(textOf(page.html)).toContain('allow Acme Coffee & Co to charge it later without me present');
    const { answer } = await payThroughCheckout(order.checkout_url, { save_card: 'yes' });
    expect(answer.status, answer.html).toBe(303);
    const [payment] = await paymentsOf(order.id);
    expect(payment).toMatchObject({ status: 'succeeded', payment_method_saved: expect.stringMatching(/^pm_/) });
    const [saved] = await savedOf(customer.id);
    expect(saved).toMatchObject({ id: payment.payment_method_saved, usage: 'off_session', status: 'active', card: { last4: '4242' } });
    expect(await eventTypesOf(s.api, saved.id)).toEqual(['payment_method.attached']);
  });

  it('unticked: the payment is made and nothing is saved', async () => {
    const { customer, order } = await orderFor('on_session');
    const page = await visit(order.checkout_url);
    expect(textOf(page.html)).toContain('it will not charge the card without me');
    const { answer } = await payThroughCheckout(order.checkout_url);
    expect(answer.status, answer.html).toBe(303);
    const [payment] = await paymentsOf(order.id);
    expect(payment).toMatchObject({ status: 'succeeded', payment_method_saved: null });
    expect(await savedOf(customer.id)).toEqual([]);
  });

  it('an order without setup_future_usage shows no box, and a box sent anyway saves nothing', async () => {
    const { customer, order } = await orderFor();
    const page = await visit(order.checkout_url);
    expect(page.html).not.toContain('save_card');
    const { answer } = await payThroughCheckout(order.checkout_url, { save_card: 'yes' });
    expect(answer.status, answer.html).toBe(303);
    expect((await paymentsOf(order.id))[0]).toMatchObject({ status: 'succeeded', payment_method_saved: null });
    expect(await savedOf(customer.id)).toEqual([]);
  });

  it('keeps the tick when the form comes back with an error; a customer deleted since: pay without saving', async () => {
    const { customer, order } = await orderFor('on_session');
    const { answer } = await payThroughCheckout(order.checkout_url, { cvc: '1', save_card: 'yes' });
    expect(answer.status).toBe(422);
    expect(answer.html).toContain('name="save_card" value="yes" checked>');
    expect((await s.api.request('DELETE', `/v1/customers/${customer.id}`)).status).toBe(200);
    const gone = await payThroughCheckout(order.checkout_url, { save_card: 'yes' });
    expect(textOf(gone.answer.html)).toContain('Untick the box to pay without saving it');
    expect((await payThroughCheckout(order.checkout_url)).answer.status).toBe(303);
    expect((await paymentsOf(order.id)).map((p) => p.status)).toEqual(['succeeded']);
  });
});

describe('card testing', () => {
  it(`an order with ${MAX_PAYMENTS_PER_ORDER} payments takes no more cards through its checkout`, async () => {
    const order = await newOrder(s.api);
    for (let i = 0; i < MAX_PAYMENTS_PER_ORDER; i++) expect((await pay(s.api, order.id, CARDS.declined)).body.status).toBe('failed');
    const { answer } = await payThroughCheckout(order.checkout_url);
    expect(answer.status).toBe(429);
    expect(textOf(answer.html)).toContain('too many payment attempts');
    expect(await paymentsOf(order.id)).toHaveLength(MAX_PAYMENTS_PER_ORDER);
  });
});

describe('orders that take no card', () => {
  it('paid: the page says so and a form sent to it pays nothing', async () => {
    const order = await newOrder(s.api);
    const first = await payThroughCheckout(order.checkout_url);
    expect(first.answer.status).toBe(303);
    const paid = await visit(order.checkout_url, { cookie: first.page.cookie });
    expect(textOf(paid.html)).toContain('Payment received');
    expect(paid.html).not.toContain('<form');
    // The form of before, sent again as a new attempt: nothing is charged, the page says paid.
    const reused = await visit(order.checkout_url, { cookie: first.page.cookie, form: { ...CARD, csrf: first.page.csrf!, attempt: 'another-attempt-1234' } });
    expect(reused.status).toBe(303);
    expect(reused.location).toBe(new URL(order.checkout_url).pathname);
    expect(await paymentsOf(order.id)).toHaveLength(1);
  });

  it('cancelled and expired: the state, a way back to cancel_url, no form', async () => {
    const cancelled = await newOrder(s.api, SHOP);
    expect((await s.api.post(`/v1/payment-orders/${cancelled.id}/cancel`)).status).toBe(200);
    const expired = await newOrder(s.api, { ...SHOP, expires_at: new Date(Date.now() + 60_000).toISOString() });
    await s.service.runWorker(Date.now() + 120_000);
    for (const [order, state] of [[cancelled, 'cancelled'], [expired, 'expired']] as const) {
      const page = await visit(order.checkout_url);
      expect(page.status).toBe(200);
      expect(textOf(page.html)).toContain(`This order ${state === 'cancelled' ? 'was cancelled' : 'has expired'}`);
      expect(page.html).not.toContain('name="number"');
      expect(page.html).toContain(`href="${SHOP.cancel_url}"`);
    }
    expect((await s.api.get(`/v1/payment-orders/${expired.id}`)).body.status).toBe('expired');
  });

  it('a live order whose checkout is not served over https takes no card', async () => {
    const order = await newOrder(s.live);
    expect(order.checkout_url.startsWith('http://')).toBe(true);
    const page = await visit(order.checkout_url);
    expect(page.status).toBe(503);
    expect(textOf(page.html)).toContain('not served over a secure connection');
    expect(page.html).not.toContain('name="number"');
    expect(textOf(page.html)).not.toContain('Test mode');
  });
});

describe('live mode behind a TLS terminator (PUBLIC_BASE_URL https)', () => {
  it('takes cards, with HSTS and a __Host- Secure cookie; the payment goes to the live route', async () => {
    const service = await s.startService({ overrides: { publicBaseUrl: 'https://pay.example.com' } });
    const res = await fetch(`${service.url}/v1/payment-orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.tenant.liveKey}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'application/json' },
      body: JSON.stringify({ ...orderBase(), success_url: 'https://shop.example.com/thanks' }),
    });
    const order = await res.json();
    expect(order).toMatchObject({ livemode: true, checkout_url: expect.stringMatching(/^https:\/\/pay\.example\.com\/checkout\//) });
    // The terminator forwards the path unchanged to the service's plain-HTTP listener.
    const page = await visit(`${service.url}${new URL(order.checkout_url).pathname}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
    expect(page.headers.get('set-cookie')).toMatch(/^__Host-checkout_csrf=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
    expect(textOf(page.html)).not.toContain('Test mode');
    expect(page.html).toContain('name="number"');
  });
});

describe('logs', () => {
  it('name the checkout token in the request line, never its value', async () => {
    const logs = new LogCapture();
    const service = await s.startService({ logs });
    const order = await newOrder(s.api);
    const token = order.checkout_url.split('/').pop();
    await payThroughCheckout(`${service.url}/checkout/${token}`);
    await expect.poll(() => logs.lines.filter((l) => JSON.parse(l).path === '/checkout/:token').length).toBe(2);
    expect(logs.text).not.toContain(token);
  });
});

describe('isolation', () => {
  it("a payment of another order, account or mode is never shown on an order's page", async () => {
    const order = await newOrder(s.api);
    const declined = await payThroughCheckout(order.checkout_url, { number: CARDS.declined });
    const declinedId = new URL(resolve(order.checkout_url, declined.answer.location)).searchParams.get('payment');
    const mine = await newOrder(s.api);
    const page = await visit(`${mine.checkout_url}?payment=${declinedId}`);
    expect(page.status).toBe(200);
    expect(textOf(page.html)).not.toContain('declined');
    const [row] = await s.query(sql`SELECT account_id, livemode FROM payment_orders WHERE checkout_token = ${mine.checkout_url.split('/').pop()}`);
    expect(row).toMatchObject({ account_id: parseId('acct', s.tenant.accountId), livemode: false });
  });
});
