import { sql } from 'drizzle-orm';
import { parseId } from '../src/kernel/ids.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { client, createTenant, createTestDatabase, freePort, orderBody, startTestService, type TestDatabase, type TestService } from './helpers.js';
import { deliverAt, Receiver, verifies, verify, webhookOptions } from './webhooks.helpers.js';
import { attemptDelivery } from '../src/webhooks/attempt.js';
import { claimDeliveries, dispatchEvents } from '../src/webhooks/queue.js';
import { recordOutcomes } from '../src/webhooks/record.js';
import { createSender } from '../src/webhooks/sender.js';
import type { WebhookWorkerOptions } from '../src/worker/worker.js';

let testDb: TestDatabase;
let service: TestService;
let options: WebhookWorkerOptions;
const receivers: Receiver[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase();
  service = await startTestService(testDb);
  options = webhookOptions(service.config);
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
});

async function setup(events: string[] = ['*'], mode: 'test' | 'live' = 'test') {
  const tenant = await createTenant(testDb.database);
  const api = client(service.url, mode === 'test' ? tenant.testKey : tenant.liveKey);
  const receiver = await Receiver.start();
  receivers.push(receiver);
  const created = await api.post('/v1/webhook-endpoints', { url: receiver.url, enabled_events: events });
  expect(created.status).toBe(201);
  return { tenant, api, receiver, endpoint: created.body as { id: string; secret: string } };
}

async function newEvent(api: ReturnType<typeof client>) {
  const order = await api.post('/v1/payment-orders', orderBody());
  expect(order.status).toBe(201);
  const events = await api.get('/v1/events?type=payment_order.created&limit=1');
  expect(events.body.data[0].data.object.id).toBe(order.body.id);
  return { order: order.body, event: events.body.data[0] };
}

