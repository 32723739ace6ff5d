// One error body shape everywhere: every failure the HTTP layer can produce — routing, method,
// body size, media type, JSON syntax, validation, authentication, an internal failure — answers
// `{ error: { type, code, message, param?, request_id } }` as JSON, with the request id repeated
// from the Request-Id header.
import { rawRequest } from '../support/sockets.js';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { call, LogCapture, orderBody, type ApiResponse } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';

const h = useService();
const { api } = h;

const ERROR_TYPES = ['validation', 'authentication', 'eligibility', 'processing', 'rate-limit'];

/** Asserts the one error shape and returns the error object for further checks. */
function expectError(res: ApiResponse, status: number, expected: { type: string; code: string; param?: string }) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
  const requestId = res.headers.get('request-id');
  expect(requestId).toMatch(/^req_[0-9a-z]{26}$/);
  expect(Object.keys(res.body)).toEqual(['error']);
  const error = res.body.error;
  expect(ERROR_TYPES).toContain(error.type);
  expect(error).toMatchObject({ type: expected.type, code: expected.code, request_id: requestId });
  expect(typeof error.message).toBe('string');
  expect(error.message.length).toBeGreaterThan(0);
  for (const key of Object.keys(error)) expect(['type', 'code', 'message', 'param', 'request_id']).toContain(key);
  if (expected.param === undefined) expect(error).not.toHaveProperty('param');
  else expect(error.param).toBe(expected.param);
  return error as { type: string; code: string; message: string; param?: string; request_id: string };
}

describe('errors: routing', () => {
  it.each([
    ['GET', '/v1/nothing-here'],
    ['GET', '/nothing-here'],
    ['POST', '/v1/payment-orders/ord_01jd8x3v0pe7wbz0m4k6f2n9qa/refund'],
    ['GET', '/'],
  ])('%s %s → 404 route_missing, with or without a key', async (method, path) => {
    expectError(await call(h.url, method, path), 404, { type: 'validation', code: 'route_missing' });
    expectError(await api.request(method, path), 404, { type: 'validation', code: 'route_missing' });
  });

  it.each([
    ['GET', '/v2/payment-orders'],
    ['POST', '/v2/payment-orders'],
    ['GET', '/v0/payment-orders/ord_01jd8x3v0pe7wbz0m4k6f2n9qa'],
    ['GET', '/v2'],
    ['DELETE', '/v10/events'],
  ])('%s %s → 404 unsupported_api_version', async (method, path) => {
    const error = expectError(await api.request(method, path), 404, { type: 'validation', code: 'unsupported_api_version' });
    expect(error.message).toContain('/v1');
  });

  it.each([
    ['DELETE', '/v1/payment-orders', ['GET', 'POST']],
    ['PUT', '/v1/payment-orders/ord_01jd8x3v0pe7wbz0m4k6f2n9qa', ['GET']],
    ['GET', '/v1/payment-orders/ord_01jd8x3v0pe7wbz0m4k6f2n9qa/cancel', ['POST']],
    ['POST', '/v1/events', ['GET']],
    ['PATCH', '/v1/events/evt_01jd8x3v0pe7wbz0m4k6f2n9qa', ['GET']],
  ])('%s %s → 405 method_not_allowed with an Allow header', async (method, path, allowed) => {
    const res = await api.request(method, path);
    expectError(res, 405, { type: 'validation', code: 'method_not_allowed' });
    const allow = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim());
    for (const m of allowed) expect(allow).toContain(m);
    expect(allow).not.toContain(method);
  });

  it('a malformed or wrong-prefix id in a path → 404 resource_missing', async () => {
    for (const id of ['nope', 'evt_01jd8x3v0pe7wbz0m4k6f2n9qa', 'ord_', 'ord_01jd8x3v0pe7wbz0m4k6f2n9qa', 'ord_ZZZ']) {
      expectError(await api.get(`/v1/payment-orders/${id}`), 404, { type: 'validation', code: 'resource_missing', param: 'id' });
    }
  });
});

