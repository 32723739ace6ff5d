// The API reference at /docs: served by the service itself (no CDN, no key), with guides whose
// tables come from the code that decides them, and a document whose every response is described
// and whose examples make a working request.
import { describe, expect, it } from 'vitest';
import { TEST_CARDS } from '../../src/connectors/simulator/cards.js';
import { ERROR_CATALOGUE } from '../../src/kernel/errors.js';
import { TEST_BANK_ACCOUNTS } from '../../src/domain/bank-accounts/test-accounts.js';
import { useService } from '../support/fixtures.js';

const h = useService();

type Operation = {
  parameters?: { in: string; name: string; required?: boolean; example?: unknown; schema?: { examples?: unknown[] } }[];
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
  responses: Record<string, { description?: string }>;
};

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
      // Read to the end: a response its client never reads stays in flight, and the service's
      // shutdown waits out its grace period for it (the file's teardown then timed out in CI).
      expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
    // The bare path redirects to the page; no key is needed for either.
    const bare = await fetch(`${h.url}/docs`, { redirect: 'manual' });
    expect(bare.status).toBeLessThan(400);
    await bare.arrayBuffer();
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

  it('describes every response, titles every tag and gives every parameter that needs a value an example', async () => {
    const served = await (await fetch(`${h.url}/v1/openapi.json`)).json();
    const undescribed: string[] = [];
    const withoutExample: string[] = [];
    for (const [path, item] of Object.entries(served.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (!response.description || response.description === 'Default Response') undescribed.push(`${method} ${path} ${status}`);
        }
        for (const parameter of operation.parameters ?? []) {
          const needsValue = parameter.required || (parameter.in === 'header' && parameter.name === 'idempotency-key');
          if (needsValue && parameter.example === undefined && parameter.schema?.examples?.[0] === undefined) withoutExample.push(`${method} ${path} ${parameter.in} ${parameter.name}`);
        }
      }
    }
    expect(undescribed).toEqual([]);
    expect(withoutExample).toEqual([]);
    for (const tag of served.tags as { name: string }[]) expect(tag.name).toMatch(/^[A-Z][a-z]+( [a-z]+)*$/);
  });

  it('creates a payment order from nothing but the examples of the document and a real key', async () => {
    const served = await (await fetch(`${h.url}/v1/openapi.json`)).json();
    const operation: Operation = served.paths['/v1/payment-orders'].post;
    const headers: Record<string, string> = { authorization: `Bearer ${h.tenant.testKey}`, 'content-type': 'application/json' };
    for (const parameter of operation.parameters ?? []) if (parameter.in === 'header') headers[parameter.name] = String(parameter.example);
    const body = JSON.stringify(Object.values(operation.requestBody!.content['application/json']!.examples!)[0]!.value);
    const first = await fetch(`${h.url}/v1/payment-orders`, { method: 'POST', headers, body });
    expect(first.status, await first.clone().text()).toBe(201);
    // Pasted again, the same request is answered the same, not acted on twice.
    const again = await fetch(`${h.url}/v1/payment-orders`, { method: 'POST', headers, body });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await again.json()).id).toBe((await first.json()).id);
  });
});
