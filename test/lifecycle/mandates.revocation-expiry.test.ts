// Mandates over their life with debits: revocation (by the merchant, by the bank, racing debits)
// while a debit is pending, the worker expiring dormant mandates by its injected clock, and
// mandates a crashed request abandoned, failed or adopted by the worker.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { eventTypesOf, newOrder, availableOf } from '../support/payments.js';
import { ENDINGS, mandateBody, newMandate, debit, bookMandate, mandateIdByReference } from '../support/mandates.js';
import { eventually, expectError, testClock } from '../support/helpers.js';
import { usePendingServices, useService } from '../support/fixtures.js';

// Debits on `manual` wait a minute at the simulated bank (the helper settles them); on `automatic`
// they settle after 200 ms, reported by the simulated processor's webhook.
const { h, api, autoApi } = usePendingServices(200);
/** Its own clock, moved by the tests: for dormancy. */
const clock = testClock();
const clocked = useService({ on: h, clock, settings: { mandateDormancyDays: 30 } });
const clockApi = clocked.api;
const DAY = 86_400_000;

describe('revocation while a debit is pending', () => {
  it('the merchant revokes: the pending debit still settles, once; a new debit is refused', async () => {
    const before = await availableOf(api);
    const mandate = await newMandate(api);
    const order = await newOrder(api, { amount: 1234 });
    const payment = (await debit(api, order.id, mandate.id)).body;
    expect(payment.status).toBe('pending');
    const revoked = await api.post(`/v1/mandates/${mandate.id}/revoke`);
    expect(revoked.body.status).toBe('revoked');
    expectError(await debit(api, (await newOrder(api)).id, mandate.id), 422, 'mandate_not_active');

    const resolved = await api.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'succeeded' });
    expect(resolved.body).toMatchObject({ status: 'succeeded', version: 3 });
    // The processor's webhook about it comes too; nothing happens twice.
    await eventually(
      () => h.query(sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${payment.id}`),
      (rows) => Number(rows[0]!.n) >= 1,
      3000,
    );
    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded']);
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 1234 });
    expect((await availableOf(api)) - before).toBe(1234);
    const entries = await h.query(sql`SELECT count(*)::int AS n FROM journal_entries WHERE source_id = ${parseId('pay', payment.id)!}`);
    expect(entries[0]!.n).toBe(1);
    // The mandate stays revoked, with the debit recorded.
    const after = (await api.get(`/v1/mandates/${mandate.id}`)).body;
    expect(after).toMatchObject({ status: 'revoked', revoked_by: 'merchant' });
    expect(after.last_debit_at).not.toBeNull();
  });

  it('the bank revokes: the pending debit settles by itself through the webhook, once', async () => {
    const before = await availableOf(autoApi);
    const mandate = await newMandate(autoApi);
    const order = await newOrder(autoApi, { amount: 4321 });
    const payment = (await debit(autoApi, order.id, mandate.id)).body;
    const revoked = await autoApi.post(`/v1/test-helpers/mandates/${mandate.id}/resolve`, { outcome: 'revoked' });
    expect(revoked.body).toMatchObject({ status: 'revoked', revoked_by: 'bank' });
    const settled = await eventually(
      () => autoApi.get(`/v1/payments/${payment.id}`),
      (r) => r.body.status !== 'pending',
    );
    expect(settled.body.status).toBe('succeeded');
    expect((await availableOf(autoApi)) - before).toBe(4321);
    expect(await eventTypesOf(autoApi, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded']);
    expect(await eventTypesOf(autoApi, mandate.id)).toEqual(['mandate.created', 'mandate.active', 'mandate.revoked']);
    expectError(await debit(autoApi, (await newOrder(autoApi)).id, mandate.id), 422, 'mandate_not_active');
  });

  it('a revocation racing debits: each debit is either created (and settles once) or refused, never both', async () => {
    const mandate = await newMandate(api);
    const orders = await Promise.all([1, 2, 3, 4].map(() => newOrder(api, { amount: 100 })));
    const results = await Promise.all([
      ...orders.map((o) => debit(api, o.id, mandate.id)),
      api.post(`/v1/mandates/${mandate.id}/revoke`),
    ]);
    const revoke = results.pop()!;
    expect(revoke.body.status).toBe('revoked');
    for (const [i, res] of results.entries()) {
      if (res.status === 201) {
        expect(res.body.status).toBe('pending');
        const done = await api.post(`/v1/test-helpers/payments/${res.body.id}/resolve`, { outcome: 'succeeded' });
        expect(done.body.status).toBe('succeeded');
        expect((await api.get(`/v1/payment-orders/${orders[i]!.id}`)).body.status).toBe('paid');
      } else {
        expectError(res, 422, 'mandate_not_active');
        expect((await api.get(`/v1/payments?payment_order=${orders[i]!.id}`)).body.data).toEqual([]);
      }
    }
  });
});

describe('expiry of dormant mandates, by the worker and its clock', () => {
  it('expires an active mandate unused for MANDATE_DORMANCY_DAYS, counted from activation or the last successful debit', async () => {
    const t0 = Date.now();
    clock.set(t0);
    const unused = await newMandate(clockApi);
    const used = await newMandate(clockApi);
    const pendingOne = await newMandate(clockApi, 'sepa_core', ENDINGS.pending);
    // Day 25: a debit on `used` settles.
    clock.set(t0 + 25 * DAY);
    const order = await newOrder(clockApi, { expires_at: new Date(t0 + 29 * DAY).toISOString() });
    const payment = (await debit(clockApi, order.id, used.id)).body;
    expect((await clockApi.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'succeeded' })).body.status).toBe('succeeded');
    expect((await clockApi.get(`/v1/mandates/${used.id}`)).body.last_debit_at).toBe(new Date(t0 + 25 * DAY).toISOString());

    const pass = (at: number) => clocked.service.runWorker(at);
    // Day 29: nothing is 30 days dormant yet.
    expect((await pass(t0 + 29 * DAY)).mandates!.expired).toBe(0);
    // Day 31: the unused one expires; the one debited on day 25 does not.
    expect((await pass(t0 + 31 * DAY)).mandates!.expired).toBeGreaterThanOrEqual(1);
    expect((await clockApi.get(`/v1/mandates/${unused.id}`)).body).toMatchObject({ status: 'expired', version: unused.version + 1 });
    expect((await clockApi.get(`/v1/mandates/${used.id}`)).body.status).toBe('active');
    expect((await clockApi.get(`/v1/mandates/${pendingOne.id}`)).body.status).toBe('pending');
    expect(await eventTypesOf(clockApi, unused.id)).toEqual(['mandate.created', 'mandate.active', 'mandate.expired']);
    // Day 56: 31 days after its last debit, the other expires too; a second pass finds nothing.
    await pass(t0 + 56 * DAY);
    expect((await clockApi.get(`/v1/mandates/${used.id}`)).body.status).toBe('expired');
    expect((await pass(t0 + 56 * DAY)).mandates!.expired).toBe(0);

    // An expired mandate debits nothing and cannot be revoked.
    clock.set(t0 + 26 * DAY);
    const late = await newOrder(clockApi, { expires_at: new Date(t0 + 29 * DAY).toISOString() });
    expectError(await debit(clockApi, late.id, unused.id), 422, 'mandate_not_active');
    const revoke = await clockApi.post(`/v1/mandates/${unused.id}/revoke`);
    expectError(revoke, 422, 'invalid_state');
    expect(revoke.body.error.message).toContain('status is expired');
  });
});

describe('mandates abandoned by a crashed request, found by the worker', () => {
  async function crashAfterFirstPhase(ending: string) {
    const body = mandateBody('sepa_core', ending);
    const crashed = await clocked.service.crashingAt('mandate_created', () => clockApi.post('/v1/mandates', body));
    expect(crashed.status).toBe(500);
    return { id: await mandateIdByReference(h, body.reference), body };
  }

  it('fails it (processing_error) once its retry window is over, when no connector holds it', async () => {
    clock.set(Date.now());
    const { id } = await crashAfterFirstPhase(ENDINGS.success);
    const pass = () => clocked.service.runWorker();
    await pass();
    expect((await clockApi.get(`/v1/mandates/${id}`)).body.status).toBe('pending');
    clock.advance(10 * 60_000);
    await pass();
    const after = (await clockApi.get(`/v1/mandates/${id}`)).body;
    expect(after).toMatchObject({ status: 'failed', failure_code: 'processing_error', connector: null });
    expect(await eventTypesOf(clockApi, id)).toEqual(['mandate.created', 'mandate.failed']);
  });

  it('adopts it when a connector of its route holds it', async () => {
    clock.set(Date.now());
    const { id, body } = await crashAfterFirstPhase(ENDINGS.success);
    const sim = clocked.service.simulator('simulator_b');
    await bookMandate(sim, id, body);
    clock.advance(10 * 60_000);
    await clocked.service.runWorker();
    expect((await clockApi.get(`/v1/mandates/${id}`)).body).toMatchObject({ status: 'active', connector: 'simulator_b' });
  });
});
