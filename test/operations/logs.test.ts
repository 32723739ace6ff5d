// Structured logs: one pino line per request with request id, account, status and duration, and
// never an API key, its hash or the Authorization header — not even when a request fails inside
// the database.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { sha256Hex } from '../../src/kernel/secrets.js';
import { call, LogCapture, orderBody, type ApiResponse, type Tenant } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';
import pino from 'pino';
import { loggedPath, requestLogger } from '../../src/http/request-log.js';
import { loggerOptions } from '../../src/http/app.js';

const logs = new LogCapture();
const h = useService({ overrides: { apiKeyCacheTtlMs: 0 }, logs });

type Line = Record<string, any>;
const parsed = (): Line[] => logs.lines.map((line) => JSON.parse(line) as Line);
const requestLines = () => parsed().filter((l) => l.msg === 'request');

function secretsOf(t: Tenant): string[] {
  return [t.testKey, t.liveKey, sha256Hex(t.testKey), sha256Hex(t.liveKey)];
}
function expectNoSecrets(text: string, secrets: string[]) {
  for (const secret of secrets) expect(text).not.toContain(secret);
  // The random part alone (a key could be logged in pieces or re-encoded around its prefix).
  for (const secret of secrets.filter((s) => s.startsWith('sk_'))) expect(text).not.toContain(secret.slice(8));
  expect(text.toLowerCase()).not.toContain('authorization');
  expect(text).not.toContain('Bearer');
}

