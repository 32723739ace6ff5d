// Payments against mandates (direct debits): the simulated bank settling the debit later through
// the inbound webhook, order and ledger moving exactly as for cards, a verified outgoing webhook at
// the end; eligibility; idempotency and resumption of a debit.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { CARDS, cardMethod, eventTypesOf, newOrder, availableOf } from '../support/payments.js';
import { deliverAt, verify, webhookOptions } from '../support/webhooks.js';
import { ENDINGS, newMandate, debit } from '../support/mandates.js';
import { eventually, expectError } from '../support/helpers.js';
import { usePendingServices } from '../support/fixtures.js';

// Debits on `manual` wait a minute at the simulated bank (the helper settles them); on `automatic`
// they settle after 200 ms, reported by the simulated processor's webhook.
const { h, manual, api, liveApi, autoApi } = usePendingServices(200);

describe('a direct debit, end to end', () => {
  it('starts pending, settles through the inbound webhook, pays the order, credits the balance once, and is delivered signed', async () => {
    const receiver = await h.receiver();
    {
      const endpoint = await autoApi.post('/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['payment.*', 'mandate.*', 'payment_order.paid'] });
      expect(endpoint.status, endpoint.text).toBe(201);
      const before = await availableOf(autoApi);
      const mandate = await newMandate(autoApi, 'sepa_core', ENDINGS.success, { max_amount: 10_000 });
      const order = await newOrder(autoApi, { amount: 2500 });
      const res = await debit(autoApi, order.id, mandate.id);
      expect(res.status, res.text).toBe(201);
      const payment = res.body;
      expect(payment).toMatchObject({
        status: 'pending',
        amount: 2500,
        currency: 'EUR',
        connector: 'simulator_a',
        payment_method: { type: 'mandate', mandate: mandate.id, scheme: 'sepa_core', last4: mandate.bank_account.last4 },
        version: 2,
      });
      expect(Object.keys(payment.payment_method).sort()).toEqual(['last4', 'mandate', 'scheme', 'type']);
      expect(payment.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'pending' })]);
      expect((await autoApi.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('processing');

      const settled = await eventually(
        () => autoApi.get(`/v1/payments/${payment.id}`),
        (r) => r.body.status !== 'pending',
      );
      expect(settled.body).toMatchObject({ status: 'succeeded', version: 3 });
      expect((await autoApi.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 2500 });
      expect((await availableOf(autoApi)) - before).toBe(2500);
      expect(await eventTypesOf(autoApi, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded']);
      const [webhookRow] = await h.query(sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${payment.id}`);
      expect(webhookRow!.n).toBe(1);
      // The mandate records the debit: dormancy counts from it.
      const after = (await autoApi.get(`/v1/mandates/${mandate.id}`)).body;
      expect(after.last_debit_at).not.toBeNull();
      expect(after).toMatchObject({ status: 'active', version: mandate.version + 1 });

      // Our own webhooks, verified as an integrator would, with the published package.
      await deliverAt(h.database, webhookOptions());
      await receiver.waitFor(() => receiver.requests.some((r) => JSON.parse(r.body).type === 'payment.succeeded' && JSON.parse(r.body).data.object.id === payment.id));
      const delivered = receiver.requests.map((r) => verify(endpoint.body.secret, r));
      const succeeded = delivered.find((e: any) => e.type === 'payment.succeeded' && e.data.object.id === payment.id);
      expect(succeeded.data.object).toMatchObject({ status: 'succeeded', payment_method: { type: 'mandate', mandate: mandate.id } });
      const types = delivered.filter((e: any) => [mandate.id, payment.id, order.id].includes(e.data.object.id)).map((e: any) => e.type);
      expect(types).toEqual(expect.arrayContaining(['mandate.created', 'mandate.active', 'payment.created', 'payment.pending', 'payment.succeeded', 'payment_order.paid']));
    }
  });

  it.each(['bacs', 'ach'] as const)('%s debits settle the same way (test helper)', async (scheme) => {
    const currency = scheme === 'bacs' ? 'GBP' : 'USD';
    const before = await availableOf(api, currency);
    const mandate = await newMandate(api, scheme);
    const order = await newOrder(api, { amount: 700, currency });
    const payment = (await debit(api, order.id, mandate.id)).body;
    expect(payment).toMatchObject({ status: 'pending', payment_method: { type: 'mandate', scheme } });
    const resolved = await api.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'succeeded' });
    expect(resolved.body).toMatchObject({ status: 'succeeded', version: 3 });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
    expect((await availableOf(api, currency)) - before).toBe(700);
  });

  it('a returned debit fails (debit_declined): the order opens again, the balance does not move', async () => {
    const before = await availableOf(api);
    const mandate = await newMandate(api);
    const order = await newOrder(api, { amount: 900 });
    const payment = (await debit(api, order.id, mandate.id)).body;
    const resolved = await api.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'failed' });
    expect(resolved.body).toMatchObject({ status: 'failed', failure_code: 'debit_declined' });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    expect(await availableOf(api)).toBe(before);
    expect((await api.get(`/v1/mandates/${mandate.id}`)).body.last_debit_at).toBeNull();
    // The order can be paid again, by card this time.
    const card = await api.post('/v1/payments', { payment_order: order.id, payment_method: cardMethod(CARDS.success) });
    expect(card.body.status).toBe('succeeded');
  });

  it('a mandate activated through fallback (0005) is debited at simulator_b, its holder, and nowhere else', async () => {
    const mandate = await newMandate(api, 'sepa_core', ENDINGS.processorError);
    expect(mandate.connector).toBe('simulator_b');
    const order = await newOrder(api);
    const payment = (await debit(api, order.id, mandate.id)).body;
    expect(payment).toMatchObject({ status: 'pending', connector: 'simulator_b' });
    expect(payment.attempts.map((a: any) => a.connector)).toEqual(['simulator_b']);
  });
});

describe('eligibility', () => {
  it('only an active mandate: pending, failed, revoked are mandate_not_active; nothing is created', async () => {
    const pending = await newMandate(api, 'sepa_core', ENDINGS.pending);
    const failed = await newMandate(api, 'sepa_core', ENDINGS.closed);
    const revoked = await newMandate(api);
    await api.post(`/v1/mandates/${revoked.id}/revoke`);
    for (const [m, status] of [[pending, 'pending'], [failed, 'failed'], [revoked, 'revoked']] as const) {
      const order = await newOrder(api);
      const res = await debit(api, order.id, m.id);
      expectError(res, 422, 'mandate_not_active', { param: 'payment_method.mandate' });
      expect(res.body.error.type).toBe('eligibility');
      expect(res.body.error.message).toContain(status);
      expect((await api.get(`/v1/payments?payment_order=${order.id}`)).body.data).toEqual([]);
      expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    }
  });

  it('the order currency must be the mandate currency: currency_mismatch', async () => {
    const mandate = await newMandate(api, 'bacs');
    const order = await newOrder(api, { currency: 'EUR' });
    const res = await debit(api, order.id, mandate.id);
    expectError(res, 422, 'currency_mismatch', { param: 'payment_method.mandate' });
    expect(res.body.error.type).toBe('eligibility');
  });

  it('the amount must be within max_amount: amount_above_limit (equal is fine)', async () => {
    const mandate = await newMandate(api, 'sepa_core', ENDINGS.success, { max_amount: 1000 });
    expectError(await debit(api, (await newOrder(api, { amount: 1001 })).id, mandate.id), 422, 'amount_above_limit', { param: 'payment_method.mandate' });
    expect((await debit(api, (await newOrder(api, { amount: 1000 })).id, mandate.id)).status).toBe(201);
  });

  it("another account's or mode's mandate is 404 resource_missing, like one that never existed", async () => {
    const mine = await newMandate(api);
    const theirs = await newMandate((await manual.newTenant('Other')).api);
    const order = await newOrder(api);
    const foreign = await debit(api, order.id, theirs.id);
    expectError(foreign, 404, 'resource_missing', { param: 'payment_method.mandate' });
    const never = await debit(api, order.id, 'mdt_01jd8x3v0pe7wbz0m4k6f2n9qa');
    expectError(never, 404, 'resource_missing', { param: 'payment_method.mandate' });
    expect(foreign.body.error.message.split(theirs.id).join('<id>')).toBe(never.body.error.message.split('mdt_01jd8x3v0pe7wbz0m4k6f2n9qa').join('<id>'));
    const liveOrder = await newOrder(liveApi);
    expectError(await debit(liveApi, liveOrder.id, mine.id), 404, 'resource_missing', { param: 'payment_method.mandate' });
    expectError(await debit(api, order.id, 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa'), 404, 'resource_missing', { param: 'payment_method.mandate' });
  });

  it('the payment method must be one or the other', async () => {
    const mandate = await newMandate(api);
    const order = await newOrder(api);
    const pay = (payment_method: unknown) => api.post('/v1/payments', { payment_order: order.id, payment_method });
    expectError(await pay({ type: 'mandate' }), 400, 'parameter_missing', { param: 'payment_method.mandate' });
    expectError(await pay({ type: 'card' }), 400, 'parameter_missing', { param: 'payment_method.card' });
    expectError(await pay({ type: 'mandate', mandate: mandate.id, card: cardMethod(CARDS.success).card }), 400, 'parameter_unknown', { param: 'payment_method.card' });
    expectError(await pay({ ...cardMethod(CARDS.success), mandate: mandate.id }), 400, 'parameter_unknown', { param: 'payment_method.mandate' });
    const unknownType = await pay({ type: 'sepa', mandate: mandate.id });
    expectError(unknownType, 400, 'parameter_invalid', { param: 'payment_method.type' });
    expect(unknownType.body.error.message).toBe('payment_method.type must be one of: card, mandate, saved_card.');
    expectError(await pay({ mandate: mandate.id }), 400, 'parameter_missing', { param: 'payment_method.type' });
    expectError(await pay('card'), 400, 'parameter_invalid', { param: 'payment_method' });
  });

  it('routing rules by payment method type apply to debits', async () => {
    const mandate = await newMandate(api);
    const put = (rules: unknown) => api.request('PUT', '/v1/routing', { body: { rules } });
    try {
      expect((await put([{ payment_method_types: ['card'], connectors: [{ name: 'simulator_a' }] }])).status).toBe(200);
      expectError(await debit(api, (await newOrder(api)).id, mandate.id), 422, 'routing_no_match');
      // A rule for debits that does not list the mandate's holder cannot route it either.
      expect((await put([{ payment_method_types: ['mandate'], connectors: [{ name: 'simulator_b' }] }])).status).toBe(200);
      const res = await debit(api, (await newOrder(api)).id, mandate.id);
      expectError(res, 422, 'routing_no_match');
      expect(res.body.error.message).toContain('simulator_a');
      expect((await put([{ payment_method_types: ['mandate'], connectors: [{ name: 'simulator_b' }, { name: 'simulator_a' }] }])).status).toBe(200);
      expect((await debit(api, (await newOrder(api)).id, mandate.id)).body).toMatchObject({ status: 'pending', connector: 'simulator_a' });
    } finally {
      await put([{ connectors: [{ name: 'simulator_a' }, { name: 'simulator_b' }] }]);
    }
  });
});

describe('idempotency and crash safety of debits', () => {
  it('the same key replays the debit; the bank saw one request', async () => {
    const mandate = await newMandate(api);
    const order = await newOrder(api);
    const key = `debit-${order.id}`;
    const first = await debit(api, order.id, mandate.id, { idempotencyKey: key });
    const again = await debit(api, order.id, mandate.id, { idempotencyKey: key });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    const sim = manual.service.simulator();
    expect(sim.chargeRequests.get(first.body.id)).toBe(1);
  });

  it('a request that dies after the first phase is resumed by its retry: one debit, sent once', async () => {
    const mandate = await newMandate(api);
    const order = await newOrder(api);
    const key = `debit-crash-${order.id}`;
    const crashed = await manual.service.crashingAt('payment_created', () => debit(api, order.id, mandate.id, { idempotencyKey: key }));
    expect(crashed.status).toBe(500);
    const retried = await debit(api, order.id, mandate.id, { idempotencyKey: key });
    expect(retried.status, retried.text).toBe(201);
    expect(retried.body).toMatchObject({ status: 'pending', connector: 'simulator_a', payment_method: { type: 'mandate', mandate: mandate.id } });
    expect((await api.get(`/v1/payments?payment_order=${order.id}`)).body.data).toHaveLength(1);
    const sim = manual.service.simulator();
    expect(sim.chargeRequests.get(retried.body.id)).toBe(1);
  });
});