describe('errors: before any route runs (router and HTTP parser)', () => {
  const get = (path: string, headers: string[] = []) => rawRequest(h.url, [`GET ${path} HTTP/1.1`, 'Host: localhost', ...headers].join('\r\n'));

  it.each(['/v1/%', '/v1/%ff/x', '/v1/payment-orders/%E0%A4%A', '/v1/payment-orders/ord_%zz', '/%', '/v1/events/%C0%AF'])(
    'a malformed %%-escape in the path (%s) → 400 path_invalid, with or without a key',
    async (path) => {
      expectError(await get(path), 400, { type: 'validation', code: 'path_invalid' });
      expectError(await get(path, [`Authorization: Bearer ${h.tenant.testKey}`]), 400, { type: 'validation', code: 'path_invalid' });
    },
  );

  it.each([['/v1/payment-orders/', ''], ['/v1/events/', ''], ['/v1/payments/', ''], ['/v1/payment-orders/', '/cancel']])(
    'a path parameter over 100 characters (%s…%s) → 414 path_too_long',
    async (prefix, suffix) => {
      const res = await get(`${prefix}${'a'.repeat(101)}${suffix}`, [`Authorization: Bearer ${h.tenant.testKey}`]);
      expectError(res, 414, { type: 'validation', code: 'path_too_long' });
    },
  );

  it.each([
    ['a NUL byte in a header value', 'Idempotency-Key: a\u0000b'],
    ['a DEL byte in a header value', 'Idempotency-Key: a\u007fb'],
    ['a NUL byte in the Authorization header', 'Authorization: Bearer sk_test_\u0000'],
    ['a control character in a header name', 'X-Bad\u0001Name: 1'],
    ['a space before the colon', 'Content-Type : application/json'],
  ])('%s → 400 request_malformed, typed, with a request id', async (_label, header) => {
    const error = expectError(await get('/v1/payment-orders', [`Authorization: Bearer ${h.tenant.testKey}`, header]), 400, {
      type: 'validation',
      code: 'request_malformed',
    });
    expect(error.message).toMatch(/not valid HTTP/);
  });

  it.each([
    ['an unknown method', 'BREW /v1/payment-orders HTTP/1.1'],
    ['a bad HTTP version', 'GET /v1/payment-orders HTTP/9.9'],
    ['a space in the path', 'GET /v1/payment orders HTTP/1.1'],
  ])('%s → 400 request_malformed', async (_label, line) => {
    expectError(await rawRequest(h.url, `${line}\r\nHost: localhost`), 400, { type: 'validation', code: 'request_malformed' });
  });

  it('headers over 16 KiB → 431 headers_too_large', async () => {
    expectError(await get('/v1/payment-orders', [`X-Padding: ${'x'.repeat(20_000)}`]), 431, { type: 'validation', code: 'headers_too_large' });
  });

  it('a conflicting Content-Length and Transfer-Encoding (smuggling) → 400 request_malformed', async () => {
    const head = ['POST /v1/payment-orders HTTP/1.1', 'Host: localhost', 'Content-Length: 4', 'Transfer-Encoding: chunked'].join('\r\n');
    expectError(await rawRequest(h.url, head, '0\r\n\r\n'), 400, { type: 'validation', code: 'request_malformed' });
  });

  it('each answer is logged once with its request id', async () => {
    const logs = new LogCapture();
    const logged = await h.startService({ logs });
    {
      const parser = await rawRequest(logged.url, 'GET /v1/events HTTP/1.1\r\nHost: localhost\r\nIdempotency-Key: a\u0000b');
      const router = await rawRequest(logged.url, 'GET /v1/%ff HTTP/1.1\r\nHost: localhost');
      const lines = logs.lines.map((l) => JSON.parse(l));
      for (const res of [parser, router]) {
        const id = res.body.error.request_id;
        expect(lines.filter((l) => l.request_id === id), logs.text).toHaveLength(1);
      }
      expect(lines.find((l) => l.request_id === parser.body.error.request_id)).toMatchObject({ status: 400, code: 'request_malformed' });
      expect(lines.find((l) => l.request_id === router.body.error.request_id)).toMatchObject({ status: 400 });
    }
  });
});

