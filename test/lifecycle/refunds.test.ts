// Refunds: full and partial, never above the payment even when requested concurrently; states,
// events and ledger movements for success, failure and a pending answer settled later (worker or
// processor webhook); the error paths.
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import type { Connector, RefundResult } from '../../src/connectors/types.js';
import { parseId } from '../../src/kernel/ids.js';
import { CARDS, eventTypesOf, orderAndPay, balanceOf, inProcessSimulators, sendProcessorEvent } from '../support/payments.js';
import { useService } from '../support/fixtures.js';
import { expectError } from '../support/helpers.js';
import { expectLedgerClean } from '../support/payouts.js';

const h = useService();
const { api } = h;

describe('refunds', () => {
  it('refunds all that remains by default: succeeded, counted on the payment, debited from the balance', async () => {
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 1500 });
    const before = await balanceOf(api);
    const res = await api.post('/v1/refunds', { payment: payment.id, reason: 'requested_by_customer', metadata: { ticket: '9' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      object: 'refund',
      livemode: false,
      status: 'succeeded',
      amount: 1500,
      currency: 'EUR',
      payment: payment.id,
      reason: 'requested_by_customer',
      connector: 'simulator_a',
      failure_code: null,
      metadata: { ticket: '9' },
      version: 2,
    });
    expect(res.body.id).toMatch(/^ref_[0-9a-z]{26}$/);
    expect(res.body.connector_reference).toMatch(/^simulator_a_re_/);
    expect((await api.get(`/v1/refunds/${res.body.id}`)).body).toEqual(res.body);
    expect((await api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'succeeded', amount_refunded: 1500 });
    expect(await balanceOf(api)).toEqual({ available: before.available - 1500, reserved: 0, pending: 0 });
    expect(await eventTypesOf(api, res.body.id)).toEqual(['refund.created', 'refund.succeeded']);

    const txns = (await api.get(`/v1/balance-transactions?source=${res.body.id}`)).body.data;
    expect(txns.map((t: any) => [t.type, t.amount, t.balance_changes])).toEqual([
      ['refund_settlement', -1500, { available: 0, pending: 0, reserved: -1500 }],
      ['refund', 0, { available: -1500, pending: 0, reserved: 1500 }],
    ]);
    expectError(await api.post('/v1/refunds', { payment: payment.id }), 422, 'amount_above_refundable', { type: 'eligibility', param: 'amount' });
  });

  it('refunds in parts, never above the payment', async () => {
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 1000 });
    expect((await api.post('/v1/refunds', { payment: payment.id, amount: 500 })).body.status).toBe('succeeded');
    expect((await api.post('/v1/refunds', { payment: payment.id, amount: 300 })).body.status).toBe('succeeded');
    const over = await api.post('/v1/refunds', { payment: payment.id, amount: 201 });
    expectError(over, 422, 'amount_above_refundable', { type: 'eligibility' });
    expect(over.body.error.message).toContain('200');
    const rest = await api.post('/v1/refunds', { payment: payment.id });
    expect(rest.body).toMatchObject({ status: 'succeeded', amount: 200 });
    const listed = await api.get(`/v1/refunds?payment=${payment.id}`);
    expect(listed.body.data.map((r: any) => r.amount)).toEqual([200, 300, 500]);
    expect((await api.get(`/v1/payments/${payment.id}`)).body.amount_refunded).toBe(1000);
    expect((await api.get(`/v1/refunds?status=failed&payment=${payment.id}`)).body.data).toEqual([]);
  });

  it('concurrent refunds never add up to more than the payment', async () => {
    const own = (await h.newTenant()).api;
    const { payment } = await orderAndPay(own, CARDS.success, { amount: 1000 });
    const answers = await Promise.all(Array.from({ length: 12 }, () => own.post('/v1/refunds', { payment: payment.id, amount: 300 })));
    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status !== 201);
    expect(created).toHaveLength(3);
    for (const r of refused) expect(r.body.error.code).toBe('amount_above_refundable');
    const [sum] = await h.query(sql`SELECT coalesce(sum(amount), 0)::bigint AS total FROM refunds WHERE payment_id = ${parseId('pay', payment.id)!}`);
    expect(Number(sum!.total)).toBe(900);
    expect((await own.get(`/v1/payments/${payment.id}`)).body.amount_refunded).toBe(900);
    expect(await balanceOf(own)).toEqual({ available: 100, reserved: 0, pending: 0 });
    await expectLedgerClean(h.db);
  });

  it('a retried request with the same key replays the refund and refunds once', async () => {
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 800 });
    const first = await api.post('/v1/refunds', { payment: payment.id, amount: 100 }, { idempotencyKey: `refund-${payment.id}` });
    const again = await api.post('/v1/refunds', { payment: payment.id, amount: 100 }, { idempotencyKey: `refund-${payment.id}` });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect((await api.get(`/v1/payments/${payment.id}`)).body.amount_refunded).toBe(100);
    expectError(await api.post('/v1/refunds', { payment: payment.id }, { idempotencyKey: undefined }), 400, 'idempotency_key_missing');
  });

  it('refuses payments that did not succeed, unknown and foreign ones, and bad amounts', async () => {
    const failed = (await orderAndPay(api, CARDS.declined)).payment;
    const pending = (await orderAndPay(api, CARDS.pending)).payment;
    for (const p of [failed, pending]) {
      const res = await api.post('/v1/refunds', { payment: p.id });
      expectError(res, 422, 'invalid_state', { type: 'validation' });
      expect(res.body.error.message).toContain('succeeded');
    }
    const other = (await h.newTenant()).api;
    const foreign = (await orderAndPay(other, CARDS.success)).payment;
    for (const id of [foreign.id, 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa', 'ref_01jd8x3v0pe7wbz0m4k6f2n9qa']) {
      expectError(await api.post('/v1/refunds', { payment: id }), 404, 'resource_missing', { param: 'payment' });
    }
    expect((await other.get(`/v1/payments/${foreign.id}`)).body.amount_refunded).toBe(0);
    const ok = (await orderAndPay(api, CARDS.success)).payment;
    expectError(await api.post('/v1/refunds', { payment: ok.id, amount: 0 }), 400, 'parameter_invalid', { param: 'amount' });
    expectError(await api.post('/v1/refunds', { payment: ok.id, amount: 1.5 }), 400, 'parameter_invalid', { param: 'amount' });
    expectError(await api.post('/v1/refunds', { payment: ok.id, reason: 'bored' }), 400, 'parameter_invalid', { param: 'reason' });
    expectError(await api.get('/v1/refunds/ref_01jd8x3v0pe7wbz0m4k6f2n9qa'), 404, 'resource_missing');
  });
});

