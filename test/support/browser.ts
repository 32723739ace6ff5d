// Browser tests drive Debian's Chromium (installed by .ci/run with apt) through playwright-core,
// which brings no browser of its own. One browser per test file; each test opens its own context
// so cookies never leak between tests.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where browser tests write the screenshots the docs show (docs/screenshots/). */
export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, '../../docs/screenshots');

/** Without Chromium the browser tests skip locally; in CI (.ci/run installs it) they must run. */
export const hasChromium = fs.existsSync(CHROMIUM_PATH) || process.env.CI === 'true';

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // No sandbox: CI runs as root in a container-like machine, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage', '--no-first-run'],
  });
}

export const PHONE_VIEWPORT = { width: 390, height: 844 };
export const DESKTOP_VIEWPORT = { width: 1280, height: 900 };

export async function newContext(browser: Browser, viewport = DESKTOP_VIEWPORT): Promise<BrowserContext> {
  return browser.newContext({ viewport, javaScriptEnabled: true });
}

/** Screenshots are refreshed only when asked (UPDATE_SCREENSHOTS=1), so test runs leave the tree clean. */
export async function screenshot(page: import('playwright-core').Page, name: string): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}
