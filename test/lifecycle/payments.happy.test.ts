// Payments, one test per row of the test-card table (docs/test-mode.md) that answers at once — success,
// both declines, processor error with fallback — plus retrieval, lists and the order's states.
// Pending and timeout rows are in payments.async.test.ts.
import { describe, expect, it } from 'vitest';
import { CARDS, cardMethod, eventTypesOf, newOrder, orderAndPay, pay } from '../support/payments.js';
import { useService } from '../support/fixtures.js';

const h = useService();
const { api } = h;

describe('payments: scenarios that answer at once', () => {
  it('success: the payment succeeds at the first connector, the order is paid, the balance credited', async () => {
    const order = await newOrder(api, { amount: 2500, currency: 'USD' });
    const before = (await api.get('/v1/balance')).body;
    const res = await pay(api, order.id, CARDS.success, { metadata: { cart: '7' } });
    expect(res.status, res.text).toBe(201);
    const payment = res.body;
    expect(payment).toMatchObject({
      object: 'payment',
      livemode: false,
      status: 'succeeded',
      amount: 2500,
      currency: 'USD',
      amount_refunded: 0,
      payment_order: order.id,
      payment_method: { type: 'card', card: { brand: 'visa', last4: '4242', exp_month: 12 } },
      connector: 'simulator_a',
      failure_code: null,
      failure_message: null,
      metadata: { cart: '7' },
      version: 2,
    });
    expect(payment.id).toMatch(/^pay_[0-9a-z]{26}$/);
    expect(payment.connector_reference).toMatch(/^simulator_a_ch_/);
    expect(payment.payment_method.card.fingerprint).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(payment.attempts).toHaveLength(1);
    expect(payment.attempts[0]).toMatchObject({ connector: 'simulator_a', outcome: 'succeeded', error_code: null });
    expect(typeof payment.attempts[0].duration_ms).toBe('number');
    // Never the number or the CVC, anywhere in the answer.
    expect(res.text).not.toContain(CARDS.success);
    expect(res.text).not.toContain('"cvc"');

    const orderAfter = (await api.get(`/v1/payment-orders/${order.id}`)).body;
    expect(orderAfter).toMatchObject({ status: 'paid', amount_paid: 2500, version: 3 });

    const fetched = await api.get(`/v1/payments/${payment.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(payment);

    const after = (await api.get('/v1/balance')).body;
    const available = (b: any) => b.available.find((x: any) => x.currency === 'USD')?.amount ?? 0;
    expect(available(after) - available(before)).toBe(2500);

    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.succeeded']);
    expect(await eventTypesOf(api, order.id)).toEqual(['payment_order.created', 'payment_order.processing', 'payment_order.paid']);
    const events = (await api.get('/v1/events?type=payment.succeeded')).body.data;
    const succeeded = events.find((e: any) => e.data.object.id === payment.id);
    expect(succeeded.data.object).toEqual(payment);
    expect(succeeded.request.id).toBe(res.headers.get('request-id'));
  });

  it.each([
    [CARDS.declined, 'card_declined'],
    [CARDS.insufficientFunds, 'insufficient_funds'],
  ])('decline %s: the payment fails with %s, never falls back, and the order opens again', async (card, code) => {
    const order = await newOrder(api);
    const res = await pay(api, order.id, card);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'failed', failure_code: code, connector: 'simulator_a' });
    expect(res.body.failure_message).toEqual(expect.any(String));
    expect(res.body.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'declined', error_code: code })]);
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'open', amount_paid: 0, version: 3 });
    expect(await eventTypesOf(api, res.body.id)).toEqual(['payment.created', 'payment.failed']);
    expect(await eventTypesOf(api, order.id)).toEqual(['payment_order.created', 'payment_order.processing', 'payment_order.open']);

    // Another attempt on the same order may succeed.
    const retry = await pay(api, order.id, CARDS.success);
    expect(retry.body).toMatchObject({ status: 'succeeded', payment_order: order.id });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
    const listed = await api.get(`/v1/payments?payment_order=${order.id}`);
    expect(listed.body.data.map((p: any) => p.id)).toEqual([retry.body.id, res.body.id]);
  });

  it('processor error: simulator_a fails, the router falls back to simulator_b, both attempts are recorded', async () => {
    const { payment } = await orderAndPay(api, CARDS.processorError);
    expect(payment).toMatchObject({ status: 'succeeded', connector: 'simulator_b' });
    expect(payment.connector_reference).toMatch(/^simulator_b_ch_/);
    expect(payment.attempts).toEqual([
      expect.objectContaining({ connector: 'simulator_a', outcome: 'error', error_code: 'processor_error' }),
      expect.objectContaining({ connector: 'simulator_b', outcome: 'succeeded', error_code: null }),
    ]);
    // Both simulated processors saw the request once; only simulator_b holds a charge.
    expect(h.service.simulator('simulator_a').chargeRequests.get(payment.id)).toBe(1);
    expect(await h.service.simulator('simulator_a').charges.has(payment.id)).toBe(false);
    expect((await h.service.simulator('simulator_b').charges.get(payment.id))?.state).toBe('CAPTURED');
  });

  it('the same card gives the same fingerprint; another card another one', async () => {
    const a = (await orderAndPay(api, CARDS.success)).payment;
    const b = (await orderAndPay(api, CARDS.success)).payment;
    const c = (await orderAndPay(api, CARDS.declined)).payment;
    expect(a.payment_method.card.fingerprint).toBe(b.payment_method.card.fingerprint);
    expect(c.payment_method.card.fingerprint).not.toBe(a.payment_method.card.fingerprint);
  });

  it('a retry with the same Idempotency-Key replays the payment and never charges again', async () => {
    const order = await newOrder(api);
    const body = { payment_order: order.id, payment_method: cardMethod(CARDS.success) };
    const first = await api.post('/v1/payments', body, { idempotencyKey: `pay-${order.id}` });
    const again = await api.post('/v1/payments', body, { idempotencyKey: `pay-${order.id}` });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(h.service.simulator().chargeRequests.get(first.body.id)).toBe(1);
    // A different card under the same key is another request.
    const other = await api.post('/v1/payments', { ...body, payment_method: cardMethod(CARDS.declined) }, { idempotencyKey: `pay-${order.id}` });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    const otherCvc = await api.post('/v1/payments', { ...body, payment_method: cardMethod(CARDS.success, { cvc: '999' }) }, { idempotencyKey: `pay-${order.id}` });
    expect(otherCvc.body.error.code).toBe('idempotency_key_reused');
  });

  it('lists payments newest first with status and payment_order filters and cursors', async () => {
    const own = (await h.newTenant()).api;
    const made = [];
    for (const card of [CARDS.success, CARDS.declined, CARDS.success]) made.push((await orderAndPay(own, card)).payment);
    const all = await own.get('/v1/payments');
    expect(all.body).toMatchObject({ object: 'list', has_more: false });
    expect(all.body.data.map((p: any) => p.id)).toEqual(made.map((p) => p.id).reverse());
    const failed = await own.get('/v1/payments?status=failed');
    expect(failed.body.data.map((p: any) => p.id)).toEqual([made[1]!.id]);
    const page = await own.get('/v1/payments?limit=2');
    expect(page.body.has_more).toBe(true);
    const next = await own.get(`/v1/payments?limit=2&starting_after=${page.body.data[1].id}`);
    expect(next.body.data.map((p: any) => p.id)).toEqual([made[0]!.id]);
    const byOrder = await own.get(`/v1/payments?payment_order=${made[2]!.payment_order}`);
    expect(byOrder.body.data.map((p: any) => p.id)).toEqual([made[2]!.id]);
    expect((await own.get('/v1/payments?payment_order=pay_x')).status).toBe(400);
  });

  it('amounts stay integers in the minor unit of every currency', async () => {
    for (const [currency, amount] of [['JPY', 500], ['KWD', 1234], ['EUR', 99_999_999_999]] as const) {
      const { payment } = await orderAndPay(api, CARDS.success, { currency, amount });
      expect(payment).toMatchObject({ currency, amount, status: 'succeeded' });
    }
  });
});
