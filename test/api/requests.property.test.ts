// Property test of the whole HTTP surface, below what fetch can send: request lines and headers
// built from valid pieces mixed with what fuzzing found answered in fastify's or Node's own words —
// malformed %-escapes in the path, path parameters over the router's 100 characters, NUL, DEL and
// other control bytes in header values and names. Every answer is below 500, carries a Request-Id,
// and every error answer is the one typed body with a code of the catalogue at its status.
import { rawRequest } from '../support/sockets.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, type ErrorCode } from '../../src/kernel/errors.js';
import { createTenant, createTestDatabase, orderBody, startTestService, type TestDatabase, type TestService } from '../support/helpers.js';

let testDb: TestDatabase;
let service: TestService;
let key: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  service = await startTestService(testDb);
  key = (await createTenant(testDb.database)).testKey;
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
});

const hex = fc.constantFrom(...'0123456789abcdefABCDEF');
const notHex = fc.constantFrom('g', 'z', '%', '/', '-', '');
/** A %-escape: well formed (any byte, so not always UTF-8), cut short, or not hex at all. */
const escape = fc.oneof(
  fc.tuple(hex, hex).map(([a, b]) => `%${a}${b}`),
  fc.tuple(hex, notHex).map(([a, b]) => `%${a}${b}`),
  fc.constantFrom('%', '%ff', '%C0%AF', '%E0%A4%A', '%00', '%2F', '%zz'),
);
/** A path parameter: an id, text with %-escapes, or longer than the router's 100 characters. */
const param = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('ord_01jd8x3v0pe7wbz0m4k6f2n9qa', 'evt_01jd8x3v0pe7wbz0m4k6f2n9qa', 'cus_01jd8x3v0pe7wbz0m4k6f2n9qa', 'pm_01jd8x3v0pe7wbz0m4k6f2n9qa', 'nope') },
  { weight: 3, arbitrary: fc.array(fc.oneof(fc.stringMatching(/^[A-Za-z0-9._~-]{1,6}$/), escape), { minLength: 1, maxLength: 4 }).map((parts) => parts.join('')) },
  { weight: 3, arbitrary: fc.integer({ min: 95, max: 300 }).map((n) => 'a'.repeat(n)) },
);
const path = fc
  .tuple(
    fc.constantFrom(
      '/v1/payment-orders', '/v1/payment-orders', '/v1/payment-orders/{}', '/v1/payment-orders/{}', '/v1/payment-orders/{}/cancel', '/v1/events/{}', '/v1/payments/{}',
      '/v1/payments', '/v1/customers', '/v1/customers/{}', '/v1/payment-methods', '/v1/payment-methods/{}', '/v1/payment-methods/{}/detach', '/v1/{}', '/{}', '/v1/{}/{}',
    ),
    fc.array(param, { minLength: 2, maxLength: 2 }),
    fc.option(fc.constantFrom('?limit=2', '?x=%', '?reference=%ff', '?limit=%00'), { nil: undefined }),
  )
  .map(([template, [a, b], query]) => `${template.replace('{}', a!).replace('{}', b!)}${query ?? ''}`);