describe('refunds the processor refuses, leaves pending, or cannot take', () => {
  let refundAnswer: ((defaultAnswer: () => Promise<RefundResult>) => Promise<RefundResult>) | undefined;
  const sims = inProcessSimulators();
  const wrapped: Connector = {
    ...sims.a,
    refund: (request, signal) => (refundAnswer ? refundAnswer(() => sims.a.refund(request, signal)) : sims.a.refund(request, signal)),
  };
  const controlled = useService({ on: h, settings: { statusCheckIntervalMs: 50 }, runtime: { connectors: [wrapped] } });
  const capi = controlled.api;
  afterAll(() => sims.close());

  it('a refused refund fails, gives the amount back to the payment and to the available balance', async () => {
    const { payment } = await orderAndPay(capi, CARDS.success, { amount: 1000 });
    refundAnswer = async () => ({ kind: 'failed', connectorReference: 're_x', failureCode: 'charge_not_refundable', message: 'no' });
    const res = await capi.post('/v1/refunds', { payment: payment.id, amount: 400 });
    refundAnswer = undefined;
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'charge_not_refundable', amount: 400, connector_reference: 're_x' });
    expect((await capi.get(`/v1/payments/${payment.id}`)).body.amount_refunded).toBe(0);
    expect(await balanceOf(capi)).toEqual({ available: 1000, reserved: 0, pending: 0 });
    expect(await eventTypesOf(capi, res.body.id)).toEqual(['refund.created', 'refund.failed']);
    const types = (await capi.get(`/v1/balance-transactions?source=${res.body.id}`)).body.data.map((t: any) => t.type);
    expect(types).toEqual(['refund_failure', 'refund']);
    // The full amount can still be refunded.
    expect((await capi.post('/v1/refunds', { payment: payment.id })).body).toMatchObject({ status: 'succeeded', amount: 1000 });
  });

  it('a refund no processor could take fails as processing_error', async () => {
    const { payment } = await orderAndPay(capi, CARDS.success, { amount: 300 });
    refundAnswer = async () => ({ kind: 'error', code: 'connection_refused', message: 'down' });
    const res = await capi.post('/v1/refunds', { payment: payment.id });
    refundAnswer = undefined;
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'processing_error' });
    expect((await capi.get(`/v1/payments/${payment.id}`)).body.amount_refunded).toBe(0);
  });

  it('a refund left pending (timeout) is settled by the worker; one reported by webhook settles at once', async () => {
    const start = await balanceOf(capi);
    const { payment } = await orderAndPay(capi, CARDS.success, { amount: 1000 });
    // The processor refunds, but the answer is lost.
    refundAnswer = async (real) => {
      await real();
      return { kind: 'error', code: 'timeout', message: 'no answer' };
    };
    const pending = await capi.post('/v1/refunds', { payment: payment.id, amount: 600 });
    refundAnswer = undefined;
    expect(pending.body).toMatchObject({ status: 'pending', connector_reference: null });
    expect(await balanceOf(capi)).toMatchObject({ reserved: 600 });
    await new Promise((resolve) => setTimeout(resolve, 80));
    const pass = await controlled.service.runWorker();
    expect(pass.statusChecks!.refunds).toBeGreaterThanOrEqual(1);
    const settled = (await capi.get(`/v1/refunds/${pending.body.id}`)).body;
    expect(settled).toMatchObject({ status: 'succeeded' });
    expect(settled.connector_reference).toMatch(/^simulator_a_re_/);
    expect(await balanceOf(capi)).toMatchObject({ reserved: 0 });

    // Another one, reported by the processor's webhook instead.
    refundAnswer = async () => ({ kind: 'pending', connectorReference: 're_later' });
    const second = (await capi.post('/v1/refunds', { payment: payment.id, amount: 400 })).body;
    refundAnswer = undefined;
    expect(second).toMatchObject({ status: 'pending', connector_reference: 're_later' });
    expect(await eventTypesOf(capi, second.id)).toEqual(['refund.created', 'refund.pending']);
    const body = JSON.stringify({
      event_id: `evt_refund_${second.id}`,
      event_type: 'refund.state_changed',
      occurred_at: new Date().toISOString(),
      refund: { refund_id: 're_later', merchant_reference: second.id, charge_id: 'c', amount_minor: 400, state: 'REFUND_REFUSED', refusal: 'CHARGE_NOT_CAPTURED', created_at: new Date().toISOString() },
    });
    const res = await sendProcessorEvent(controlled.url, 'simulator_a', body);
    expect(res.body).toEqual({ received: true, duplicate: false, applied: true });
    expect((await capi.get(`/v1/refunds/${second.id}`)).body).toMatchObject({ status: 'failed', failure_code: 'charge_not_refundable' });
    expect((await capi.get(`/v1/payments/${payment.id}`)).body.amount_refunded).toBe(600);
    expect(await balanceOf(capi)).toEqual({ available: start.available + 400, reserved: 0, pending: 0 });
    await expectLedgerClean(h.db);
  });
});