describe('webhook delivery', () => {
  it('delivers each event once, signed per Standard Webhooks, with the body GET /v1/events/{id} returns', async () => {
    const { api, receiver, endpoint } = await setup();
    const { event, order } = await newEvent(api);
    const pass = await deliverAt(testDb.database, options);
    expect(pass.attempts).toBeGreaterThanOrEqual(1);
    const got = receiver.forEvent(event.id);
    expect(got).toHaveLength(1);
    const request = got[0]!;
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    const parsed = verify(endpoint.secret, request);
    expect(parsed).toMatchObject({ id: event.id, object: 'event', type: 'payment_order.created', livemode: false });
    expect(parsed.data.object).toMatchObject({ id: order.id, version: 1 });
    const fetched = await api.get(`/v1/events/${event.id}`);
    expect(request.body).toBe(fetched.text);

    // nothing more to do: a second pass sends nothing
    await deliverAt(testDb.database, options);
    expect(receiver.forEvent(event.id)).toHaveLength(1);

    const attempts = await api.get(`/v1/events/${event.id}/deliveries`);
    expect(attempts.status).toBe(200);
    expect(attempts.body.data).toHaveLength(1);
    expect(attempts.body.data[0]).toMatchObject({
      object: 'webhook_delivery_attempt',
      event: event.id,
      event_type: 'payment_order.created',
      webhook_endpoint: endpoint.id,
      url: receiver.url,
      trigger: 'event',
      attempt: 1,
      outcome: 'succeeded',
      response_status: 200,
      error: null,
      next_retry_at: null,
    });
    expect(attempts.body.data[0].id).toMatch(/^wda_/);
    const byEndpoint = await api.get(`/v1/webhook-endpoints/${endpoint.id}/deliveries`);
    expect(byEndpoint.body.data.map((a: any) => a.id)).toContain(attempts.body.data[0].id);
  });

  it('sends the object version so receivers can order updates', async () => {
    const { api, receiver, endpoint } = await setup(['payment_order.*']);
    const { order } = await newEvent(api);
    await api.post(`/v1/payment-orders/${order.id}/cancel`);
    await deliverAt(testDb.database, options);
    const versions = receiver.requests
      .map((r) => verify(endpoint.secret, r))
      .filter((e) => e.data.object.id === order.id)
      .map((e) => [e.type, e.data.object.version]);
    expect(versions.sort()).toEqual([
      ['payment_order.cancelled', 2],
      ['payment_order.created', 1],
    ]);
  });

  it('sends only subscribed types, only to enabled endpoints of the same account and mode that existed at the time', async () => {
    const { tenant, api, receiver } = await setup(['payment_order.cancelled']);
    const wildcard = await Receiver.start();
    const disabled = await Receiver.start();
    receivers.push(wildcard, disabled);
    await api.post('/v1/webhook-endpoints', { url: wildcard.url, enabled_events: ['payment.*', 'payment_order.*'] });
    const { body: off } = await api.post('/v1/webhook-endpoints', { url: disabled.url, enabled_events: ['*'] });
    await api.request('PATCH', `/v1/webhook-endpoints/${off.id}`, { body: { status: 'disabled' } });
    // another account's endpoint must see nothing of it
    const stranger = await setup(['*']);

    const { order, event: created } = await newEvent(api);
    await api.post(`/v1/payment-orders/${order.id}/cancel`);
    // an endpoint created after these events does not receive them
    const late = await Receiver.start();
    receivers.push(late);
    await api.post('/v1/webhook-endpoints', { url: late.url, enabled_events: ['*'] });
    await deliverAt(testDb.database, options);

    const types = (r: Receiver) => r.requests.map((x) => JSON.parse(x.body)).filter((e) => e.data.object.id === order.id).map((e) => e.type).sort();
    expect(types(receiver)).toEqual(['payment_order.cancelled']);
    expect(types(wildcard)).toEqual(['payment_order.cancelled', 'payment_order.created']);
    expect(types(disabled)).toEqual([]);
    expect(types(late)).toEqual([]);
    expect(types(stranger.receiver)).toEqual([]);
    expect(tenant.accountId).toBeTruthy();
    expect(receiver.forEvent(created.id)).toHaveLength(0);
  });

  it('retries after a 500 on the schedule, with the same webhook-id, and lists every attempt', async () => {
    const { api, receiver, endpoint } = await setup();
    receiver.answer = (_r, i) => ({ status: i === 0 ? 500 : 200 });
    const { event } = await newEvent(api);
    const t0 = new Date();
    await deliverAt(testDb.database, options, t0);
    expect(receiver.forEvent(event.id)).toHaveLength(1);
    await deliverAt(testDb.database, options, new Date(t0.getTime() + 4000));
    expect(receiver.forEvent(event.id)).toHaveLength(1);
    await deliverAt(testDb.database, options, new Date(t0.getTime() + 6000));
    const got = receiver.forEvent(event.id);
    expect(got).toHaveLength(2);
    expect(got.every((r) => verifies(endpoint.secret, r))).toBe(true);
    expect(got[0]!.body).toBe(got[1]!.body);

    const attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempts.map((a: any) => [a.attempt, a.outcome, a.response_status])).toEqual([
      [2, 'succeeded', 200],
      [1, 'failed', 500],
    ]);
    expect(attempts[1].error).toMatchObject({ code: 'http_status' });
    // no jitter in this test's settings: exactly 5 s after the failure
    expect(Date.parse(attempts[1].next_retry_at) - t0.getTime()).toBe(5000);
    expect(attempts[0].next_retry_at).toBeNull();
    // the success ended the endpoint's run of failures
    const { rows } = (await testDb.database.db.execute(
      sql`SELECT failing_since FROM webhook_endpoints WHERE id = ${parseId('we', endpoint.id)!}::uuid`,
    )) as unknown as { rows: { failing_since: unknown }[] };
    expect(rows[0]!.failing_since).toBeNull();
  });

  it('retries after a timeout and after a refused connection', async () => {
    const { api, receiver, endpoint } = await setup();
    receiver.answer = (_r, i) => (i === 0 ? { status: 200, delayMs: 1500 } : { status: 200 });
    const fast = { ...options, config: { ...options.config, timeoutMs: 300 } };
    const { event } = await newEvent(api);
    const t0 = new Date();
    await deliverAt(testDb.database, fast, t0);
    let attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempts[0]).toMatchObject({ outcome: 'failed', response_status: null, error: { code: 'timeout' } });
    expect(attempts[0].duration_ms).toBeGreaterThanOrEqual(290);
    await deliverAt(testDb.database, fast, new Date(t0.getTime() + 10_000));
    expect(receiver.forEvent(event.id)).toHaveLength(2);
    expect(new Set(receiver.forEvent(event.id).map((r) => r.headers['webhook-id']))).toEqual(new Set([event.id]));

    // refused: nobody listens on the port; then the endpoint moves to the live receiver
    const port = await freePort();
    await api.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { url: `http://127.0.0.1:${port}/x` } });
    const second = await newEvent(api);
    const t1 = new Date();
    await deliverAt(testDb.database, options, t1);
    attempts = (await api.get(`/v1/events/${second.event.id}/deliveries`)).body.data;
    expect(attempts[0]).toMatchObject({ outcome: 'failed', response_status: null, error: { code: 'connection_refused' }, url: `http://127.0.0.1:${port}/x` });
    await api.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { url: receiver.url } });
    await deliverAt(testDb.database, options, new Date(t1.getTime() + 6000));
    const got = receiver.forEvent(second.event.id);
    expect(got).toHaveLength(1);
    expect(verify(endpoint.secret, got[0]!).id).toBe(second.event.id);
  });

  it('honours Retry-After on 429 and 503', async () => {
    const { api, receiver } = await setup();
    receiver.answer = (_r, i) => (i === 0 ? { status: 503, headers: { 'retry-after': '120' } } : { status: 429, headers: { 'retry-after': '1' } });
    const { event } = await newEvent(api);
    const t0 = new Date();
    await deliverAt(testDb.database, options, t0);
    // the schedule says 5 s, the receiver 120 s: nothing at +60 s
    await deliverAt(testDb.database, options, new Date(t0.getTime() + 60_000));
    expect(receiver.forEvent(event.id)).toHaveLength(1);
    await deliverAt(testDb.database, options, new Date(t0.getTime() + 121_000));
    expect(receiver.forEvent(event.id)).toHaveLength(2);
    const attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(Date.parse(attempts[1].next_retry_at) - t0.getTime()).toBe(120_000);
    // Retry-After shorter than the schedule: the schedule wins (third attempt 300 s later)
    expect(Date.parse(attempts[0].next_retry_at) - (t0.getTime() + 121_000)).toBe(300_000);
  });

  it('does not follow redirects: a 3xx is a failure like any non-2xx', async () => {
    const { api, receiver } = await setup();
    const target = await Receiver.start();
    receivers.push(target);
    receiver.answer = () => ({ status: 307, headers: { location: target.url } });
    const { event } = await newEvent(api);
    await deliverAt(testDb.database, options);
    expect(receiver.forEvent(event.id)).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
    const [attempt] = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempt).toMatchObject({ outcome: 'failed', response_status: 307, error: { code: 'http_status' } });
    expect(attempt.next_retry_at).not.toBeNull();
  });

  it('gives up when the schedule is used up', async () => {
    const { api, receiver } = await setup();
    receiver.answer = () => ({ status: 500 });
    const short = { ...options, config: { ...options.config, retryScheduleS: { live: [0, 0, 0], test: [0, 0, 0] } } };
    const { event } = await newEvent(api);
    await deliverAt(testDb.database, short);
    await deliverAt(testDb.database, short);
    expect(receiver.forEvent(event.id)).toHaveLength(3);
    const attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempts.map((a: any) => [a.attempt, a.next_retry_at === null])).toEqual([
      [3, true],
      [2, false],
      [1, false],
    ]);
  });

  it('disables an endpoint that answers 410 Gone, with an event', async () => {
    const { api, receiver, endpoint } = await setup();
    const watcher = await Receiver.start();
    receivers.push(watcher);
    await api.post('/v1/webhook-endpoints', { url: watcher.url, enabled_events: ['webhook_endpoint.*'] });
    receiver.answer = () => ({ status: 410 });
    const { event } = await newEvent(api);
    const t0 = new Date();
    await deliverAt(testDb.database, options, t0);
    const fetched = await api.get(`/v1/webhook-endpoints/${endpoint.id}`);
    expect(fetched.body).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
    const attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempts[0]).toMatchObject({ response_status: 410, next_retry_at: null });
    // no retry, and later events are not sent to it
    await newEvent(api);
    await deliverAt(testDb.database, options, new Date(t0.getTime() + 3600_000));
    expect(receiver.requests).toHaveLength(1);
    // the disabling is an event, delivered to the account's other endpoints
    const disabledEvents = (await api.get('/v1/events?type=webhook_endpoint.disabled')).body.data;
    expect(disabledEvents[0].data.object).toMatchObject({ id: endpoint.id, status: 'disabled', disabled_reason: 'gone' });
    expect(watcher.forEvent(disabledEvents[0].id)).toHaveLength(1);
  });

  it('disables an endpoint that has been failing for days, with an event', async () => {
    const { api, receiver, endpoint } = await setup();
    receiver.answer = () => ({ status: 500 });
    const days = { ...options, config: { ...options.config, disableAfterFailingS: 3 * 86400, retryScheduleS: { live: [0, 86400, 86400, 86400, 86400], test: [0, 86400, 86400, 86400, 86400] } } };
    await newEvent(api);
    const t0 = new Date();
    for (let day = 0; day <= 2; day++) await deliverAt(testDb.database, days, new Date(t0.getTime() + day * 86400_000 + 1000));
    expect((await api.get(`/v1/webhook-endpoints/${endpoint.id}`)).body.status).toBe('enabled');
    await deliverAt(testDb.database, days, new Date(t0.getTime() + 3 * 86400_000 + 2000));
    const fetched = (await api.get(`/v1/webhook-endpoints/${endpoint.id}`)).body;
    expect(fetched).toMatchObject({ status: 'disabled', disabled_reason: 'failing' });
    const [disabled] = (await api.get('/v1/events?type=webhook_endpoint.disabled')).body.data;
    expect(disabled.data.object).toMatchObject({ id: endpoint.id, disabled_reason: 'failing' });

    // re-enabled, it starts afresh; a success clears the failure run
    await api.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { status: 'enabled' } });
    receiver.answer = () => ({ status: 200 });
    const { event } = await newEvent(api);
    await deliverAt(testDb.database, days);
    expect(receiver.forEvent(event.id)).toHaveLength(1);
  });

  it('signs with both secrets during the grace period of a rotation, then with the new one only', async () => {
    const { api, receiver, endpoint } = await setup();
    const rotated = (await api.post(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { grace_period_seconds: 2 })).body;
    const first = await newEvent(api);
    await deliverAt(testDb.database, options);
    const during = receiver.forEvent(first.event.id)[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifies(endpoint.secret, during)).toBe(true);
    expect(verifies(rotated.secret, during)).toBe(true);

    await new Promise((r) => setTimeout(r, Date.parse(rotated.previous_secret_expires_at) - Date.now() + 50));
    const second = await newEvent(api);
    await deliverAt(testDb.database, options);
    const after = receiver.forEvent(second.event.id)[0]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifies(rotated.secret, after)).toBe(true);
    expect(verifies(endpoint.secret, after)).toBe(false);
    expect((await api.get(`/v1/webhook-endpoints/${endpoint.id}`)).body.previous_secret_expires_at).toBeNull();
  });

  it('redelivers an event on request, with the same webhook-id', async () => {
    const { api, receiver, endpoint } = await setup();
    const other = await Receiver.start();
    receivers.push(other);
    const { body: second } = await api.post('/v1/webhook-endpoints', { url: other.url, enabled_events: ['payment_order.created'] });
    const { event } = await newEvent(api);
    await deliverAt(testDb.database, options);
    expect(receiver.forEvent(event.id)).toHaveLength(1);

    const one = await api.post(`/v1/events/${event.id}/redeliver`, { webhook_endpoint: endpoint.id });
    expect(one.status).toBe(202);
    expect(one.body).toEqual({ object: 'event_redelivery', event: event.id, webhook_endpoints: [endpoint.id] });
    await deliverAt(testDb.database, options);
    expect(receiver.forEvent(event.id)).toHaveLength(2);
    expect(other.forEvent(event.id)).toHaveLength(1);
    expect(verify(endpoint.secret, receiver.forEvent(event.id)[1]!).id).toBe(event.id);

    const all = await api.post(`/v1/events/${event.id}/redeliver`);
    expect(all.body.webhook_endpoints.sort()).toEqual([endpoint.id, second.id].sort());
    await deliverAt(testDb.database, options);
    expect(receiver.forEvent(event.id)).toHaveLength(3);
    expect(other.forEvent(event.id)).toHaveLength(2);
    const attempts = (await api.get(`/v1/webhook-endpoints/${endpoint.id}/deliveries`)).body.data;
    expect(attempts.map((a: any) => a.trigger)).toEqual(['redeliver', 'redeliver', 'event']);

    await api.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { status: 'disabled' } });
    const refused = await api.post(`/v1/events/${event.id}/redeliver`, { webhook_endpoint: endpoint.id });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('invalid_state');
    expect((await api.post('/v1/events/evt_01jd8x3v0pe7wbz0m4k6f2n9qa/redeliver')).status).toBe(404);
    expect((await api.post(`/v1/events/${event.id}/redeliver`, { webhook_endpoint: 'we_01jd8x3v0pe7wbz0m4k6f2n9qa' })).status).toBe(404);
  });

  it('stops delivering to a deleted endpoint, even retries already scheduled', async () => {
    const { api, receiver, endpoint } = await setup();
    receiver.answer = () => ({ status: 500 });
    const { event } = await newEvent(api);
    const t0 = new Date();
    await deliverAt(testDb.database, options, t0);
    await api.request('DELETE', `/v1/webhook-endpoints/${endpoint.id}`);
    await deliverAt(testDb.database, options, new Date(t0.getTime() + 3600_000));
    expect(receiver.forEvent(event.id)).toHaveLength(1);
  });
});