describe('errors: bodies', () => {
  it('a body over 1 MiB → 413 body_too_large', async () => {
    const rawBody = JSON.stringify({ ...orderBody(), description: 'x'.repeat(1024 * 1024) });
    expectError(await api.post('/v1/payment-orders', undefined, { rawBody }), 413, { type: 'validation', code: 'body_too_large' });
  });

  it('a body of exactly 1 MiB is still read (and judged on its content)', async () => {
    const base = JSON.stringify({ ...orderBody(), description: '' });
    const rawBody = base.replace('"description":""', `"description":"${'x'.repeat(1024 * 1024 - base.length)}"`);
    expect(Buffer.byteLength(rawBody)).toBe(1024 * 1024);
    expectError(await api.post('/v1/payment-orders', undefined, { rawBody }), 400, {
      type: 'validation',
      code: 'parameter_invalid',
      param: 'description',
    });
  });

  it.each([
    ['text/plain', 'amount=1'],
    ['application/x-www-form-urlencoded', 'amount=1999&currency=EUR'],
    ['multipart/form-data; boundary=x', '--x--'],
    ['application/xml', '<order/>'],
  ])('a %s body → 415 unsupported_media_type', async (contentType, rawBody) => {
    const res = await api.post('/v1/payment-orders', undefined, { rawBody, headers: { 'content-type': contentType } });
    expectError(res, 415, { type: 'validation', code: 'unsupported_media_type' });
  });

  it.each(['{', '{"amount": 1999,}', "{'amount': 1999}", 'amount=1999', '{"amount": 1999} trailing', 'nul', '\u0000'])(
    'malformed JSON %j → 400 body_invalid_json',
    async (rawBody) => {
      expectError(await api.post('/v1/payment-orders', undefined, { rawBody }), 400, { type: 'validation', code: 'body_invalid_json' });
    },
  );

  it.each([
    ['an array', '[1, 2, 3]'],
    ['an empty array', '[]'],
    ['a string', '"hello"'],
    ['a number', '42'],
    ['a boolean', 'true'],
    ['null', 'null'],
    ['nothing', ''],
  ])('%s as the body → 400 typed validation error without param', async (_label, rawBody) => {
    const res = await api.post('/v1/payment-orders', undefined, { rawBody });
    const error = expectError(res, 400, { type: 'validation', code: 'body_missing' });
    expect(error.message).toMatch(/JSON object|JSON body/);
  });

  it.each([
    [{ foo: 1 }, 'foo'],
    [{ Amount: 1 }, 'Amount'],
    [{ customer: { email: 'jane@example.com', foo: 'bar' } }, 'customer.foo'],
    [{ customer: { email: 'jane@example.com', name: 'Jane', phone: '+33 1 23 45 67 89' } }, 'customer.phone'],
  ])('an unknown body field %j → 400 parameter_unknown naming it', async (extra, param) => {
    const body = { ...orderBody(), ...extra };
    const error = expectError(await api.post('/v1/payment-orders', body), 400, { type: 'validation', code: 'parameter_unknown', param });
    expect(error.message).toContain(param);
  });

  it.each([
    ['{"__proto__": {"isAdmin": true}}', '__proto__'],
    [JSON.stringify(orderBody()).replace('{', '{"__proto__": 1, '), '__proto__'],
    [JSON.stringify(orderBody({ metadata: { placeholder: 'x' } })).replace('"placeholder"', '"__proto__"'), 'metadata'],
    ['{"customer": {"constructor": {"prototype": {"polluted": true}}}}', 'customer'],
  ])('valid JSON keyed __proto__ / constructor.prototype (%s) → 400 parameter_invalid naming where', async (rawBody, param) => {
    const res = await api.post('/v1/payment-orders', undefined, { rawBody });
    const error = expectError(res, 400, { type: 'validation', code: 'parameter_invalid', param });
    expect(error.message).toContain('__proto__');
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('an action without parameters (cancel) refuses an unknown body field, and takes no body or {}', async () => {
    const created = await api.post('/v1/payment-orders', orderBody());
    const refused = await api.post(`/v1/payment-orders/${created.body.id}/cancel`, { reason: 'changed my mind' });
    expectError(refused, 400, { type: 'validation', code: 'parameter_unknown', param: 'reason' });
    expect((await api.get(`/v1/payment-orders/${created.body.id}`)).body.status).toBe('open');
    expect((await api.post(`/v1/payment-orders/${created.body.id}/cancel`, {})).status).toBe(200);
    const other = await api.post('/v1/payment-orders', orderBody());
    expect((await api.post(`/v1/payment-orders/${other.body.id}/cancel`)).status).toBe(200);
  });

  it('an unknown query parameter → 400 parameter_unknown naming it', async () => {
    expectError(await api.get('/v1/payment-orders?colour=red'), 400, { type: 'validation', code: 'parameter_unknown', param: 'colour' });
  });

  it('a string the database cannot store (NUL, unpaired surrogate) → 400 parameter_invalid, not 500', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ reference: 'a\u0000b' }, 'reference'],
      [{ description: 'x\ud800' }, 'description'],
      [{ customer: { email: 'jane@example.com', name: '\udc00Jane' } }, 'customer.name'],
      [{ metadata: { cart: 'x\u0000' } }, 'metadata.cart'],
      [{ metadata: { 'a\u0000': 'x' } }, 'metadata'],
    ];
    for (const [overrides, param] of cases) {
      expectError(await api.post('/v1/payment-orders', orderBody(overrides)), 400, { type: 'validation', code: 'parameter_invalid', param });
    }
    expectError(await api.get('/v1/payment-orders?reference=a%00b'), 400, { type: 'validation', code: 'parameter_invalid', param: 'reference' });
  });
});

