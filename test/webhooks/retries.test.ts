// When a delivery fails: retries on the schedule (500, timeout, refused connection, Retry-After,
// redirects), giving up, endpoints disabled (410 Gone, failing for days) or deleted, and attempts
// lost in a worker's crash, taken over once their lease runs out.
import crypto from 'node:crypto';
import { closedPort } from '../support/sockets.js';
import { sql } from 'drizzle-orm';
import { parseId } from '../../src/kernel/ids.js';
import { describe, expect, it } from 'vitest';

import { deliverAt, newOrderEvent, subscribedTenant, verifies, verify, webhookOptions } from '../support/webhooks.js';
import { attemptDelivery } from '../../src/domain/webhooks/delivery/attempt.js';
import { claimDeliveries, dispatchEvents, type ClaimedDelivery } from '../../src/domain/webhooks/delivery/queue.js';
import { recordOutcomes } from '../../src/domain/webhooks/delivery/record.js';
import { createSender } from '../../src/domain/webhooks/sender.js';
import { useService } from '../support/fixtures.js';

const h = useService();
const options = webhookOptions();

describe('webhook delivery: failures and retries', () => {
  it('retries after a 500 on the schedule, with the same webhook-id, and lists every attempt', async () => {
    const { api, receiver, endpoint } = await subscribedTenant(h);
    receiver.answer = (_r, i) => ({ status: i === 0 ? 500 : 200 });
    const { event } = await newOrderEvent(api);
    const t0 = new Date();
    await deliverAt(h.database, options, t0);
    expect(receiver.forEvent(event.id)).toHaveLength(1);
    await deliverAt(h.database, options, new Date(t0.getTime() + 4000));
    expect(receiver.forEvent(event.id)).toHaveLength(1);
    await deliverAt(h.database, options, new Date(t0.getTime() + 6000));
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
    const { rows } = (await h.db.execute(
      sql`SELECT failing_since FROM webhook_endpoints WHERE id = ${parseId('we', endpoint.id)!}::uuid`,
    )) as unknown as { rows: { failing_since: unknown }[] };
    expect(rows[0]!.failing_since).toBeNull();
  });

  it('retries after a timeout and after a refused connection', async () => {
    const { api, receiver, endpoint } = await subscribedTenant(h);
    receiver.answer = (_r, i) => (i === 0 ? { status: 200, delayMs: 1500 } : { status: 200 });
    const fast = { ...options, config: { ...options.config, timeoutMs: 300 } };
    const { event } = await newOrderEvent(api);
    const t0 = new Date();
    await deliverAt(h.database, fast, t0);
    let attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempts[0]).toMatchObject({ outcome: 'failed', response_status: null, error: { code: 'timeout' } });
    expect(attempts[0].duration_ms).toBeGreaterThanOrEqual(290);
    await deliverAt(h.database, fast, new Date(t0.getTime() + 10_000));
    expect(receiver.forEvent(event.id)).toHaveLength(2);
    expect(new Set(receiver.forEvent(event.id).map((r) => r.headers['webhook-id']))).toEqual(new Set([event.id]));

    // refused: nobody listens on the port; then the endpoint moves to the live receiver
    const port = await closedPort();
    await api.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { url: `http://127.0.0.1:${port}/x` } });
    const second = await newOrderEvent(api);
    const t1 = new Date();
    await deliverAt(h.database, options, t1);
    attempts = (await api.get(`/v1/events/${second.event.id}/deliveries`)).body.data;
    expect(attempts[0]).toMatchObject({ outcome: 'failed', response_status: null, error: { code: 'connection_refused' }, url: `http://127.0.0.1:${port}/x` });
    await api.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { url: receiver.url } });
    await deliverAt(h.database, options, new Date(t1.getTime() + 6000));
    const got = receiver.forEvent(second.event.id);
    expect(got).toHaveLength(1);
    expect(verify(endpoint.secret, got[0]!).id).toBe(second.event.id);
  });

  it('honours Retry-After on 429 and 503', async () => {
    const { api, receiver } = await subscribedTenant(h);
    receiver.answer = (_r, i) => (i === 0 ? { status: 503, headers: { 'retry-after': '120' } } : { status: 429, headers: { 'retry-after': '1' } });
    const { event } = await newOrderEvent(api);
    const t0 = new Date();
    await deliverAt(h.database, options, t0);
    // the schedule says 5 s, the receiver 120 s: nothing at +60 s
    await deliverAt(h.database, options, new Date(t0.getTime() + 60_000));
    expect(receiver.forEvent(event.id)).toHaveLength(1);
    await deliverAt(h.database, options, new Date(t0.getTime() + 121_000));
    expect(receiver.forEvent(event.id)).toHaveLength(2);
    const attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(Date.parse(attempts[1].next_retry_at) - t0.getTime()).toBe(120_000);
    // Retry-After shorter than the schedule: the schedule wins (third attempt 300 s later)
    expect(Date.parse(attempts[0].next_retry_at) - (t0.getTime() + 121_000)).toBe(300_000);
  });

  it('does not follow redirects: a 3xx is a failure like any non-2xx', async () => {
    const { api, receiver } = await subscribedTenant(h);
    const target = await h.receiver();
    receiver.answer = () => ({ status: 307, headers: { location: target.url } });
    const { event } = await newOrderEvent(api);
    await deliverAt(h.database, options);
    expect(receiver.forEvent(event.id)).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
    const [attempt] = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempt).toMatchObject({ outcome: 'failed', response_status: 307, error: { code: 'http_status' } });
    expect(attempt.next_retry_at).not.toBeNull();
  });

  it('gives up when the schedule is used up', async () => {
    const { api, receiver } = await subscribedTenant(h);
    receiver.answer = () => ({ status: 500 });
    const short = { ...options, config: { ...options.config, retryScheduleS: { live: [0, 0, 0], test: [0, 0, 0] } } };
    const { event } = await newOrderEvent(api);
    await deliverAt(h.database, short);
    await deliverAt(h.database, short);
    expect(receiver.forEvent(event.id)).toHaveLength(3);
    const attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempts.map((a: any) => [a.attempt, a.next_retry_at === null])).toEqual([
      [3, true],
      [2, false],
      [1, false],
    ]);
  });

  it('disables an endpoint that answers 410 Gone, with an event', async () => {
    const { api, receiver, endpoint } = await subscribedTenant(h);
    const watcher = await h.receiver();
    await api.post('/v1/webhook-endpoints', { url: watcher.url, enabled_events: ['webhook_endpoint.*'] });
    receiver.answer = () => ({ status: 410 });
    const { event } = await newOrderEvent(api);
    const t0 = new Date();
    await deliverAt(h.database, options, t0);
    const fetched = await api.get(`/v1/webhook-endpoints/${endpoint.id}`);
    expect(fetched.body).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
    const attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempts[0]).toMatchObject({ response_status: 410, next_retry_at: null });
    // no retry, and later events are not sent to it
    await newOrderEvent(api);
    await deliverAt(h.database, options, new Date(t0.getTime() + 3600_000));
    expect(receiver.requests).toHaveLength(1);
    // the disabling is an event, delivered to the account's other endpoints
    const disabledEvents = (await api.get('/v1/events?type=webhook_endpoint.disabled')).body.data;
    expect(disabledEvents[0].data.object).toMatchObject({ id: endpoint.id, status: 'disabled', disabled_reason: 'gone' });
    expect(watcher.forEvent(disabledEvents[0].id)).toHaveLength(1);
  });

  it('disables an endpoint that has been failing for days, with an event', async () => {
    const { api, receiver, endpoint } = await subscribedTenant(h);
    receiver.answer = () => ({ status: 500 });
    const days = { ...options, config: { ...options.config, disableAfterFailingS: 3 * 86400, retryScheduleS: { live: [0, 86400, 86400, 86400, 86400], test: [0, 86400, 86400, 86400, 86400] } } };
    await newOrderEvent(api);
    const t0 = new Date();
    for (let day = 0; day <= 2; day++) await deliverAt(h.database, days, new Date(t0.getTime() + day * 86400_000 + 1000));
    expect((await api.get(`/v1/webhook-endpoints/${endpoint.id}`)).body.status).toBe('enabled');
    await deliverAt(h.database, days, new Date(t0.getTime() + 3 * 86400_000 + 2000));
    const fetched = (await api.get(`/v1/webhook-endpoints/${endpoint.id}`)).body;
    expect(fetched).toMatchObject({ status: 'disabled', disabled_reason: 'failing' });
    const [disabled] = (await api.get('/v1/events?type=webhook_endpoint.disabled')).body.data;
    expect(disabled.data.object).toMatchObject({ id: endpoint.id, disabled_reason: 'failing' });

    // re-enabled, it starts afresh; a success clears the failure run
    await api.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { status: 'enabled' } });
    receiver.answer = () => ({ status: 200 });
    const { event } = await newOrderEvent(api);
    await deliverAt(h.database, days);
    expect(receiver.forEvent(event.id)).toHaveLength(1);
  });

  it('stops delivering to a deleted endpoint, even retries already scheduled', async () => {
    const { api, receiver, endpoint } = await subscribedTenant(h);
    receiver.answer = () => ({ status: 500 });
    const { event } = await newOrderEvent(api);
    const t0 = new Date();
    await deliverAt(h.database, options, t0);
    await api.request('DELETE', `/v1/webhook-endpoints/${endpoint.id}`);
    await deliverAt(h.database, options, new Date(t0.getTime() + 3600_000));
    expect(receiver.forEvent(event.id)).toHaveLength(1);
  });
});