describe('logs', () => {
  it('writes one structured line per request with request id, account, status and duration', async () => {
    const api = h.api;
    const before = logs.lines.length;
    const answers: ApiResponse[] = [];
    const created = await api.post('/v1/payment-orders', orderBody());
    answers.push(created);
    answers.push(await api.post('/v1/payment-orders', orderBody(), { idempotencyKey: undefined })); // 400
    answers.push(await api.get(`/v1/payment-orders/${created.body.id}`));
    answers.push(await api.get('/v1/payment-orders/ord_unknown')); // 404
    answers.push(await h.live.get('/v1/payment-orders'));
    answers.push(await call(h.url, 'GET', '/v1/payment-orders')); // 401, no key
    answers.push(await call(h.url, 'GET', '/v1/payment-orders', { key: 'sk_test_' + 'x'.repeat(40) })); // 401
    answers.push(await call(h.url, 'GET', '/v1/nowhere', { key: h.tenant.testKey })); // 404 route
    answers.push(await call(h.url, 'GET', '/health'));
    expect(answers.map((a) => a.status)).toEqual([201, 400, 200, 404, 200, 401, 401, 404, 200]);

    // onResponse runs after the answer is sent: give the last line a moment.
    await expect.poll(() => requestLines().length - countBefore(before)).toBe(answers.length);
    const lines = requestLines().slice(-answers.length);
    const accountUuid = parseId('acct', h.tenant.accountId)!;
    for (const answer of answers) {
      const requestId = answer.headers.get('request-id');
      const mine = lines.filter((l) => l.request_id === requestId);
      expect(mine, `one line for ${requestId}`).toHaveLength(1);
      // ...and nothing else for a request that did not fail.
      expect(parsed().filter((l) => l.request_id === requestId)).toHaveLength(1);
      const line = mine[0]!;
      expect(line).toMatchObject({ level: 30, msg: 'request', status: answer.status });
      expect(typeof line.duration_ms).toBe('number');
      expect(line.duration_ms).toBeGreaterThanOrEqual(0);
      expect(typeof line.time).toBe('number');
      expect(line.method).toMatch(/^(GET|POST)$/);
    }
    const byId = (res: ApiResponse) => lines.find((l) => l.request_id === res.headers.get('request-id'))!;
    for (const authenticated of [answers[0]!, answers[1]!, answers[2]!, answers[3]!]) {
      expect([accountUuid, h.tenant.accountId]).toContain(byId(authenticated).account);
      expect(byId(authenticated).livemode).toBe(false);
    }
    expect(byId(answers[4]!).livemode).toBe(true);
    expect(byId(answers[5]!).account).toBeUndefined();
    expect(byId(answers[0]!)).toMatchObject({ method: 'POST', path: '/v1/payment-orders' });

    expectNoSecrets(logs.text, [...secretsOf(h.tenant), 'x'.repeat(40)]);
  });

  it('keeps keys out of the log when a client puts one where it does not belong', async () => {
    const api = h.api;
    const before = logs.lines.length;
    // In the query string, in the body, and as the idempotency key.
    await api.get(`/v1/payment-orders?api_key=${h.tenant.liveKey}`);
    await api.post('/v1/payment-orders', orderBody({ metadata: { api_key: h.tenant.liveKey } }));
    await api.post('/v1/payment-orders', orderBody(), { idempotencyKey: h.tenant.liveKey });
    await api.get('/v1/payment-orders', { headers: { authorization: `Bearer ${h.tenant.liveKey}`, 'x-api-key': h.tenant.liveKey } });
    await expect.poll(() => requestLines().length - countBefore(before)).toBe(4);
    for (const line of logs.lines.slice(before)) expect(line).not.toContain(h.tenant.liveKey.slice(8));
  });

  it('writes a key-shaped path segment redacted, keeping only its prefix', async () => {
    const before = logs.lines.length;
    const webhookSecret = `whsec_${'A1b2'.repeat(11)}`;
    const stripeKey = `rk_live_${'Zz9'.repeat(12)}`;
    const signInCode = `dsc_${'a-_B'.repeat(10)}abc`;
    const paths = [
      `/v1/payments/${h.tenant.liveKey}`,
      `/v1/payment-orders/${h.tenant.testKey}/cancel`,
      `/v1/payments/${h.tenant.liveKey.replace(/_/g, '%5F')}`, // escaped, as a client library might send it
      `/v1/nowhere/${webhookSecret}`,
      `/v1/connector-accounts/${stripeKey}`,
      `/dashboard/${signInCode}`,
    ];
    for (const path of paths) await call(h.url, path.endsWith('/cancel') ? 'POST' : 'GET', path, { key: h.tenant.testKey });
    await expect.poll(() => requestLines().length - countBefore(before)).toBe(paths.length);
    const written = logs.lines.slice(before).join('\n');
    for (const secret of [h.tenant.liveKey.slice(8), h.tenant.testKey.slice(8), webhookSecret.slice(6), stripeKey.slice(8), signInCode.slice(4)]) {
      expect(written).not.toContain(secret);
    }
    const logged = requestLines().slice(-paths.length).map((l) => l.path);
    expect(logged).toContain('/v1/payments/sk_live_[redacted]');
    expect(logged).toContain('/v1/payment-orders/sk_test_[redacted]/cancel');
    expect(logged).toContain('/v1/connector-accounts/rk_live_[redacted]');
    // An ordinary id stays as it was.
    expect(loggedPath('/v1/payments/pay_01h455vb4pex5vsknk084sn02q', {})).toBe('/v1/payments/pay_01h455vb4pex5vsknk084sn02q');
  });

  it('logs a failure inside the database without the key hash or other query parameters', async () => {
    const fresh = await h.newTenant('Unlucky tenant');
    const before = logs.lines.length;
    // The key lookup fails inside the database (as it would during an outage).
    await h.db.execute(sql`ALTER TABLE api_key_lookups RENAME TO api_key_lookups_away`);
    let failed: ApiResponse;
    try {
      failed = await fresh.api.get('/v1/payment-orders');
    } finally {
      await h.db.execute(sql`ALTER TABLE api_key_lookups_away RENAME TO api_key_lookups`);
    }
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(failed.text).not.toContain('api_key_lookups');
    expect(failed.text).not.toContain(sha256Hex(fresh.testKey));

    await expect.poll(() => requestLines().length - countBefore(before)).toBe(1);
    const mine = logs.lines.slice(before).map((l) => JSON.parse(l) as Line);
    const error = mine.find((l) => l.level >= 50);
    expect(error, 'the failure is logged').toBeDefined();
    expect(error!.request_id).toBe(failed.headers.get('request-id'));
    expect(JSON.stringify(error)).toContain('api_key_lookups'); // the log explains what failed...
    expectNoSecrets(logs.lines.slice(before).join('\n'), secretsOf(fresh)); // ...but not with what

    // And the service recovers: the same key works again.
    expect((await fresh.api.get('/v1/payment-orders')).status).toBe(200);
  });

  it('logs a failed write without the customer data it carried', async () => {
    const before = logs.lines.length;
    const body = orderBody({ customer: { email: 'very.private@example.com', name: 'Private Person' }, metadata: { token: 'tok_secret_123' } });
    await h.db.execute(
      sql.raw(`CREATE OR REPLACE FUNCTION logs_test_boom() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN RAISE EXCEPTION 'simulated write failure'; END $$`),
    );
    await h.db.execute(sql.raw(`CREATE TRIGGER logs_test_boom BEFORE INSERT ON payment_orders FOR EACH ROW EXECUTE FUNCTION logs_test_boom()`));
    let failed: ApiResponse;
    try {
      failed = await h.api.post('/v1/payment-orders', body);
    } finally {
      await h.db.execute(sql`DROP TRIGGER logs_test_boom ON payment_orders`);
    }
    expect(failed.status).toBe(500);
    await expect.poll(() => requestLines().length - countBefore(before)).toBe(1);
    const written = logs.lines.slice(before).join('\n');
    expect(written).toContain('simulated write failure');
    for (const value of ['very.private@example.com', 'Private Person', 'tok_secret_123', body.reference]) expect(written).not.toContain(value);
  });
});