describe('errors: authentication and idempotency share the shape', () => {
  it('401 api_key_missing and api_key_invalid', async () => {
    expectError(await call(h.url, 'GET', '/v1/payment-orders'), 401, { type: 'authentication', code: 'api_key_missing' });
    expectError(await call(h.url, 'GET', '/v1/payment-orders', { key: `sk_test_${'a'.repeat(40)}` }), 401, {
      type: 'authentication',
      code: 'api_key_invalid',
    });
  });

  it('400 idempotency_key_missing', async () => {
    expectError(await api.post('/v1/payment-orders', orderBody(), { idempotencyKey: undefined }), 400, {
      type: 'validation',
      code: 'idempotency_key_missing',
    });
  });
});

describe('errors: 5xx', () => {
  // Its own database, whose schema is then broken under the running service: the kind of failure
  // (a migration gone wrong) that surfaces as a database error deep in a handler.
  const logs = new LogCapture();
  const broken = useService({ logs });

  it('an internal failure answers 500 internal_error without leaking what failed; the log has it', async () => {
    const key = broken.tenant.testKey;
    await broken.db.execute(sql`ALTER TABLE payment_orders RENAME TO payment_orders_gone`);
    const responses = [
      await call(broken.url, 'GET', '/v1/payment-orders', { key }),
      await call(broken.url, 'POST', '/v1/payment-orders', { key, body: orderBody(), idempotencyKey: 'five-hundred-1' }),
      await call(broken.url, 'GET', '/v1/payment-orders/ord_01jd8x3v0pe7wbz0m4k6f2n9qa', { key }),
    ];
    for (const res of responses) {
      const error = expectError(res, 500, { type: 'processing', code: 'internal_error' });
      expect(error.message).toBe('An internal error occurred; retry later.');
      expect(res.text).not.toMatch(/payment_orders|relation|does not exist|select|insert|stack|\bat [\w.<]+ \(|node_modules|\.ts\b|\.js\b/i);
      expect(res.headers.get('retry-after')).toBeNull();
    }
    // The details went to the log, under the same request id.
    const failure = logs.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request failed' && l.request_id === responses[0]!.body.error.request_id);
    expect(failure).toBeDefined();
    expect(JSON.stringify(failure)).toMatch(/payment_orders/);
  });
});