describe('webhook delivery across crashes', () => {
  // A worker leases a delivery either by claiming it once due or as the dispatch creates it.
  const leaseEverything: Record<string, (t0: Date) => Promise<ClaimedDelivery[]>> = {
    claimed: async (t0) => {
      await dispatchEvents(h.db, t0, 1000);
      return claimDeliveries(h.db, t0, options.config.leaseMs, 1000);
    },
    'leased at dispatch': async (t0) => (await dispatchEvents(h.db, t0, 1000, { id: crypto.randomUUID(), ms: options.config.leaseMs, limit: 1000 })).leased,
  };

  it.each(Object.keys(leaseEverything))('a lease that runs out makes an attempt lost in a crash due again, without using up a retry (%s)', async (how) => {
    const { api, receiver, endpoint } = await subscribedTenant(h);
    const { event } = await newOrderEvent(api);
    const t0 = new Date();
    // a worker leases everything and dies before sending
    const leased = await leaseEverything[how]!(t0);
    expect(leased.map((c) => c.eventId)).toContain(parseId('evt', event.id));
    // while the lease holds, nobody else sends it
    await deliverAt(h.database, options, new Date(t0.getTime() + options.config.leaseMs - 1000));
    expect(receiver.forEvent(event.id)).toHaveLength(0);
    // once it has run out, the next worker does
    await deliverAt(h.database, options, new Date(t0.getTime() + options.config.leaseMs + 1));
    expect(receiver.forEvent(event.id)).toHaveLength(1);
    expect(verify(endpoint.secret, receiver.forEvent(event.id)[0]!).id).toBe(event.id);
    const attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempts.map((a: any) => a.attempt)).toEqual([1]);
  });

  it('a worker that stalled past its lease cannot overwrite the newer holder', async () => {
    const { api, receiver } = await subscribedTenant(h);
    receiver.answer = (_r, i) => ({ status: i === 0 ? 500 : 200 });
    const { event } = await newOrderEvent(api);
    const t0 = new Date();
    await dispatchEvents(h.db, t0, 1000);
    const sender = createSender();
    const deps = { db: h.db, config: options.config, encryptor: options.encryptor, sender, now: () => t0, random: () => 0.5 };
    try {
      const stale = (await claimDeliveries(h.db, t0, options.config.leaseMs, 1000)).filter((c) => c.eventId);
      const staleDone = await Promise.all(stale.map((c) => attemptDelivery(deps, c)));
      // the lease runs out; another worker takes the delivery over and succeeds
      const later = new Date(t0.getTime() + options.config.leaseMs + 1);
      await deliverAt(h.database, options, later);
      // the stale worker's failure (500) arrives late: recorded as an attempt, but changes nothing
      await recordOutcomes({ ...deps, now: () => later }, staleDone);
    } finally {
      sender.close();
    }
    await deliverAt(h.database, options, new Date(t0.getTime() + 3600_000));
    expect(receiver.forEvent(event.id)).toHaveLength(2);
    const attempts = (await api.get(`/v1/events/${event.id}/deliveries`)).body.data;
    expect(attempts.map((a: any) => a.outcome).sort()).toEqual(['failed', 'succeeded']);
  });
});
