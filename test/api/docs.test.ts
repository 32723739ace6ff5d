// The API reference at /docs: served by the service itself (no CDN, no key), with guides whose
// tables come from the code that decides them.
import { describe, expect, it } from 'vitest';
import { TEST_CARDS } from '../../src/connectors/simulator/cards.js';
import { ERROR_CATALOGUE } from '../../src/kernel/errors.js';
import { TEST_BANK_ACCOUNTS } from '../../src/domain/bank-accounts/test-accounts.js';
import { useService } from '../support/fixtures.js';

const h = useService();

describe('GET /docs', () => {
  it('serves the reference page and its script from the service, under a CSP that allows nothing else', async () => {
    const page = await fetch(`${h.url}/docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    const html = await page.text();
    const scripts = [...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    // Every script is the service's own: a relative path, never another host.
    for (const src of scripts) expect(src).not.toMatch(/^(https?:)?\/\//);
    for (const src of scripts) {
      const script = await fetch(new URL(src, `${h.url}/docs/`));
      expect(script.status, src).toBe(200);
      expect(script.headers.get('content-type')).toMatch(/javascript/);
    }
    // The bare path redirects to the page; no key is needed for either.
    expect((await fetch(`${h.url}/docs`, { redirect: 'manual' })).status).toBeLessThan(400);
  });

  it('documents the same OpenAPI document the API serves, with its guides generated from the code', async () => {
    const served = await (await fetch(`${h.url}/v1/openapi.json`)).json();
    const shown = await (await fetch(`${h.url}/docs/openapi.json`)).json();
    expect(shown.info.description).toBe(served.info.description);
    const guides: string = served.info.description;
    for (const heading of ['## Quick start', '## Idempotency', '## Test cards and bank accounts', '## Webhooks and signature verification', '## Errors']) {
      expect(guides).toContain(heading);
    }
    for (const number of Object.keys(TEST_CARDS)) expect(guides).toContain(`\`${number}\``);
    for (const accounts of Object.values(TEST_BANK_ACCOUNTS)) expect(guides).toContain(accounts.iban.iban!);
    for (const code of Object.keys(ERROR_CATALOGUE)) expect(guides).toContain(`\`${code}\``);
    // The reference's own routes are not API operations.
    expect(Object.keys(served.paths).filter((path) => path.startsWith('/docs'))).toEqual([]);
  });
});
