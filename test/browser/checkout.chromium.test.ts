// The hosted checkout in a real browser (Debian's Chromium through playwright-core): paying with
// the success card, a decline then success, 3-D Secure completed and failed, the page of a paid
// order, the card checked as it is typed, the form without JavaScript, keyboard use, the consent box that saves the card, axe-core
// with no serious or critical violation, and the screenshots of docs/checkout-and-dashboard.md (UPDATE_SCREENSHOTS=1).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchBrowser, newContext, PHONE_VIEWPORT, screenshot } from '../support/browser.js';
import { useService } from '../support/fixtures.js';
import { CARDS, newOrder } from '../support/payments.js';
import { CHALLENGE_CARD } from '../support/payments.actions.js';
import { newCustomer } from '../support/customers.js';

const s = useService({ tenantName: 'Acme Coffee Roasters' });
const EXPIRY = `12 / ${String((new Date().getUTCFullYear() + 3) % 100).padStart(2, '0')}`;
const AXE = fs.readFileSync(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');

let browser: Browser;
/** The merchant's site: where success_url and cancel_url lead. */
let shop: http.Server;
let shopUrl: string;

beforeAll(async () => {
  if (!hasChromium) return;
  browser = await launchBrowser();
  shop = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Shop</title><h1>Shop page ${req.url}</h1>`));
  await new Promise<void>((done) => shop.listen(0, '127.0.0.1', done));
  shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((done) => (shop ? shop.close(done) : done(undefined)));
});

const order = (extra: Record<string, unknown> = {}) =>
  newOrder(s.api, { amount: 2450, description: 'Two bags of Ethiopian beans, 500 g', success_url: `${shopUrl}/thanks`, cancel_url: `${shopUrl}/cart`, ...extra });

async function fillCard(page: Page, number: string) {
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiry date').fill(EXPIRY);
  await page.getByLabel('Security code').fill('123');
}

async function pay(page: Page, number: string) {
  await fillCard(page, number);
  await page.getByRole('button', { name: /^Pay / }).click();
}

/** axe-core's serious and critical violations on the page, evaluated through the DevTools protocol: the page's CSP (rightly) refuses injected scripts. */
async function seriousViolations(page: Page) {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
  return violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical');
}

const paymentsOf = async (orderId: string) => (await s.api.get(`/v1/payments?payment_order=${orderId}`)).body.data as any[];

describe.skipIf(!hasChromium)('hosted checkout in Chromium', () => {
  it('pays with the success card, shows success and returns to success_url', async () => {
    const o = await order();
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(o.checkout_url);
    await expect.poll(() => page.getByText('Acme Coffee Roasters').first().isVisible()).toBe(true);
    expect(await page.locator('.amount').innerText()).toMatch(/24\.50\s*EUR/);
    await screenshot(page, 'checkout-desktop');
    await pay(page, '4242 4242 4242 4242');
    await page.getByRole('heading', { name: 'Payment received' }).waitFor();
    expect((await s.api.get(`/v1/payment-orders/${o.id}`)).body.status).toBe('paid');
    await page.getByRole('link', { name: 'Return to Acme Coffee Roasters' }).click();
    await page.waitForURL(`${shopUrl}/thanks`);
    await context.close();
  });

  it('a decline shows a clear message, and the same page then pays with another card', async () => {
    const o = await order();
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(o.checkout_url);
    await pay(page, CARDS.declined);
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('Your card was declined');
    await pay(page, CARDS.success);
    await page.getByRole('heading', { name: 'Payment received' }).waitFor();
    expect((await paymentsOf(o.id)).map((p) => p.status)).toEqual(['succeeded', 'failed']);
    await context.close();
  });

  for (const [answer, outcome] of [['Complete', 'succeeded'], ['Fail', 'failed']] as const) {
    it(`3-D Secure: the challenge answered "${answer}" comes back to the checkout, the payment ${outcome}`, async () => {
      const o = await order();
      const context = await newContext(browser);
      const page = await context.newPage();
      await page.goto(o.checkout_url);
      await pay(page, CHALLENGE_CARD);
      await page.getByRole('heading', { name: 'Simulated 3-D Secure' }).waitFor();
      await page.getByRole('button', { name: answer }).click();
      await page.waitForURL((url) => url.href.startsWith(`${o.checkout_url}?payment=pay_`));
      if (outcome === 'succeeded') {
        await page.getByRole('heading', { name: 'Payment received' }).waitFor();
      } else {
        await expect.poll(() => page.getByRole('alert').innerText()).toContain('Your bank could not confirm the payment');
        expect(await page.getByLabel('Card number').isVisible()).toBe(true);
      }
      const [payment] = await paymentsOf(o.id);
      expect(payment.status).toBe(outcome);
      await context.close();
    });
  }

  it("a paid order's checkout opened again shows it paid and takes no card", async () => {
    const o = await order();
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(o.checkout_url);
    await pay(page, CARDS.success);
    await page.getByRole('heading', { name: 'Payment received' }).waitFor();
    const again = await (await newContext(browser)).newPage();
    await again.goto(o.checkout_url);
    await again.getByRole('heading', { name: 'Payment received' }).waitFor();
    expect(await again.locator('input').count()).toBe(0);
    expect(await paymentsOf(o.id)).toHaveLength(1);
    await again.context().close();
    await context.close();
  });

  it('checks the card as it is typed, and sends nothing while it is wrong', async () => {
    const o = await order();
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(o.checkout_url);
    await page.getByLabel('Card number').fill('4242 4242 4242 4241');
    await page.getByLabel('Expiry date').focus();
    await expect.poll(() => page.locator('#number-error').innerText()).toContain('not valid');
    expect(await page.getByLabel('Card number').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Card number').fill('4242 4242 4242 4242');
    await expect.poll(() => page.locator('#number-error').innerText()).toBe('');
    await page.getByLabel('Expiry date').fill('01 / 20');
    await page.getByRole('button', { name: /^Pay / }).click();
    await expect.poll(() => page.locator('#expiry-error').innerText()).toContain('expired');
    expect(await page.locator('#cvc-error').innerText()).toContain('security code');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('expiry');
    expect(await paymentsOf(o.id)).toHaveLength(0);
    await context.close();
  });

  it('works with the keyboard alone, and without JavaScript', async () => {
    const o = await order();
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(o.checkout_url);
    await page.getByLabel('Card number').focus();
    await page.keyboard.type('4242424242424242');
    await page.keyboard.press('Tab');
    await page.keyboard.type(EXPIRY);
    await page.keyboard.press('Tab');
    await page.keyboard.type('123');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Payment received' }).waitFor();
    expect((await s.api.get(`/v1/payment-orders/${o.id}`)).body.status).toBe('paid');
    await context.close();
  });

  it('saves the card when the consent box is ticked, with the keyboard alone and without JavaScript; the box passes axe-core', async () => {
    const customer = await newCustomer(s.api);
    const o = await order({ customer: { id: customer.id }, setup_future_usage: 'off_session' });
    const withScript = await (await newContext(browser)).newPage();
    await withScript.goto(o.checkout_url);
    expect(await seriousViolations(withScript)).toEqual([]);
    await fillCard(withScript, '4242 4242 4242 4242');
    await screenshot(withScript, 'checkout-consent');
    await withScript.context().close();
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(o.checkout_url);
    await fillCard(page, '4242 4242 4242 4242');
    const box = page.getByLabel(/charge it later without me present/);
    expect(await box.isChecked()).toBe(false);
    await page.getByLabel('Security code').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    expect(await box.isChecked()).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Payment received' }).waitFor();
    const [payment] = await paymentsOf(o.id);
    expect(payment.payment_method_saved).toMatch(/^pm_/);
    await context.close();
  });

  it('axe-core finds no serious or critical violation, on desktop and phone widths; the phone screenshot', async () => {
    const o = await order();
    for (const viewport of [undefined, PHONE_VIEWPORT]) {
      const context = await newContext(browser, viewport);
      const page = await context.newPage();
      await page.goto(o.checkout_url);
      expect(await seriousViolations(page)).toEqual([]);
      // Readable on a phone: nothing wider than the screen.
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      if (viewport) {
        await fillCard(page, '4242 4242 4242 4242');
        await screenshot(page, 'checkout-phone');
      }
      await context.close();
    }
  });
});
