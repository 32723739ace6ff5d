// The API reference at /docs in a real browser (Debian's Chromium through playwright-core), opened
// on 127.0.0.1 — where the reference tool turns its hosted features on unless told not to: no
// request leaves for another origin, no console error, none of the tool's AI, MCP, deploy, share or
// configure controls, tags titled, the quick-start code block fully visible at 1280 px, and the
// curl the page generates (and the quick start's) working when pasted with a real key.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP_VIEWPORT, hasChromium, launchBrowser, newContext } from '../support/browser.js';
import { useService } from '../support/fixtures.js';

const h = useService();
let browser: Browser;

beforeAll(async () => {
  if (hasChromium) browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/** Opens /docs, recording every request to another origin (refused, so none ever leaves) and every console error. */
async function openDocs() {
  const context = await newContext(browser, DESKTOP_VIEWPORT);
  const origin = new URL(h.url).origin;
  const foreign: string[] = [];
  const errors: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (/^(data|blob):/.test(url) || new URL(url).origin === origin) return route.continue();
    foreign.push(`${route.request().method()} ${url}`);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  await page.goto(`${h.url}/docs/`, { waitUntil: 'networkidle' });
  await page.getByRole('heading', { name: 'Quick start' }).first().waitFor();
  return { context, page, foreign, errors };
}

/** How far the text of each `pre` holding `text` reaches past the block, past the window, or scrolls inside it, in CSS pixels. */
async function overflowOf(page: Page, text: string) {
  return page.locator('pre', { hasText: text }).evaluateAll((blocks) =>
    blocks.map((pre) => {
      const box = pre.getBoundingClientRect();
      const contents = document.createRange();
      contents.selectNodeContents(pre);
      const textRight = contents.getBoundingClientRect().right;
      const scrolled = Math.max(0, ...[pre, ...pre.querySelectorAll('*')].map((e) => e.scrollWidth - e.clientWidth));
      return { width: box.width, pastBlock: Math.max(0, Math.round(textRight - box.right)), pastWindow: Math.max(0, Math.round(box.right - window.innerWidth)), scrolled };
    }),
  );
}

/**
 * Runs a shell command line as pasted into a terminal, with `$KEY` set; answers curl's HTTP status.
 * Asynchronously: the service answering it runs in this process.
 */
async function paste(commandLine: string): Promise<string> {
  const command = `${commandLine.trim()} --silent --output /dev/null --write-out '%{http_code}' --max-time 60`;
  return (await promisify(execFile)('sh', ['-c', command], { env: { ...process.env, KEY: h.tenant.testKey } })).stdout;
}

// Chromium on a loaded machine takes its time over a page this size.
const PAGE_TIMEOUT_MS = 180_000;

/** The sidebar's button opening a tag's group: "Payment orders" then "Open Group" (Scalar 1.46). */
const openGroup = (page: Page, tag: string) => page.getByRole('button', { name: new RegExp(`^${tag}\\s*Open Group$`) });

describe.skipIf(!hasChromium)('the API reference in Chromium', () => {
  it('loads without a request to another origin and without a console error, and shows no hosted feature', async () => {
    const { context, page, foreign, errors } = await openDocs();
    // What the page may load lazily (the sidebar, a section opened, a search) is loaded too.
    await openGroup(page, 'Payment orders').click();
    await page.keyboard.press('Control+k');
    await page.keyboard.type('payment');
    await page.waitForLoadState('networkidle');
    await page.keyboard.press('Escape');
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    const text = await page.locator('body').innerText();
    for (const hosted of [/Ask AI/i, /Generate MCP/i, /\bDeploy\b/, /\bShare\b/, /\bConfigure\b/, /Developer tools/i]) {
      expect(text, String(hosted)).not.toMatch(hosted);
    }
    await context.close();
  }, PAGE_TIMEOUT_MS);

  it('titles its tags and shows the quick-start block whole at 1280 px', async () => {
    const { context, page } = await openDocs();
    for (const tag of ['Payment orders', 'Webhook endpoints', 'Test helpers']) {
      expect(await openGroup(page, tag).count(), tag).toBe(1);
      expect(await openGroup(page, tag.toLowerCase()).count(), tag).toBe(0);
    }
    const blocks = await overflowOf(page, 'localhost:3000/v1/payment-orders');
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) {
      expect(block.width).toBeGreaterThan(0);
      expect(block).toMatchObject({ pastBlock: 0, pastWindow: 0, scrolled: 0 });
    }
    await context.close();
  }, PAGE_TIMEOUT_MS);

  it('generates a curl for creating a payment order that works when pasted with a real key, as does the quick start', async () => {
    const { context, page } = await openDocs();
    await openGroup(page, 'Payment orders').click();
    // Operations render as they come into view.
    await page.locator('[id$="/POST/v1/payment-orders"]').first().scrollIntoViewIfNeeded();
    const pre = page.locator('pre', { hasText: '--request POST' }).filter({ hasText: `${h.url}/v1/payment-orders \\` }).first();
    await pre.waitFor();
    const generated = await pre.innerText();
    expect(generated).toMatch(/--header 'idempotency-key: \S+'/);
    expect(await paste(generated.replace('YOUR_SECRET_TOKEN', h.tenant.testKey))).toBe('201');

    const quickStart = await page.locator('pre', { hasText: 'localhost:3000/v1/payment-orders' }).first().innerText();
    const lines = quickStart.split('\n');
    const firstCurl = lines.slice(1, lines.findIndex((line) => line.startsWith('curl -s localhost:3000/v1/payments '))).join('\n');
    expect(firstCurl).toContain('/v1/payment-orders');
    expect(await paste(firstCurl.replace('localhost:3000', new URL(h.url).host))).toBe('201');
    const orders = (await h.api.get('/v1/payment-orders?limit=10')).body.data as { reference: string }[];
    expect(orders.map((o) => o.reference).sort()).toEqual(['order-1', 'order-1042']);
    await context.close();
  }, PAGE_TIMEOUT_MS);
});