describe('webhook delivery across crashes', () => {
  it('a lease that runs out makes an attempt lost in a crash due again, without using up a retry', async () => {
    const { api, receiver, endpoint } = await setup();
    const { event } = await newEvent(api);
    const t0 = new Date();
    await dispatchEvents(testDb.database.db, t0, 1000);
    // a worker claims everything due and dies before sending
    const claimed = await claimDeliveries(testDb.database.db, t0, options.config.leaseMs, 1000);
    expect(claimed.some((c) => c.eventId && receiver)).toBe(true);
    // while the lease holds, nobody else sends it
    await deliverAt(testDb.database, options, new Date(t0.getTime() + options.config.leaseMs - 1000));
    expect(receiver.forEvent(event.id)).toHaveLength(0);
    // once it has run out, the next worker does
    await deliverAt(testDb.database, options, new Date(t0.getTime() + options.config.leaseMs + 1));
    expect(receiver.forEvent(event.id)).toHaveLength(1);
    expect(verify(endpoint.secret, receiver.forEvent(event.id)[0]!).id).toBe(event.id);
    const attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempts.map((a: any) => a.attempt)).toEqual([1]);
  });

  it('a worker that stalled past its lease cannot overwrite the newer holder', async () => {
    const { api, receiver } = await setup();
    receiver.answer = (_r, i) => ({ status: i === 0 ? 500 : 200 });
    const { event } = await newEvent(api);
    const t0 = new Date();
    await dispatchEvents(testDb.database.db, t0, 1000);
    const sender = createSender();
    const deps = { db: testDb.database.db, config: options.config, encryptor: options.encryptor, sender, now: () => t0, random: () => 0.5 };
    try {
      const stale = (await claimDeliveries(testDb.database.db, t0, options.config.leaseMs, 1000)).filter((c) => c.eventId);
      const staleDone = await Promise.all(stale.map((c) => attemptDelivery(deps, c)));
      // the lease runs out; another worker takes the delivery over and succeeds
      const later = new Date(t0.getTime() + options.config.leaseMs + 1);
      await deliverAt(testDb.database, options, later);
      // the stale worker's failure (500) arrives late: recorded as an attempt, but changes nothing
      await recordOutcomes({ ...deps, now: () => later }, staleDone);
    } finally {
      sender.close();
    }
    await deliverAt(testDb.database, options, new Date(t0.getTime() + 3600_000));
    expect(receiver.forEvent(event.id)).toHaveLength(2);
    const attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempts.map((a: any) => a.outcome).sort()).toEqual(['failed', 'succeeded']);
  });
});
