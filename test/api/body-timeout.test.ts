// A request body that stops arriving is answered `408 request_timeout` and its connection closed
// after REQUEST_BODY_TIMEOUT_MS without progress, and so is one trickling in below
// REQUEST_BODY_MIN_RATE; a body that keeps arriving above that rate, however long it takes in
// total, is never cut. Driven over raw sockets: fetch cannot stall a body on purpose.
import { describe, expect, it } from 'vitest';
import { orderBody } from '../support/helpers.js';
import { rawExchange } from '../support/sockets.js';
import { useService } from '../support/fixtures.js';

const DEADLINE_MS = 1000;
const MIN_RATE = 256;
// Generous for a loaded machine, and still far from "never", which is what it was.
const LATEST_MS = DEADLINE_MS * 1.25 + 1000;
const h = useService({ overrides: { requestBodyTimeoutMs: DEADLINE_MS, requestBodyMinRate: MIN_RATE } });

function postHead(length: number, idempotencyKey: string, key: string | null = h.tenant.testKey): string {
  return [
    'POST /v1/payment-orders HTTP/1.1',
    'Host: localhost',
    ...(key ? [`Authorization: Bearer ${key}`] : []),
    `Idempotency-Key: ${idempotencyKey}`,
    'Content-Type: application/json',
    `Content-Length: ${length}`,
  ].join('\r\n');
}

describe('request body deadline', () => {
  it('answers a stalled body 408 request_timeout and closes the connection, within the deadline', async () => {
    const key = `stall-${Date.now()}`;
    const { answer, afterMs } = await rawExchange(h.url, postHead(100_000, key), ['{'], { until: 'close', timeoutMs: 5000 });
    expect(answer.status).toBe(408);
    expect(answer.body.error).toMatchObject({ type: 'validation', code: 'request_timeout', request_id: answer.headers.get('request-id') });
    expect(answer.headers.get('connection')).toBe('close');
    expect(afterMs).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    // Checked four times per deadline: answered no later than a quarter past it, plus scheduling.
    expect(afterMs).toBeLessThan(LATEST_MS);
    // Nothing was executed under the key: a complete retry runs.
    const body = JSON.stringify(orderBody());
    const retried = await rawExchange(h.url, postHead(Buffer.byteLength(body), key), [body]);
    expect(retried.answer.status).toBe(201);
  });

  it('applies to a chunked body too', async () => {
    const head = postHead(0, `chunked-${Date.now()}`).replace('Content-Length: 0', 'Transfer-Encoding: chunked');
    const { answer, afterMs } = await rawExchange(h.url, head, ['5\r\n{"amo\r\n'], { until: 'close', timeoutMs: 5000 });
    expect(answer.status).toBe(408);
    expect(answer.body.error.code).toBe('request_timeout');
    expect(afterMs).toBeLessThan(LATEST_MS);
  });

  it('never cuts a body that keeps arriving above the minimum rate, even when the whole takes several deadlines', async () => {
    // JSON allows whitespace between tokens: padding makes a valid body of any size.
    const body = JSON.stringify(orderBody({ description: 'steady' })).replace(/}$/, `${' '.repeat(2000)}}`);
    // 16 parts, one every quarter deadline: about 2 × MIN_RATE in every window, for four windows.
    const parts = Array.from({ length: 16 }, (_, i) => body.slice((i * body.length) / 16, ((i + 1) * body.length) / 16));
    expect(Buffer.byteLength(parts[1]!) * 4).toBeGreaterThan(MIN_RATE * 1.5);
    const { answer, afterMs } = await rawExchange(h.url, postHead(Buffer.byteLength(body), `steady-${Date.now()}`), parts, { gapMs: DEADLINE_MS / 4 });
    expect(afterMs).toBeGreaterThan(DEADLINE_MS * 3.5);
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ object: 'payment_order', description: 'steady' });
  });

  it('closes a connection whose body stalls after an answer given without reading it', async () => {
    const { answer, afterMs } = await rawExchange(h.url, postHead(100_000, `unauthenticated-${Date.now()}`, null), ['{'], { until: 'close', timeoutMs: 5000 });
    expect(answer.status).toBe(401);
    expect(afterMs).toBeLessThan(LATEST_MS);
  });
});

describe('request body minimum rate', () => {
  // A window long enough that a byte a second never looks like silence, even on a loaded machine:
  // only the rate can stop this body.
  const WINDOW_MS = 2500;
  const slow = useService({ on: h, overrides: { requestBodyTimeoutMs: WINDOW_MS, requestBodyMinRate: MIN_RATE } });

  it('answers a body trickling in at 1 byte/s 408 request_timeout and closes the connection, within about one window', async () => {
    const body = JSON.stringify(orderBody());
    const head = postHead(Buffer.byteLength(body), `trickle-${Date.now()}`, slow.tenant.testKey);
    // A byte a second for 12 s, then silence: without a rate rule only the silence limit would end
    // it, at about 12 s + WINDOW_MS.
    const parts = body.slice(0, 12).split('');
    const { answer, afterMs } = await rawExchange(slow.url, head, parts, { gapMs: 1000, until: 'close', timeoutMs: 20_000 });
    expect(answer.status).toBe(408);
    expect(answer.body.error).toMatchObject({ type: 'validation', code: 'request_timeout', request_id: answer.headers.get('request-id') });
    expect(answer.body.error.message).toMatch(/too slowly/);
    expect(answer.headers.get('connection')).toBe('close');
    expect(afterMs).toBeGreaterThanOrEqual(WINDOW_MS - 50);
    expect(afterMs).toBeLessThan(WINDOW_MS * 1.25 + 1000);
  });
});
