// Webhook delivery by the worker (dispatch, then attempts due at an injected time): each event once,
// signed per Standard Webhooks, to the enabled endpoints of its account and mode subscribed to it
// when it happened; secret rotation; redelivery on request.
import { describe, expect, it } from 'vitest';
import { deliverAt, newOrderEvent, Receiver, subscribedTenant, verifies, verify, webhookOptions } from '../support/webhooks.js';
import { useService } from '../support/fixtures.js';

const h = useService();
const options = webhookOptions();

describe('webhook delivery', () => {
  it('delivers each event once, signed per Standard Webhooks, with the body GET /v1/events/{id} returns', async () => {
    const { api, receiver, endpoint } = await subscribedTenant(h);
    const { event, order } = await newOrderEvent(api);
    const pass = await deliverAt(h.database, options);
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
    await deliverAt(h.database, options);
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
    const { api, receiver, endpoint } = await subscribedTenant(h, ['payment_order.*']);
    const { order } = await newOrderEvent(api);
    await api.post(`/v1/payment-orders/${order.id}/cancel`);
    await deliverAt(h.database, options);
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
    const { api, receiver } = await subscribedTenant(h, ['payment_order.cancelled']);
    const wildcard = await h.receiver();
    const disabled = await h.receiver();
    const { body: wild } = await api.post('/v1/webhook-endpoints', { url: wildcard.url, enabled_events: ['payment.*', 'payment_order.*'] });
    const { body: off } = await api.post('/v1/webhook-endpoints', { url: disabled.url, enabled_events: ['*'] });
    await api.request('PATCH', `/v1/webhook-endpoints/${off.id}`, { body: { status: 'disabled' } });
    // another account's endpoint must see nothing of it
    const stranger = await subscribedTenant(h, ['*']);

    const { order, event: created } = await newOrderEvent(api);
    await api.post(`/v1/payment-orders/${order.id}/cancel`);
    // an endpoint created after these events does not receive them
    const late = await h.receiver();
    await api.post('/v1/webhook-endpoints', { url: late.url, enabled_events: ['*'] });
    await deliverAt(h.database, options);

    const types = (r: Receiver) => r.requests.map((x) => JSON.parse(x.body)).filter((e) => e.data.object.id === order.id).map((e) => e.type).sort();
    expect(types(receiver)).toEqual(['payment_order.cancelled']);
    expect(types(wildcard)).toEqual(['payment_order.cancelled', 'payment_order.created']);
    expect(types(disabled)).toEqual([]);
    expect(types(late)).toEqual([]);
    expect(types(stranger.receiver)).toEqual([]);
    expect(receiver.forEvent(created.id)).toHaveLength(0);
    // The created event was attempted at the wildcard endpoint alone; the stranger cannot even see it.
    const attempts = (await api.get(`/v1/events/${created.id}/deliveries`)).body.data;
    expect(attempts.map((a: any) => [a.webhook_endpoint, a.outcome])).toEqual([[wild.id, 'succeeded']]);
    expect((await stranger.api.get(`/v1/events/${created.id}`)).status).toBe(404);
  });

  it('signs with both secrets during the grace period of a rotation, then with the new one only', async () => {
    const { api, receiver, endpoint } = await subscribedTenant(h);
    const rotated = (await api.post(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { grace_period_seconds: 2 })).body;
    const first = await newOrderEvent(api);
    await deliverAt(h.database, options);
    const during = receiver.forEvent(first.event.id)[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifies(endpoint.secret, during)).toBe(true);
    expect(verifies(rotated.secret, during)).toBe(true);

    await new Promise((r) => setTimeout(r, Date.parse(rotated.previous_secret_expires_at) - Date.now() + 50));
    const second = await newOrderEvent(api);
    await deliverAt(h.database, options);
    const after = receiver.forEvent(second.event.id)[0]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifies(rotated.secret, after)).toBe(true);
    expect(verifies(endpoint.secret, after)).toBe(false);
    expect((await api.get(`/v1/webhook-endpoints/${endpoint.id}`)).body.previous_secret_expires_at).toBeNull();
  });

  it('redelivers an event on request, with the same webhook-id', async () => {
    const { api, receiver, endpoint } = await subscribedTenant(h);
    const other = await h.receiver();
    const { body: second } = await api.post('/v1/webhook-endpoints', { url: other.url, enabled_events: ['payment_order.created'] });
    const { event } = await newOrderEvent(api);
    await deliverAt(h.database, options);
    expect(receiver.forEvent(event.id)).toHaveLength(1);

    const one = await api.post(`/v1/events/${event.id}/redeliver`, { webhook_endpoint: endpoint.id });
    expect(one.status).toBe(202);
    expect(one.body).toEqual({ object: 'event_redelivery', event: event.id, webhook_endpoints: [endpoint.id] });
    await deliverAt(h.database, options);
    expect(receiver.forEvent(event.id)).toHaveLength(2);
    expect(other.forEvent(event.id)).toHaveLength(1);
    expect(verify(endpoint.secret, receiver.forEvent(event.id)[1]!).id).toBe(event.id);

    const all = await api.post(`/v1/events/${event.id}/redeliver`);
    expect(all.body.webhook_endpoints.sort()).toEqual([endpoint.id, second.id].sort());
    await deliverAt(h.database, options);
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
});
