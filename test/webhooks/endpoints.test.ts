// Webhook endpoints: create (the secret shown once, stored sealed), retrieve, list, update, delete,
// rotate the secret, the URL rules of each mode, and tenancy.
import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { client } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';

const h = useService();
const { api: test, live } = h;

async function storedAnswers(): Promise<string[]> {
  return (await h.query(sql`SELECT response_body FROM idempotency_keys WHERE response_body IS NOT NULL`)).map((r) => r.response_body);
}

const body = (overrides: Record<string, unknown> = {}) => ({
  url: 'https://example.com/hooks',
  enabled_events: ['payment_order.*'],
  ...overrides,
});

describe('webhook endpoints', () => {
  it('creates an endpoint whose secret is shown once', async () => {
    const created = await test.post('/v1/webhook-endpoints', body({ description: 'orders', metadata: { team: 'ops' } }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'webhook_endpoint',
      livemode: false,
      url: 'https://example.com/hooks',
      enabled_events: ['payment_order.*'],
      status: 'enabled',
      disabled_reason: null,
      description: 'orders',
      metadata: { team: 'ops' },
      previous_secret_expires_at: null,
      version: 1,
    });
    expect(created.body.id).toMatch(/^we_[0-9a-z]{26}$/);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.body.secret.slice(6), 'base64')).toHaveLength(32);

    const fetched = await test.get(`/v1/webhook-endpoints/${created.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.secret).toBeUndefined();
    expect(fetched.text).not.toContain(created.body.secret.slice(6, 20));
    const { secret: _secret, ...withoutSecret } = created.body;
    expect(fetched.body).toEqual(withoutSecret);

    const list = await test.get('/v1/webhook-endpoints');
    expect(list.body.data.map((e: any) => e.id)).toContain(created.body.id);
    expect(list.text).not.toContain(created.body.secret.slice(6, 20));
  });

  it('stores the secret encrypted, never in clear', async () => {
    const created = await test.post('/v1/webhook-endpoints', body());
    const { rows } = (await h.db.execute(
      `SELECT secret_encrypted FROM webhook_endpoints` as never,
    )) as unknown as { rows: { secret_encrypted: string }[] };
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.secret_encrypted).toMatch(/^v1\.dev\./);
      expect(row.secret_encrypted).not.toContain(created.body.secret.slice(6));
    }
  });

  it('updates url, events, description and status, bumping the version', async () => {
    const { body: endpoint } = await test.post('/v1/webhook-endpoints', body());
    const patched = await test.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, {
      body: { url: 'http://localhost:4000/hooks', enabled_events: ['*'], description: null, metadata: { a: 'b' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ url: 'http://localhost:4000/hooks', enabled_events: ['*'], description: null, metadata: { a: 'b' }, version: 2 });

    const disabled = await test.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { status: 'disabled' } });
    expect(disabled.body).toMatchObject({ status: 'disabled', disabled_reason: 'requested', version: 3 });
    const listed = await test.get('/v1/webhook-endpoints?status=disabled');
    expect(listed.body.data.map((e: any) => e.id)).toContain(endpoint.id);

    const enabled = await test.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { status: 'enabled' } });
    expect(enabled.body).toMatchObject({ status: 'enabled', disabled_reason: null, version: 4 });

    const events = await test.get('/v1/events?type=webhook_endpoint.*');
    const types = events.body.data.filter((e: any) => e.data.object.id === endpoint.id).map((e: any) => e.type);
    expect(types).toEqual(['webhook_endpoint.enabled', 'webhook_endpoint.disabled']);
    const disabledEvent = events.body.data.find((e: any) => e.type === 'webhook_endpoint.disabled' && e.data.object.id === endpoint.id);
    expect(disabledEvent.data.object).toMatchObject({ status: 'disabled', version: 3 });
    expect(JSON.stringify(disabledEvent)).not.toContain('secret"');
  });

  it('deletes an endpoint: 404 afterwards, not listed', async () => {
    const { body: endpoint } = await test.post('/v1/webhook-endpoints', body());
    const deleted = await test.request('DELETE', `/v1/webhook-endpoints/${endpoint.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: endpoint.id, object: 'webhook_endpoint', deleted: true });
    expect((await test.get(`/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(404);
    expect((await test.request('DELETE', `/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(404);
    const list = await test.get('/v1/webhook-endpoints?limit=100');
    expect(list.body.data.map((e: any) => e.id)).not.toContain(endpoint.id);
  });

  it('rotates the secret with a grace period and returns the new secret once', async () => {
    const { body: endpoint } = await test.post('/v1/webhook-endpoints', body());
    const rotated = await test.post(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { grace_period_seconds: 3600 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.parse(rotated.body.updated_at)).toBe(3600_000);
    const fetched = await test.get(`/v1/webhook-endpoints/${endpoint.id}`);
    expect(fetched.body.secret).toBeUndefined();
    expect(fetched.body.previous_secret_expires_at).toBe(rotated.body.previous_secret_expires_at);

    const noGrace = await test.post(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { grace_period_seconds: 0 });
    expect(noGrace.body.previous_secret_expires_at).toBeNull();
    // no body at all: the default grace period
    const bare = await test.post(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`);
    expect(Date.parse(bare.body.previous_secret_expires_at) - Date.parse(bare.body.updated_at)).toBe(24 * 3600_000);
  });

  it('honours an Idempotency-Key on create (optional), keeping the stored answer sealed', async () => {
    const first = await test.post('/v1/webhook-endpoints', body(), { idempotencyKey: 'we-create-1' });
    const again = await test.post('/v1/webhook-endpoints', body(), { idempotencyKey: 'we-create-1' });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    // The idempotency record holds the answer encrypted: the secret is not in the table in clear.
    const secret: string = first.body.secret;
    expect(secret).toMatch(/^whsec_/);
    const stored = await storedAnswers();
    expect(stored.some((b) => b.startsWith('sealed:'))).toBe(true);
    expect(stored.some((b) => b.includes(secret) || b.includes(secret.slice('whsec_'.length)))).toBe(false);
    const rotateKey = 'we-rotate-1';
    const rotated = await test.post(`/v1/webhook-endpoints/${first.body.id}/rotate-secret`, undefined, { idempotencyKey: rotateKey });
    const rotatedAgain = await test.post(`/v1/webhook-endpoints/${first.body.id}/rotate-secret`, undefined, { idempotencyKey: rotateKey });
    expect(rotatedAgain.text).toBe(rotated.text);
    expect((await storedAnswers()).some((b) => b.includes(rotated.body.secret.slice('whsec_'.length)))).toBe(false);
    const without = await test.post('/v1/webhook-endpoints', body(), { idempotencyKey: undefined });
    expect(without.status).toBe(201);
  });

  it('validates urls and event patterns', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [body({ url: 'not a url' }), 'url'],
      [body({ url: 'ftp://example.com/x' }), 'url'],
      [body({ url: 'https://user:pw@example.com/x' }), 'url'],
      [body({ enabled_events: [] }), 'enabled_events'],
      [body({ enabled_events: ['Payment.Created'] }), 'enabled_events.0'],
      [body({ enabled_events: ['a', 'a'] }), 'enabled_events'],
      [body({ extra: 1 }), 'extra'],
      [{ enabled_events: ['*'] }, 'url'],
    ];
    for (const [payload, param] of cases) {
      const res = await test.post('/v1/webhook-endpoints', payload);
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(res.body.error.param, JSON.stringify(payload)).toBe(param);
    }
    // test mode accepts http and local addresses, for local development
    expect((await test.post('/v1/webhook-endpoints', body({ url: 'http://127.0.0.1:9/x' }))).status).toBe(201);
  });

  it('refuses event types and patterns that match no event type, naming the closest valid one', async () => {
    const { api } = await h.newTenant('Events');
    const cases: [string[], string, string][] = [
      [['payment.succeded'], 'enabled_events.0', '"payment.succeeded"'],
      [['payment_order.*', 'paymnt.*'], 'enabled_events.1', '"payment.*"'],
      [['refund.created', 'payment.succeeded.*'], 'enabled_events.1', 'matches no event type'],
      [['webhook_endpoint.deleted'], 'enabled_events.0', '"webhook_endpoint.enabled"'],
    ];
    for (const [events, param, said] of cases) {
      const res = await api.post('/v1/webhook-endpoints', body({ enabled_events: events }));
      expect(res.status, events.join()).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'validation', code: 'parameter_invalid', param });
      expect(res.body.error.message).toContain(said);
    }
    expect((await api.get('/v1/webhook-endpoints')).body.data).toEqual([]);

    const every = (await api.get('/v1/event-types')).body.data.map((t: { name: string }) => t.name);
    const created = await api.post('/v1/webhook-endpoints', body({ enabled_events: every }));
    expect(created.status).toBe(201);
    for (const events of [['*'], ['payment.*', 'payment_order.*', 'webhook_endpoint.test']]) {
      const patched = await api.request('PATCH', `/v1/webhook-endpoints/${created.body.id}`, { body: { enabled_events: events } });
      expect(patched.status).toBe(200);
      expect(patched.body.enabled_events).toEqual(events);
    }
    const refused = await api.request('PATCH', `/v1/webhook-endpoints/${created.body.id}`, { body: { enabled_events: ['refund.*', 'refund.sucess'] } });
    expect(refused.body.error).toMatchObject({ code: 'parameter_invalid', param: 'enabled_events.1', message: expect.stringContaining('"refund.succeeded"') });
    expect((await api.get(`/v1/webhook-endpoints/${created.body.id}`)).body).toMatchObject({ enabled_events: ['payment.*', 'payment_order.*', 'webhook_endpoint.test'], version: 3 });
  });

  it('live mode requires https and refuses local, private and metadata destinations', async () => {
    for (const url of [
      'http://example.com/hooks',
      'https://localhost/hooks',
      'https://127.0.0.1/hooks',
      'https://10.1.2.3/hooks',
      'https://192.168.1.1/hooks',
      'https://172.16.0.1/hooks',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/hooks',
      'https://[::ffff:127.0.0.1]/hooks',
      'https://[fd00:ec2::254]/hooks',
      'https://metadata.google.internal/computeMetadata/v1/',
      'https://0.0.0.0/hooks',
      'https://intranet/hooks',
    ]) {
      const res = await live.post('/v1/webhook-endpoints', body({ url }));
      expect(res.status, url).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
    }
    const ok = await live.post('/v1/webhook-endpoints', body({ url: 'https://hooks.example.com/in' }));
    expect(ok.status).toBe(201);
    expect(ok.body.livemode).toBe(true);
    // and an update cannot sneak one in either
    const patched = await live.request('PATCH', `/v1/webhook-endpoints/${ok.body.id}`, { body: { url: 'https://127.0.0.1/x' } });
    expect(patched.status).toBe(400);
  });

  it('keeps tenants and modes apart', async () => {
    const { body: endpoint } = await test.post('/v1/webhook-endpoints', body());
    const other = (await h.newTenant('Other')).api;
    for (const c of [other, live]) {
      for (const [method, path] of [
        ['GET', `/v1/webhook-endpoints/${endpoint.id}`],
        ['PATCH', `/v1/webhook-endpoints/${endpoint.id}`],
        ['DELETE', `/v1/webhook-endpoints/${endpoint.id}`],
        ['POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`],
        ['GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`],
        ['POST', `/v1/test-helpers/webhook-endpoints/${endpoint.id}/send`],
      ] as const) {
        const payload = method === 'PATCH' ? { status: 'disabled' } : path.endsWith('/send') ? { scenario: 'deliver' } : undefined;
        const res = await c.request(method, path, { body: payload });
        expect(res.status, `${method} ${path}`).toBe(c === live && path.endsWith('/send') ? 403 : 404);
      }
      const list = await c.get('/v1/webhook-endpoints?limit=100');
      expect(list.body.data.map((e: any) => e.id)).not.toContain(endpoint.id);
    }
    const otherMode = await live.get(`/v1/webhook-endpoints/${endpoint.id}`);
    expect(otherMode.body.error.message).toContain('test mode');
    const stranger = await other.get(`/v1/webhook-endpoints/${endpoint.id}`);
    expect(stranger.body.error.message).not.toContain('mode');
    expect((await test.get('/v1/webhook-endpoints/we_nope')).status).toBe(404);
    expect((await test.request('GET', '/v1/webhook-endpoints')).status).toBe(200);
    expect((await client(h.url).get('/v1/webhook-endpoints')).status).toBe(401);
  });

  it('limits the number of endpoints per account and mode', async () => {
    const { api } = await h.newTenant('Many endpoints');
    for (let i = 0; i < 16; i++) expect((await api.post('/v1/webhook-endpoints', body())).status).toBe(201);
    const refused = await api.post('/v1/webhook-endpoints', body());
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('webhook_endpoint_limit_reached');
  });

  it('holds the limit under concurrent creates', async () => {
    const { api } = await h.newTenant('Racing endpoints');
    const answers = await Promise.all(Array.from({ length: 24 }, () => api.post('/v1/webhook-endpoints', body())));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(16);
    expect(answers.filter((a) => a.status === 422)).toHaveLength(8);
    expect((await api.get('/v1/webhook-endpoints?limit=100')).body.data).toHaveLength(16);
  });
});
