// Idempotency as docs/api-conventions.md describes it, through the API: the header, scope account + mode + key, fingerprint =
// method + path + canonical body, byte-for-byte replay, 422 on reuse, stored refusals.
import { describe, expect, it } from 'vitest';
import { issueKey } from '../../src/domain/accounts/service.js';
import { newId } from '../../src/kernel/ids.js';
import { orderBody } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';
import { newKey, idempotencyKit } from '../support/idempotency.js';


const h = useService();
const { api } = h;
const { ordersWithReference, eventCount, keyRow, create } = idempotencyKit(h);

describe('idempotency: the header', () => {
  it('is required on money-moving POSTs and validated', async () => {
    const missing = await api.post('/v1/payment-orders', orderBody(), { idempotencyKey: undefined });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ type: 'validation', code: 'idempotency_key_missing' });

    for (const bad of ['x'.repeat(256), 'café']) {
      const res = await api.post('/v1/payment-orders', orderBody(), { headers: { 'idempotency-key': bad }, idempotencyKey: undefined });
      expect(res.status, bad).toBe(400);
      expect(res.body.error.code).toBe('idempotency_key_invalid');
    }
    const longest = await create(orderBody(), 'k'.repeat(255));
    expect(longest.status).toBe(201);
  });

  it('is optional on the other POSTs (cancel works without it)', async () => {
    const { body: order } = await create(orderBody(), newKey());
    const cancelled = await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: undefined });
    expect(cancelled.status).toBe(200);
  });
});

describe('idempotency: replay', () => {
  it('replays the stored answer byte-for-byte with Idempotent-Replayed: true and no second side effect', async () => {
    const key = newKey();
    const body = orderBody({ metadata: { cart: '7' } });
    const first = await create(body, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    // Keys in another order are the same canonical body, hence the same fingerprint.
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    for (const again of [body, reordered]) {
      const replay = await create(again, key);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(first.text);
      expect(replay.body.id).toBe(first.body.id);
      expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'));
      // A replay is a new request: its own request id, but the stored body.
      expect(replay.headers.get('request-id')).not.toBe(first.headers.get('request-id'));
    }

    const rows = await ordersWithReference(body.reference);
    expect(rows).toHaveLength(1);
    expect(await eventCount('payment_order.created', first.body.id)).toBe(1);

    const record = await keyRow(key);
    expect(record).toMatchObject({ response_status: 201, response_body: first.text, recovery_point: 'finished', locked_at: null });
    expect(record!.retention_s).toBe(24 * 3600);
  });

  it('is scoped by account and mode, not by API key', async () => {
    const key = newKey();
    const body = orderBody();
    const first = await create(body, key);
    expect(first.status).toBe(201);

    // Another test key of the same account shares the scope: replay.
    const second = await issueKey(h.db, h.tenant.accountId, { livemode: false });
    const sameScope = await create(body, key, second.secret);
    expect(sameScope.status).toBe(201);
    expect(sameScope.headers.get('idempotent-replayed')).toBe('true');
    expect(sameScope.text).toBe(first.text);

    // The other mode of the same account: a new order.
    const live = await create(body, key, h.tenant.liveKey);
    expect(live.status).toBe(201);
    expect(live.headers.get('idempotent-replayed')).toBeNull();
    expect(live.body).toMatchObject({ livemode: true });
    expect(live.body.id).not.toBe(first.body.id);

    // Another account: a new order too, even with a different body (nothing is shared).
    const other = await h.createTenant('Other tenant');
    const foreign = await create({ ...body, amount: 5 }, key, other.testKey);
    expect(foreign.status).toBe(201);
    expect(foreign.headers.get('idempotent-replayed')).toBeNull();
    expect(foreign.body.id).not.toBe(first.body.id);

    const rows = await ordersWithReference(body.reference);
    expect(rows).toHaveLength(3);
    // Each scope replays its own answer.
    expect((await create(body, key, h.tenant.liveKey)).text).toBe(live.text);
    expect((await create({ ...body, amount: 5 }, key, other.testKey)).text).toBe(foreign.text);
    expect((await create(body, key)).text).toBe(first.text);
  });

  it('answers 422 idempotency_key_reused for another body or another path, and keeps the original', async () => {
    const key = newKey();
    const body = orderBody();
    const first = await create(body, key);
    expect(first.status).toBe(201);

    const otherBody = await create({ ...body, amount: body.amount + 1 }, key);
    expect(otherBody.status).toBe(422);
    expect(otherBody.headers.get('idempotent-replayed')).toBeNull();
    expect(otherBody.body.error).toMatchObject({ type: 'validation', code: 'idempotency_key_reused' });
    expect(otherBody.body.error.request_id).toBe(otherBody.headers.get('request-id'));

    const otherPath = await api.post(`/v1/payment-orders/${first.body.id}/cancel`, undefined, { idempotencyKey: key });
    expect(otherPath.status).toBe(422);
    expect(otherPath.body.error.code).toBe('idempotency_key_reused');

    // Neither refusal touched the order or the stored answer.
    const order = await api.get(`/v1/payment-orders/${first.body.id}`);
    expect(order.body).toMatchObject({ status: 'open', version: 1 });
    const replay = await create(body, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(await ordersWithReference(body.reference)).toHaveLength(1);
  });

  it('honours a key on an optional POST: a cancel replays without a second transition or event', async () => {
    const { body: order } = await create(orderBody(), newKey());
    const key = newKey();
    const cancelled = await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', version: 2 });
    const again = await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: key });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(cancelled.text);
    expect(await eventCount('payment_order.cancelled', order.id)).toBe(1);
  });

  it('stores and replays a 4xx outcome of the work (cancel of a cancelled order, unknown order)', async () => {
    const { body: order } = await create(orderBody(), newKey());
    expect((await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: undefined })).status).toBe(200);

    const key = newKey();
    const refused = await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: key });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('invalid_state');
    expect(refused.headers.get('idempotent-replayed')).toBeNull();
    const replay = await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: key });
    expect(replay.status).toBe(422);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(refused.text);
    expect(await keyRow(key)).toMatchObject({ response_status: 422, response_body: refused.text, locked_at: null });

    const missingKey = newKey();
    const unknownId = newId('ord').id;
    const notFound = await api.post(`/v1/payment-orders/${unknownId}/cancel`, undefined, { idempotencyKey: missingKey });
    expect(notFound.status).toBe(404);
    const notFoundAgain = await api.post(`/v1/payment-orders/${unknownId}/cancel`, undefined, { idempotencyKey: missingKey });
    expect(notFoundAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(notFoundAgain.text).toBe(notFound.text);
  });

  it('stores a refusal found while creating (expires_at in the past) and replays it; the one-statement create stores its answer', async () => {
    const key = newKey();
    const past = orderBody({ expires_at: new Date(Date.now() - 60_000).toISOString() });
    const refused = await create(past, key);
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe('expires_at');
    const replay = await create(past, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(refused.text);

    const okKey = newKey();
    const created = await create(orderBody(), okKey);
    expect(created.status).toBe(201);
    expect(await keyRow(okKey)).toMatchObject({ response_status: 201, response_body: created.text, locked_at: null, recovery_point: 'finished' });
    expect(await eventCount('payment_order.created', created.body.id)).toBe(1);
  });

  it('does not claim the key for a request refused before the work (validation error)', async () => {
    const key = newKey();
    const invalid = await create({ ...orderBody(), amount: -1 }, key);
    expect(invalid.status).toBe(400);
    expect(await keyRow(key)).toBeUndefined();
    const fixed = await create(orderBody(), key);
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
  });
});
