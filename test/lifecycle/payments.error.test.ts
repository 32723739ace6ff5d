// Payments: what is refused, and how — card validation, orders that cannot be paid, routing that
// matches nothing, connectors that are all down, live mode, test helpers with live keys.
import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { CARDS, cardMethod, newOrder, orderAndPay, pay } from '../support/payments.js';
import { useService } from '../support/fixtures.js';
import { expectError } from '../support/helpers.js';

const h = useService();
const { api, live } = h;

async function paymentCount(orderId: string): Promise<number> {
  return (await api.get(`/v1/payments?payment_order=${orderId}`)).body.data.length;
}

describe('payments: card validation', () => {
  const year = new Date().getUTCFullYear();
  const month = new Date().getUTCMonth() + 1;
  it.each([
    ['a number failing the Luhn check', { number: '4242424242424241' }, 'payment_method.card.number'],
    ['a valid number that is not a test card', { number: '5555555555554444' }, 'payment_method.card.number'],
    ['letters in the number', { number: '4242abcd42424242' }, 'payment_method.card.number'],
    ['a number too short', { number: '42424242' }, 'payment_method.card.number'],
    ['an expired card', { exp_month: month === 1 ? 12 : month - 1, exp_year: month === 1 ? year - 1 : year }, 'payment_method.card.exp_year'],
    ['a month out of range', { exp_month: 13 }, 'payment_method.card.exp_month'],
    ['a two-digit year', { exp_year: 29 }, 'payment_method.card.exp_year'],
    ['a 2-digit CVC', { cvc: '12' }, 'payment_method.card.cvc'],
    ['a 5-digit CVC', { cvc: '12345' }, 'payment_method.card.cvc'],
    ['a numeric CVC', { cvc: 123 }, 'payment_method.card.cvc'],
  ])('refuses %s with 400 naming the field, never echoing the card', async (_what, card, param) => {
    const order = await newOrder(api);
    const res = await api.post('/v1/payments', { payment_order: order.id, payment_method: cardMethod(CARDS.success, card) });
    expectError(res, 400, 'parameter_invalid', { type: 'validation', param });
    expect(res.text).not.toContain(String((card as { number?: string }).number ?? CARDS.success));
    expect(await paymentCount(order.id)).toBe(0);
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
  });

  it('accepts a card expiring this month', async () => {
    const order = await newOrder(api);
    const res = await pay(api, order.id, CARDS.success, {});
    expect(res.status).toBe(201);
    const now = new Date();
    const thisMonth = await api.post('/v1/payments', {
      payment_order: (await newOrder(api)).id,
      payment_method: cardMethod(CARDS.success, { exp_month: now.getUTCMonth() + 1, exp_year: now.getUTCFullYear() }),
    });
    expect(thisMonth.status, thisMonth.text).toBe(201);
  });

  it('refuses unknown fields, a missing card, another method type and a missing Idempotency-Key', async () => {
    const order = await newOrder(api);
    expectError(await api.post('/v1/payments', { payment_order: order.id, payment_method: cardMethod(CARDS.success), amount: 5 }), 400, 'parameter_unknown', { type: 'validation', param: 'amount' });
    expectError(await api.post('/v1/payments', { payment_order: order.id, payment_method: { ...cardMethod(CARDS.success), extra: 1 } }), 400, 'parameter_unknown', { type: 'validation', param: 'payment_method.extra' });
    expectError(await api.post('/v1/payments', { payment_order: order.id, payment_method: { type: 'card' } }), 400, 'parameter_missing', { type: 'validation', param: 'payment_method.card' });
    expectError(await api.post('/v1/payments', { payment_order: order.id, payment_method: { type: 'sepa', card: cardMethod(CARDS.success).card } }), 400, 'parameter_invalid', { type: 'validation', param: 'payment_method.type' });
    expectError(await api.post('/v1/payments', { payment_order: order.id, payment_method: cardMethod(CARDS.success) }, { idempotencyKey: undefined }), 400, 'idempotency_key_missing', { type: 'validation' });
    expect(await paymentCount(order.id)).toBe(0);
  });
});

