// The SSRF guard at delivery time: live mode checks the address actually connected to, at every
// attempt, so a name that resolved to a public address yesterday and to 127.0.0.1 today (DNS
// rebinding) is refused, and nothing ever reaches the local receiver.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { orderBody, type Api } from '../support/helpers.js';
import { deliverAt, Receiver, webhookOptions } from '../support/webhooks.js';
import { parseId } from '../../src/kernel/ids.js';
import type { LookupAddress } from '../../src/webhooks/sender.js';
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
});