const ORDER = 'ord_01jd8x3v0pe7wbz0m4k6f2n9qa';
const CARD = { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' } };

/** A header value: valid text, or salted with the bytes HTTP forbids (NUL, DEL, other controls). */
const headerValue = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[!-~]{1,40}$/) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.stringMatching(/^[!-~]{0,10}$/), fc.constantFrom('\u0000', '\u007f', '\u0001', '\u001f', '\u000b'), fc.stringMatching(/^[!-~]{0,10}$/))
      .map(([a, bad, b]) => `${a}${bad}${b}`),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20, unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)) }).filter((v) => !/[\r\n]/.test(v)) },
);
const headerName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('Idempotency-Key', 'X-Request-Note', 'Accept', 'User-Agent') },
  { weight: 1, arbitrary: fc.constantFrom('X-Bad\u0000Name', 'X Space', 'X-Del\u007f', '') },
);
const request = fc.record({
  method: fc.oneof({ weight: 4, arbitrary: fc.constant('GET') }, { weight: 2, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: fc.constantFrom('DELETE', 'PUT', 'PATCH') }),
  path,
  authorized: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  headers: fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 2, arbitrary: fc.array(fc.tuple(headerName, headerValue), { minLength: 1, maxLength: 2 }) }),
  withBody: fc.boolean(),
  /**
   * The shapes the routes take: an order (typed customer or one named by id, asking to save the
   * card or not), a customer, a card to save (good, foreign customer, bad number), a saved card's
   * change, and payments: saving the card (setup_future_usage), with a saved card on and off
   * session, and each of those malformed.
   */
  body: fc.constantFrom(
    orderBody(),
    orderBody({ customer: { id: 'cus_01jd8x3v0pe7wbz0m4k6f2n9qa' } }),
    orderBody({ customer: { id: 'cus_01jd8x3v0pe7wbz0m4k6f2n9qa' }, setup_future_usage: 'off_session' }),
    orderBody({ setup_future_usage: 'on_session' }),
    { email: 'jane@example.com', name: 'Jane', reference: 'user-1' },
    { exp_month: 12, exp_year: 2030, metadata: { a: 'b' } },
    { customer: 'cus_01jd8x3v0pe7wbz0m4k6f2n9qa', card: { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' }, usage: 'off_session' },
    { customer: 'cus_01jd8x3v0pe7wbz0m4k6f2n9qa', card: { number: '4242424242424241', exp_month: 13, exp_year: 2030, cvc: '1' }, usage: 'sometimes', currency: 'usd' },
    { payment_order: ORDER, payment_method: CARD, customer: 'cus_01jd8x3v0pe7wbz0m4k6f2n9qa', setup_future_usage: 'off_session' },
    { payment_order: ORDER, payment_method: CARD, setup_future_usage: 'sometimes' },
    { payment_order: ORDER, payment_method: { type: 'saved_card', saved_card: { id: 'pm_01jd8x3v0pe7wbz0m4k6f2n9qa', cvc: '123' } } },
    { payment_order: ORDER, payment_method: { type: 'saved_card', saved_card: { id: 'pm_01jd8x3v0pe7wbz0m4k6f2n9qa' } }, off_session: true, off_session_reason: 'subscription' },
    { payment_order: ORDER, payment_method: CARD, off_session: true, off_session_reason: 'weekly' },
    { payment_order: ORDER, payment_method: { type: 'saved_card', saved_card: { id: 'nope', cvc: 123 }, card: CARD.card }, off_session: 'yes' },
  ),
});

const CATEGORIES = new Set(Object.values(ERROR_CATALOGUE).map((entry) => entry.type));

describe('every answer of the HTTP surface', () => {
  it('is below 500, carries a Request-Id, and every error is the typed body of the catalogue', async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const body = r.withBody ? JSON.stringify(r.body) : '';
        const lines = [`${r.method} ${r.path} HTTP/1.1`, 'Host: localhost', 'Connection: close'];
        if (r.authorized) lines.push(`Authorization: Bearer ${key}`);
        for (const [name, value] of r.headers) lines.push(`${name}: ${value}`);
        if (body) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
        const res = await rawRequest(service.url, lines.join('\r\n'), body);
        const context = `sent ${JSON.stringify(lines)}\ngot ${res.text}`;
        const answer = res.status < 400 ? String(res.status) : String(res.body?.error?.code);
        seen.set(answer, (seen.get(answer) ?? 0) + 1);
        expect(res.status, context).toBeGreaterThanOrEqual(200);
        expect(res.status, context).toBeLessThan(500);
        const requestId = res.headers.get('request-id');
        expect(requestId, context).toMatch(/^req_[0-9a-z]{26}$/);
        if (res.status < 400) return;
        expect(res.headers.get('content-type'), context).toMatch(/^application\/json\b/);
        expect(Object.keys(res.body ?? {}), context).toEqual(['error']);
        const error = res.body.error;
        expect(Object.hasOwn(ERROR_CATALOGUE, error.code), context).toBe(true);
        const entry = ERROR_CATALOGUE[error.code as ErrorCode];
        expect(CATEGORIES.has(error.type), context).toBe(true);
        expect({ type: error.type, status: res.status }, context).toEqual({ type: entry.type, status: entry.status });
        expect(error.request_id, context).toBe(requestId);
        expect(typeof error.message, context).toBe('string');
      }),
      { numRuns: 400 },
    );
    // The three families were met, and so were ordinary answers.
    for (const answer of ['path_invalid', 'path_too_long', 'request_malformed', '200']) expect(seen.get(answer) ?? 0, JSON.stringify([...seen])).toBeGreaterThan(5);
  }, 120_000);
});
