// A request body that stops arriving is answered `408 request_timeout` and its connection closed
// after REQUEST_BODY_TIMEOUT_MS without progress; a body that keeps arriving, however slowly in
// total, is never cut. Driven over raw sockets: fetch cannot stall a body on purpose.
import { describe, expect, it } from 'vitest';
import { orderBody } from './helpers.js';
import { rawExchange } from './sockets.helpers.js';
import { useService } from './fixtures.js';

const DEADLINE_MS = 1000;
// Generous for a loaded machine, and still far from "never", which is what it was.
const LATEST_MS = DEADLINE_MS * 1.25 + 1000;
const h = useService({ overrides: { requestBodyTimeoutMs: DEADLINE_MS } });

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

  it('never cuts a body that keeps arriving, even when the whole takes several deadlines', async () => {
    const body = JSON.stringify(orderBody({ description: 'x'.repeat(200) }));
    const parts = Array.from({ length: 12 }, (_, i) => body.slice((i * body.length) / 12, ((i + 1) * body.length) / 12));
    const { answer, afterMs } = await rawExchange(h.url, postHead(Buffer.byteLength(body), `steady-${Date.now()}`), parts, { gapMs: DEADLINE_MS / 4 });
    expect(afterMs).toBeGreaterThan(DEADLINE_MS * 2.5);
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ object: 'payment_order', description: 'x'.repeat(200) });
  });

  it('closes a connection whose body stalls after an answer given without reading it', async () => {
    const { answer, afterMs } = await rawExchange(h.url, postHead(100_000, `unauthenticated-${Date.now()}`, null), ['{'], { until: 'close', timeoutMs: 5000 });
    expect(answer.status).toBe(401);
    expect(afterMs).toBeLessThan(LATEST_MS);
  });
});
