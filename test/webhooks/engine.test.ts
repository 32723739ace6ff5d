// The continuous delivery loop as `npm start` runs it: api and worker in one process, on both
// databases, with the test-mode schedule compressed to fractions of a second.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { orderBody } from '../support/helpers.js';
import { verify } from '../support/webhooks.js';
import { useService } from '../support/fixtures.js';

const defaults = loadConfig({});
const h = useService({
  overrides: {
    roles: ['api', 'worker'],
    webhooks: { ...defaults.webhooks, pollIntervalMs: 10, retryJitterRatio: 0, retryScheduleS: { live: defaults.webhooks.retryScheduleS.live, test: [0, 0.2, 0.2] } },
  },
});

describe('delivery engine in the service process', () => {
  it('delivers soon after commit and retries on the compressed test-mode schedule', async () => {
    const { api } = h;
    const receiver = await h.receiver();
    const { body: endpoint } = await api.post('/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['payment_order.created'] });
    receiver.answer = (_r, i) => ({ status: i < 2 ? 500 : 200 });
    const committed = Date.now();
    const order = (await api.post('/v1/payment-orders', orderBody())).body;
    await receiver.waitFor(() => receiver.requests.length >= 3, 10_000);
    const [first, , third] = receiver.requests;
    expect(first!.receivedAtMs - committed).toBeLessThan(2000);
    expect(third!.receivedAtMs - first!.receivedAtMs).toBeGreaterThanOrEqual(350);
    expect(verify(endpoint.secret, third!).data.object.id).toBe(order.id);
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    const event = (await api.get('/v1/events?type=payment_order.created&limit=1')).body.data[0];
    for (let i = 0; i < 50; i++) {
      const attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
      if (attempts.length === 3) {
        expect(attempts.map((a: any) => a.outcome)).toEqual(['succeeded', 'failed', 'failed']);
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the attempts were not recorded');
  });
});