describe('payments: orders that cannot be paid', () => {
  it('refuses a paid, a processing, a cancelled and an expired order with 422 order_not_payable', async () => {
    const { order: paid } = await orderAndPay(api, CARDS.success);
    expectError(await pay(api, paid.id), 422, 'order_not_payable', { type: 'eligibility', param: 'payment_order' });

    const processing = await newOrder(api);
    expect((await pay(api, processing.id, CARDS.pending)).body.status).toBe('pending');
    const second = await pay(api, processing.id);
    expectError(second, 422, 'order_not_payable', { type: 'eligibility' });
    expect(second.body.error.message).toContain('processing');

    const cancelled = await newOrder(api);
    await api.post(`/v1/payment-orders/${cancelled.id}/cancel`, undefined, { idempotencyKey: undefined });
    expectError(await pay(api, cancelled.id), 422, 'order_not_payable', { type: 'eligibility' });

    const late = await newOrder(api, { expires_at: new Date(Date.now() + 60_000).toISOString() });
    await h.query(sql`UPDATE payment_orders SET expires_at = now() - interval '1 second' WHERE reference = ${late.reference}`);
    const expired = await pay(api, late.id);
    expectError(expired, 422, 'order_not_payable', { type: 'eligibility' });
    expect(expired.body.error.message).toContain('expires_at');
  });

  it('answers 404 for an unknown, malformed or foreign order, naming payment_order', async () => {
    const other = (await h.newTenant()).api;
    const foreign = await newOrder(other);
    for (const id of ['ord_01jd8x3v0pe7wbz0m4k6f2n9qa', 'nonsense', foreign.id]) {
      const res = await pay(api, id);
      expectError(res, 404, 'resource_missing', { type: 'validation', param: 'payment_order' });
      expect(res.body.error.message).not.toContain('mode');
    }
    expect((await other.get(`/v1/payment-orders/${foreign.id}`)).body.status).toBe('open');
    expectError(await api.get('/v1/payments/pay_01jd8x3v0pe7wbz0m4k6f2n9qa'), 404, 'resource_missing', { type: 'validation' });
    expectError(await api.get('/v1/payments/ord_01jd8x3v0pe7wbz0m4k6f2n9qa'), 404, 'resource_missing', { type: 'validation' });
  });
});

describe('payments: routing and connectors', () => {
  it('answers 422 routing_no_match when no rule matches, creating nothing', async () => {
    const own = (await h.newTenant()).api;
    const put = await own.request('PUT', '/v1/routing', { body: { rules: [{ currencies: ['USD'], connectors: [{ name: 'simulator_b' }] }] } });
    expect(put.status, put.text).toBe(200);
    const order = await newOrder(own, { currency: 'EUR' });
    expectError(await pay(own, order.id), 422, 'routing_no_match', { type: 'eligibility' });
    expect((await own.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'open', version: 1 });
    expect((await own.get('/v1/payments')).body.data).toHaveLength(0);
    const usd = await newOrder(own, { currency: 'USD' });
    expect((await pay(own, usd.id)).body).toMatchObject({ status: 'succeeded', connector: 'simulator_b' });
  });

  it('answers 502 processor_unavailable, creating nothing, when every connector of the route has an open circuit', async () => {
    const breaker = h.service.payments.connectors.breaker;
    for (let i = 0; i < h.service.config.payments.circuitBreaker.failureThreshold; i++) {
      breaker.onFailure('simulator_a');
      breaker.onFailure('simulator_b');
    }
    try {
      const order = await newOrder(api);
      const res = await pay(api, order.id);
      expectError(res, 502, 'processor_unavailable', { type: 'processing' });
      expect(await paymentCount(order.id)).toBe(0);
      expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'open', version: 1 });
      // The key is forgotten (5xx), so the same request can be retried once a connector recovers.
      breaker.onSuccess('simulator_a');
      breaker.onSuccess('simulator_b');
      const again = await pay(api, order.id);
      expect(again.status, again.text).toBe(201);
    } finally {
      breaker.onSuccess('simulator_a');
      breaker.onSuccess('simulator_b');
    }
  });
});

describe('payments: live mode and test helpers', () => {
  it('live mode: test cards are refused, and with no live connector nothing routes', async () => {
        const order = await newOrder(live);
    expectError(await pay(live, order.id, CARDS.success), 400, 'parameter_invalid', { type: 'validation', param: 'payment_method.card.number' });
    expectError(await pay(live, order.id, '5555555555554444'), 422, 'routing_no_match', { type: 'eligibility' });
    const routing = await live.get('/v1/routing');
    expect(routing.body).toMatchObject({ livemode: true, rules: [], is_default: true, connectors: [] });
    const put = await live.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'simulator_a' }] }] } });
    expectError(put, 400, 'parameter_invalid', { type: 'validation', param: 'rules.0.connectors.0.name' });
    expect(put.body.error.message).toContain('live-mode');
  });

  it('test helpers refuse live keys with 403', async () => {
        const { payment } = await orderAndPay(api, CARDS.pending);
    expectError(await live.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'succeeded' }), 403, 'permission_denied', { type: 'authentication' });
    expectError(await live.post('/v1/test-helpers/balance/fund', { amount: 100, currency: 'EUR' }), 403, 'permission_denied', { type: 'authentication' });
    expect((await live.get('/v1/balance')).body).toMatchObject({ livemode: true, available: [] });
  });

  it('the resolve helper refuses a payment that is not pending, and one never sent', async () => {
    const { payment } = await orderAndPay(api, CARDS.success);
    expectError(await api.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'failed' }), 422, 'invalid_state', { type: 'validation' });
    expectError(await api.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'maybe' }), 400, 'parameter_invalid', { type: 'validation', param: 'outcome' });
    expectError(await api.post('/v1/test-helpers/payments/pay_01jd8x3v0pe7wbz0m4k6f2n9qa/resolve', { outcome: 'failed' }), 404, 'resource_missing', { type: 'validation' });
  });
});