describe("a request's logger", () => {
  // Made lazily (src/http/request-log.ts): the id and the redaction must be there whenever it writes.
  it('at warn, writes nothing below it and makes no child, and writes its errors with the request id, redacted', () => {
    const capture = new LogCapture();
    const parent = pino({ ...loggerOptions({ logLevel: 'warn' }) }, capture);
    let children = 0;
    const child = parent.child.bind(parent);
    parent.child = ((...args: Parameters<typeof child>) => (children++, child(...args))) as typeof parent.child;
    const log = requestLogger.call(null, parent, { request_id: 'req_1' }, {});
    log.info({ a: 1 }, 'not written');
    log.debug('not written either');
    expect(log.level).toBe('warn');
    expect(children).toBe(0);
    log.error({ err: new Error('boom'), headers: { authorization: 'Bearer sk_test_x' } }, 'request failed');
    log.warn('second line');
    expect(children).toBe(1);
    const lines = capture.lines.map((l) => JSON.parse(l) as Line);
    expect(lines.map((l) => [l.msg, l.request_id])).toEqual([['request failed', 'req_1'], ['second line', 'req_1']]);
    expect(lines[0]!.headers.authorization).toBe('[redacted]');
    expect(lines[0]!.err.message).toBe('boom');
    expect((log as unknown as pino.Logger).bindings()).toEqual({ request_id: 'req_1' });
  });

  it("follows a route's own level (fastify's logLevel), above or below the service's", () => {
    const capture = new LogCapture();
    const parent = pino({ ...loggerOptions({ logLevel: 'info' }) }, capture);
    const verbose = requestLogger.call(null, parent, { request_id: 'req_2' }, { level: 'debug' });
    const quiet = requestLogger.call(null, parent, { request_id: 'req_3' }, { level: 'warn' });
    expect([verbose.level, quiet.level]).toEqual(['debug', 'warn']);
    verbose.debug('written');
    quiet.info('not written');
    expect(capture.lines.map((l) => [JSON.parse(l).msg, JSON.parse(l).request_id])).toEqual([['written', 'req_2']]);
  });
});

/** Request lines already written before index `lineIndex` of the capture. */
function countBefore(lineIndex: number): number {
  return logs.lines.slice(0, lineIndex).filter((l) => (JSON.parse(l) as Line).msg === 'request').length;
}
