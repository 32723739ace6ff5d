// The SSRF guard at delivery time: live mode checks the address actually connected to, at every
// attempt, so a name that resolved to a public address yesterday and to 127.0.0.1 today (DNS
// rebinding) is refused, and nothing ever reaches the local receiver.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { client, orderBody, type Api } from '../support/helpers.js';
import { loadConfig } from '../../src/config.js';
import { deliverAt, Receiver, webhookOptions } from '../support/webhooks.js';
import { parseId } from '../../src/kernel/ids.js';
import type { LookupAddress } from '../../src/domain/webhooks/sender.js';
import { useService } from '../support/fixtures.js';

const h = useService();
let receiver: Receiver;
beforeAll(async () => {
  receiver = await h.receiver();
});

async function liveSetup(url: string) {
  const { live } = await h.newTenant();
  const created = await live.post('/v1/webhook-endpoints', { url, enabled_events: ['*'] });
  expect(created.status).toBe(201);
  return { live, endpoint: created.body };
}

async function liveEvent(live: Api) {
  await live.post('/v1/payment-orders', orderBody());
  return (await live.get('/v1/events?limit=1')).body.data[0];
}

describe('SSRF guard at delivery time', () => {
  it('refuses a name that resolves to a loopback, private or metadata address, at every attempt', async () => {
    const { live, endpoint } = await liveSetup('https://hooks.rebind.example/in');
    let answers: LookupAddress[][] = [
      [{ address: '93.184.216.34', family: 4 }], // public the first time (unreachable here: it fails as a network error)
      [{ address: '127.0.0.1', family: 4 }], // then rebinds to loopback
      [{ address: '8.8.8.8', family: 4 }, { address: '169.254.169.254', family: 4 }],
      [{ address: '::ffff:10.0.0.1', family: 6 }],
    ];
    const resolved: string[] = [];
    const options = webhookOptions({ timeoutMs: 500, retryScheduleS: { live: [0, 1, 1, 1], test: [0, 1, 1, 1] } }, {
      resolver: async (hostname) => {
        resolved.push(hostname);
        const next = answers.shift() ?? [{ address: '127.0.0.1', family: 4 }];
        return next;
      },
    });
    const event = await liveEvent(live);
    const t0 = Date.now();
    for (let i = 0; i < 4; i++) await deliverAt(h.database, options, new Date(t0 + i * 2000));
    const attempts = (await live.get(`/v1/events/${event.id}/deliveries`)).body.data.reverse();
    expect(attempts).toHaveLength(4);
    expect(resolved.every((h) => h === 'hooks.rebind.example')).toBe(true);
    expect(attempts[0].error.code).not.toBe('destination_forbidden');
    for (const attempt of attempts.slice(1)) {
      expect(attempt).toMatchObject({ outcome: 'failed', response_status: null, error: { code: 'destination_forbidden' } });
    }
    expect(attempts[1].error.message).toContain('127.0.0.1');
    expect(attempts[2].error.message).toContain('169.254.169.254');
    expect(endpoint.livemode).toBe(true);
    answers = [];
  });

  it('refuses an address literal stored before the rules changed', async () => {
    const { live, endpoint } = await liveSetup('https://hooks.example.com/in');
    const port = new URL(receiver.url).port;
    for (const url of [`https://127.0.0.1:${port}/webhooks`, `https://[::1]:${port}/webhooks`, `https://[::ffff:7f00:1]:${port}/webhooks`]) {
      await h.db.execute(sql`UPDATE webhook_endpoints SET url = ${url} WHERE id = ${parseId('we', endpoint.id)!}::uuid`);
      const event = await liveEvent(live);
      await deliverAt(h.database, webhookOptions());
      const [attempt] = (await live.get(`/v1/events/${event.id}/deliveries`)).body.data;
      expect(attempt, url).toMatchObject({ outcome: 'failed', error: { code: 'destination_forbidden' } });
    }
    expect(receiver.requests).toHaveLength(0);
  });

  it('applies to test mode too when WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS=deny', async () => {
    const { api } = await h.newTenant();
    await api.post('/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['*'] });
    await api.post('/v1/payment-orders', orderBody());
    const event = (await api.get('/v1/events?limit=1')).body.data[0];
    await deliverAt(h.database, webhookOptions({ testModePrivateDestinations: 'deny' }));
    const [attempt] = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempt).toMatchObject({ outcome: 'failed', error: { code: 'destination_forbidden' } });
    expect(receiver.requests).toHaveLength(0);
    // allowed (the default), the same endpoint receives it
    await deliverAt(h.database, webhookOptions(), new Date(Date.now() + 10_000));
    expect(receiver.forEvent(event.id)).toHaveLength(1);
  });

  it('tells a test-mode caller refused a private URL which setting allows it', async () => {
    const denying = await h.startService({ overrides: { webhooks: { ...loadConfig({}).webhooks, testModePrivateDestinations: 'deny' } } });
    const { testKey } = await h.createTenant();
    const api = client(denying.url, testKey);
    const refused = await api.post('/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['*'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url', message: expect.stringContaining('WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS=allow') });
    const created = await api.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/in', enabled_events: ['*'] });
    const patched = await api.request('PATCH', `/v1/webhook-endpoints/${created.body.id}`, { body: { url: receiver.url } });
    expect(patched.body.error.message).toContain('WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS=allow');
    // Live mode cannot be allowed: it names no setting.
    const live = await h.live.post('/v1/webhook-endpoints', { url: receiver.url.replace('http:', 'https:'), enabled_events: ['*'] });
    expect(live.body.error.message).not.toContain('WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS');
  });
});

