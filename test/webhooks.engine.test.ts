// The continuous delivery loop as `npm start` runs it: api and worker in one process, on both
// databases, with the test-mode schedule compressed to fractions of a second.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { client, createTenant, createTestDatabase, orderBody, startTestService, type TestDatabase, type TestService } from './helpers.js';
import { Receiver, verify } from './webhooks.helpers.js';

let testDb: TestDatabase;
let service: TestService;
let receiver: Receiver;

beforeAll(async () => {
  testDb = await createTestDatabase();
  const defaults = loadConfig({});
  service = await startTestService(testDb, {
    roles: ['api', 'worker'],
    webhooks: { ...defaults.webhooks, pollIntervalMs: 10, retryJitterRatio: 0, retryScheduleS: { live: defaults.webhooks.retryScheduleS.live, test: [0, 0.2, 0.2] } },
  });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await service?.close();
  await receiver?.close();
  await testDb?.drop();
});

describe('delivery engine in the service process', () => {
  it('delivers soon after commit and retries on the compressed test-mode schedule', async () => {
    const tenant = await createTenant(testDb.database);
    const api = client(service.url, tenant.testKey);
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

describe('delivery engine: one slow endpoint does not hold up the others', () => {
  // Its own database: the only worker there is the capped one.
  let ownDb: TestDatabase;
  let capped: TestService;
  let slow: Receiver;
  let fast: Receiver;

  beforeAll(async () => {
    const defaults = loadConfig({});
    ownDb = await createTestDatabase();
    capped = await startTestService(ownDb, {
      roles: ['api', 'worker'],
      webhooks: { ...defaults.webhooks, pollIntervalMs: 10, concurrency: 8, endpointConcurrency: 3 },
    });
    slow = await Receiver.start();
    slow.answer = () => ({ status: 200, delayMs: 10_000 });
    fast = await Receiver.start();
  });
  afterAll(async () => {
    // The slow receiver first: its held requests end at once instead of after their delay.
    await slow?.close();
    await capped?.close();
    await fast?.close();
    await ownDb?.drop();
  });

  it('keeps at most WEBHOOK_ENDPOINT_CONCURRENCY attempts in flight to an endpoint; the rest of the slots serve others', async () => {
    const tenant = await createTenant(ownDb.database, 'Slow and fast');
    const api = client(capped.url, tenant.testKey);
    await api.post('/v1/webhook-endpoints', { url: slow.url, enabled_events: ['payment_order.created'] });
    // Ten deliveries to the slow endpoint come due first: without a cap they would fill all eight slots.
    for (let i = 0; i < 10; i++) expect((await api.post('/v1/payment-orders', orderBody())).status).toBe(201);
    await slow.waitFor(() => slow.requests.length >= 3, 10_000);

    const fastEndpoint = (await api.post('/v1/webhook-endpoints', { url: fast.url, enabled_events: ['payment_order.created'] })).body;
    const orders: string[] = [];
    for (let i = 0; i < 5; i++) orders.push((await api.post('/v1/payment-orders', orderBody())).body.id);
    await fast.waitFor(() => fast.requests.length >= 5, 8_000);
    expect(fast.requests.map((r) => verify(fastEndpoint.secret, r).data.object.id).sort()).toEqual([...orders].sort());
    // None of the slow endpoint's attempts has finished, so it never had more than its three.
    expect(slow.requests).toHaveLength(3);
  });
});
