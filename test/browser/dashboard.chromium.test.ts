// The merchant dashboard in a real browser (Chromium through playwright-core): a person signs in
// with a key, finds a payment by its order's reference, refunds part of it, follows the refund's
// event to its failed delivery and resends it to a local receiver, and settles a pending test
// payment. UPDATE_SCREENSHOTS=1 refreshes the docs' screenshots.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { useService } from '../support/fixtures.js';
import { created, orderBody } from '../support/helpers.js';
import { hasChromium, launchBrowser, newContext, screenshot } from '../support/browser.js';
import { CARDS, orderAndPay } from '../support/payments.js';
import { deliverAt, webhookOptions } from '../support/webhooks.js';

const h = useService();
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page (evaluated by the driver, outside the page's CSP). */
async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe.run());
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.nodes.length})`);
}
let browser: Browser;

beforeAll(async () => {
  if (hasChromium) browser = await launchBrowser();
}, 60_000);
afterAll(async () => browser?.close());

/** A new browser context signed in with `key`; the page is on the dashboard's home. */
async function signedIn(key: string): Promise<Page> {
  const context = await newContext(browser);
  const page = await context.newPage();
  await page.goto(`${h.url}/dashboard`);
  expect(page.url()).toContain('/dashboard/sign-in');
  await page.getByLabel('Secret key').fill(key);
  await page.getByRole('button', { name: 'Sign in with key' }).click();
  await page.waitForURL('**/dashboard/payments');
  expect(page.url()).not.toContain('sk_');
  return page;
}

// Generous: the machine may be busy, and each test starts browser contexts and signs in.
describe.skipIf(!hasChromium)('dashboard in a browser', { timeout: 120_000 }, () => {
  it('finds a payment by reference, refunds part of it, and resends the refund event\'s failed delivery', async () => {
    const receiver = await h.receiver();
    let failing = true;
    receiver.answer = () => ({ status: failing ? 500 : 200 });
    await created(h.api, '/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['refund.*'] });
    const reference = `order-${crypto.randomUUID().slice(0, 8)}`;
    const { payment } = await orderAndPay(h.api, CARDS.success, { reference, amount: 1999, currency: 'EUR' });

    const page = await signedIn(h.tenant.testKey);
    expect(await page.getByRole('status').first().innerText()).toContain('Test mode');

    await page.getByLabel('Search by reference or id').fill(reference);
    await page.getByRole('button', { name: 'Search' }).click();
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe(`Payment order ${reference}`);
    await page.getByRole('link', { name: payment.id }).click();
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Payment 19.99 EUR');

    await page.getByLabel('Amount (EUR)').fill('5.00');
    await page.getByRole('button', { name: 'Refund' }).click();
    expect(await page.locator('.notice').innerText()).toContain('Refund requested');
    const refunds = (await h.api.get(`/v1/refunds?payment=${payment.id}`)).body.data;
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ amount: 500, currency: 'EUR' });
    expect(await page.locator('dd', { hasText: '5.00 EUR' }).isVisible()).toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);
    await screenshot(page, 'dashboard-payment');

    // The worker sends the refund's events; the receiver refuses them.
    await deliverAt(h.database, webhookOptions());
    expect(receiver.requests.length).toBeGreaterThan(0);
    await page.reload();
    await page.locator('tr', { hasText: 'refund.created' }).getByRole('link').click();
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Event refund.created');
    const eventId = page.url().split('/').pop()!;
    const failed = page.locator('tbody tr', { hasText: 'failed' }).first();
    expect(await failed.innerText()).toContain('500');
    expect(await failed.innerText()).toContain(' ms');

    failing = false;
    await page.getByRole('button', { name: 'Resend' }).click();
    expect(await page.locator('.notice').innerText()).toContain('Queued again');
    await deliverAt(h.database, webhookOptions());
    expect(receiver.forEvent(eventId).length).toBeGreaterThanOrEqual(2);
    await page.reload();
    const resent = page.locator('tbody tr', { hasText: '(resent)' });
    expect(await resent.innerText()).toContain('succeeded');
    expect(await resent.innerText()).toContain('200');
    expect(await accessibilityProblems(page)).toEqual([]);
    await screenshot(page, 'dashboard-event');
  });

  it('settles a pending payment with the test helper', async () => {
    const { payment } = await orderAndPay(h.api, CARDS.pending);
    expect(payment.status).toBe('pending');
    const page = await signedIn(h.tenant.testKey);
    await page.goto(`${h.url}/dashboard/payments/${payment.id}`);
    await page.getByLabel('Test helper: settle as').selectOption('succeeded');
    await page.getByRole('button', { name: 'Resolve' }).click();
    expect(await page.locator('.notice').innerText()).toContain('settled');
    expect((await h.api.get(`/v1/payments/${payment.id}`)).body.status).toBe('succeeded');
    await page.goto(`${h.url}/dashboard/payments`);
    expect(await page.locator('tr', { hasText: payment.id }).innerText()).toContain('succeeded');
    await screenshot(page, 'dashboard-payments');
  });

  it('shows one mode only: a live session cannot see test objects, nor a test session live ones', async () => {
    const { payment } = await orderAndPay(h.api);
    const liveOrder = await created(h.live, '/v1/payment-orders', orderBody());
    const live = await signedIn(h.tenant.liveKey);
    expect(await live.getByRole('status').first().innerText()).toContain('Live mode');
    expect(await live.locator('body').innerText()).not.toContain(payment.id);
    const hidden = await live.goto(`${h.url}/dashboard/payments/${payment.id}`);
    expect(hidden?.status()).toBe(404);
    expect(await live.locator('.error').innerText()).toContain(payment.id);
    await live.goto(`${h.url}/dashboard/payment-orders/${liveOrder.id}`);
    expect(await live.getByRole('heading', { level: 1 }).innerText()).toContain(liveOrder.reference);
    // No test helpers in live mode.
    await live.goto(`${h.url}/dashboard/balance`);
    expect(await live.getByRole('button', { name: 'Fund' }).count()).toBe(0);
    expect(await accessibilityProblems(live)).toEqual([]);

    const test = await signedIn(h.tenant.testKey);
    expect((await test.goto(`${h.url}/dashboard/payment-orders/${liveOrder.id}`))?.status()).toBe(404);
    const other = await h.newTenant();
    const stranger = await signedIn(other.testKey);
    expect((await stranger.goto(`${h.url}/dashboard/payments/${payment.id}`))?.status()).toBe(404);
    expect(await stranger.locator('body').innerText()).not.toContain('exists in');
  });

  it('refuses a form without its CSRF token, and sets a strict session cookie and CSP', async () => {
    const { payment } = await orderAndPay(h.api);
    const page = await signedIn(h.tenant.testKey);
    const response = await page.goto(`${h.url}/dashboard/payments/${payment.id}`);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'none'");
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ name: 'dashboard_session', httpOnly: true, sameSite: 'Strict', path: '/dashboard', secure: false });

    const idem = await page.locator('input[name=idem]').first().inputValue();
    const forged = await page.request.post(`${h.url}/dashboard/payments/${payment.id}/refund`, { form: { idem, amount: '1.00' } });
    expect(forged.status()).toBe(403);
    const wrong = await page.request.post(`${h.url}/dashboard/payments/${payment.id}/refund`, { form: { idem, amount: '1.00', csrf: 'x'.repeat(43) } });
    expect(wrong.status()).toBe(403);
    expect((await h.api.get(`/v1/refunds?payment=${payment.id}`)).body.data).toHaveLength(0);

    // The real form, submitted twice with its one idempotency key, refunds once.
    const csrf = await page.locator('input[name=csrf]').first().inputValue();
    for (let i = 0; i < 2; i++) {
      const res = await page.request.post(`${h.url}/dashboard/payments/${payment.id}/refund`, { form: { csrf, idem, amount: '1.00' }, maxRedirects: 0 });
      expect(res.status()).toBe(303);
    }
    expect((await h.api.get(`/v1/refunds?payment=${payment.id}`)).body.data).toHaveLength(1);

    const signIn = await page.request.post(`${h.url}/dashboard/sign-in`, { form: { key: h.tenant.testKey } });
    expect(signIn.status()).toBe(403);
    const fresh = await (await newContext(browser)).newPage();
    await fresh.goto(`${h.url}/dashboard/sign-in`);
    expect(await accessibilityProblems(fresh)).toEqual([]);
  });
});