// IPv6 forms that carry an IPv4 address the guard refuses, and IPv6 ranges that are private by
// themselves. `URL` rewrites `[::127.0.0.1]` as `[::7f00:1]`, so the check must read the bits.
const HIDDEN_IPV4 = [
  'https://[::127.0.0.1]/hook', // IPv4-compatible
  'https://[::7f00:1]/hook',
  'https://[::a9fe:a9fe]/hook', // 169.254.169.254, IPv4-compatible
  'https://[::ffff:10.1.2.3]/hook', // IPv4-mapped
  'https://[::ffff:0:7f00:1]/hook', // IPv4-translated
  'https://[2002:7f00:1::]/hook', // 6to4 of 127.0.0.1
  'https://[2002:a9fe:a9fe::1]/hook', // 6to4 of 169.254.169.254
  'https://[64:ff9b::127.0.0.1]/hook', // NAT64
  'https://[64:ff9b::a00:1]/hook',
  'https://[64:ff9b:1::a00:1]/hook', // local-use NAT64
  'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook', // Teredo (client 127.0.0.1)
  'https://[fd12:3456::1]/hook', // unique local
  'https://[fc00::1]/hook',
  'https://[fec0::1]/hook', // site-local
];
// The same forms around public IPv4 addresses are not private.
const PUBLIC_IPV6 = ['https://[2002:808:808::1]/hook', 'https://[64:ff9b::808:808]/hook', 'https://[2606:4700:4700::1111]/hook'];

describe('SSRF guard on IPv4 addresses inside IPv6', () => {
  it('refuses each form on create and on PATCH in live mode, and accepts public ones', async () => {
    const { live, endpoint } = await liveSetup('https://hooks.example.com/in');
    for (const url of HIDDEN_IPV4) {
      const created = await live.post('/v1/webhook-endpoints', { url, enabled_events: ['*'] });
      expect(created.status, `create ${url}`).toBe(400);
      expect(created.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
      const patched = await live.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { url } });
      expect(patched.status, `PATCH ${url}`).toBe(400);
      expect(patched.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
    }
    expect((await live.get(`/v1/webhook-endpoints/${endpoint.id}`)).body.url).toBe('https://hooks.example.com/in');
    for (const url of PUBLIC_IPV6) {
      const patched = await live.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { url } });
      expect(patched.status, `PATCH ${url}`).toBe(200);
    }
  });

  it('refuses each form at delivery, as a stored literal or as what a name resolves to', async () => {
    const { live, endpoint } = await liveSetup('https://hooks.example.com/in');
    const where = parseId('we', endpoint.id)!;
    const received = receiver.requests.length;
    for (const url of HIDDEN_IPV4.slice(0, 3)) {
      await h.db.execute(sql`UPDATE webhook_endpoints SET url = ${url} WHERE id = ${where}::uuid`);
      const event = await liveEvent(live);
      await deliverAt(h.database, webhookOptions());
      const [attempt] = (await live.get(`/v1/events/${event.id}/deliveries`)).body.data;
      expect(attempt, url).toMatchObject({ outcome: 'failed', response_status: null, error: { code: 'destination_forbidden' } });
    }
    await h.db.execute(sql`UPDATE webhook_endpoints SET url = 'https://hooks.rebind.example/in' WHERE id = ${where}::uuid`);
    for (const url of HIDDEN_IPV4) {
      const address = new URL(url).hostname.slice(1, -1);
      const options = webhookOptions({}, { resolver: async () => [{ address, family: 6 }] });
      const event = await liveEvent(live);
      await deliverAt(h.database, options);
      const [attempt] = (await live.get(`/v1/events/${event.id}/deliveries`)).body.data;
      expect(attempt, address).toMatchObject({ outcome: 'failed', error: { code: 'destination_forbidden' } });
      expect(attempt.error.message).toContain(address);
    }
    expect(receiver.requests).toHaveLength(received);
  });
});
