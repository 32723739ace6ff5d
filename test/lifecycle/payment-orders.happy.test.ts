import { describe, expect, it } from 'vitest';
import { orderBody } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';

const { api } = useService();

describe('payment orders: happy paths', () => {
  it('creates an open order with the fields sent and an event in the same transaction', async () => {
    const body = orderBody({ metadata: { cart: '42' }, description: 'Two books' });
    const created = await api.post('/v1/payment-orders', body);
    expect(created.status).toBe(201);
    expect(created.headers.get('request-id')).toMatch(/^req_[0-9a-z]{26}$/);
    const order = created.body;
    expect(order).toMatchObject({
      object: 'payment_order',
      livemode: false,
      status: 'open',
      amount: 1999,
      amount_paid: 0,
      currency: 'EUR',
      reference: body.reference,
      customer: { email: 'jane@example.com', name: 'Jane Doe' },
      description: 'Two books',
      metadata: { cart: '42' },
      version: 1,
    });
    expect(order.id).toMatch(/^ord_[0-9a-z]{26}$/);
    expect(Date.parse(order.expires_at) - Date.parse(order.created_at)).toBe(24 * 3600 * 1000);

    const fetched = await api.get(`/v1/payment-orders/${order.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(order);

    const events = await api.get('/v1/events?type=payment_order.*');
    const created_event = events.body.data.find((e: any) => e.data.object.id === order.id);
    expect(created_event).toMatchObject({ object: 'event', type: 'payment_order.created', livemode: false });
    expect(created_event.request.id).toBe(created.headers.get('request-id'));
  });

  it('cancels an open order once, then refuses with the current and allowed states', async () => {
    const { body: order } = await api.post('/v1/payment-orders', orderBody());
    const cancelled = await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: undefined });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', version: 2 });
    const again = await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: undefined });
    expect(again.status).toBe(422);
    expect(again.body.error).toMatchObject({ type: 'validation', code: 'invalid_state' });
    expect(again.body.error.message).toContain('cancelled');
    expect(again.body.error.message).toContain('open');
  });
});
