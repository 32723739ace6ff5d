// Saving a card without paying (POST /v1/payment-methods): the zero-amount verification at a
// simulated processor, active with payment_method.attached and its network transaction id kept
// inside, declined → failed with its sealed card erased, a 3-D Secure card: requires_action, then
// completed or failed through the challenge page and our return endpoint, or without a way back
// failed authentication_required, each validation error, tenancy, idempotent replay, and a request
// dying between the phases (in-process crash points) resumed by its retry without verifying twice,
// or, with no retry, finished by the worker.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useDatabase, useService } from '../support/fixtures.js';
import { expectError, testClock } from '../support/helpers.js';
import { newCustomer } from '../support/customers.js';
import { answerChallenge, browse, CHALLENGE_CARD } from '../support/payments.actions.js';
import { parseId } from '../../src/kernel/ids.js';

const db = useDatabase();
const h = useService({ on: db });
const { api } = h;
/** A service with its own clock, for the worker's checks of verifications no retry finished. */
const clock = testClock();
const clocked = useService({ on: db, clock });
const nextYear = new Date().getUTCFullYear() + 1;
const card = (number = '4242424242424242', extra: Record<string, unknown> = {}) => ({ number, exp_month: 12, exp_year: nextYear, cvc: '123', ...extra });
const save = (body: Record<string, unknown>, key = `pm-${Math.random()}`) => api.post('/v1/payment-methods', body, { idempotencyKey: key });
const rowOf = async (id: string) => (await h.query(sql`SELECT * FROM payment_methods WHERE id = ${parseId('pm', id)}`))[0]!;
const eventsOf = (id: string) => h.query(sql`SELECT type FROM events WHERE object_id = ${id} ORDER BY id`);

describe('POST /v1/payment-methods', () => {
  it('verifies a good card: active, attached once, card sealed, network transaction id kept inside, never the number or CVC', async () => {
    const c = await newCustomer(api);
    const res = await save({ customer: c.id, card: card(), usage: 'off_session', metadata: { plan: 'gold' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      object: 'payment_method', customer: c.id, usage: 'off_session', status: 'active', failure_code: null, next_action: null,
      card: { brand: 'visa', last4: '4242', exp_month: 12, exp_year: nextYear }, metadata: { plan: 'gold' },
    });
    const row = await rowOf(res.body.id);
    expect(row).toMatchObject({ status: 'active', currency: 'USD', connector: 'simulator_a' });
    expect(row.network_transaction_id).toMatch(/simntid_/);
    expect(row.vault_record_id).toMatch(/^vr_/);
    expect((await eventsOf(res.body.id)).map((e) => e.type)).toEqual(['payment_method.attached']);
    expect(res.text).not.toContain('4242424242424242');
    expect(res.text).not.toContain(row.network_transaction_id);
    const stored = JSON.stringify(await h.query(sql`SELECT * FROM payment_methods, idempotency_keys WHERE payment_methods.id = ${parseId('pm', res.body.id)}`));
    expect(stored).not.toContain('4242424242424242');
    expect((await api.get(`/v1/payment-methods/${res.body.id}`)).body).toEqual(res.body);
  });

  it('a declined card: 201 failed with failure_code, no attached event, its sealed card erased', async () => {
    const c = await newCustomer(api);
    const res = await save({ customer: c.id, card: card('4000000000000002'), usage: 'on_session', currency: 'EUR' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'card_declined', usage: 'on_session' });
    const row = await rowOf(res.body.id);
    expect(row).toMatchObject({ currency: 'EUR', vault_record_id: null, network_transaction_id: null });
    expect(await eventsOf(res.body.id)).toEqual([]);
  });

  it('a 3-D Secure card with no way back to the customer fails authentication_required', async () => {
    const c = await newCustomer(api);
    const res = await save({ customer: c.id, card: card('4000000000003220'), usage: 'off_session' });
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'authentication_required' });
  });

  for (const outcome of ['completed', 'failed'] as const) {
    it(`3-D Secure ${outcome}: requires_action with next_action, then through the return endpoint to ${outcome === 'completed' ? 'active' : 'failed'}`, async () => {
      const c = await newCustomer(api);
      const res = await save({ customer: c.id, card: card(CHALLENGE_CARD), usage: 'off_session', return_url: 'https://shop.example.com/cards?step=2' });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ status: 'requires_action', next_action: { type: 'redirect_to_url', return_url: 'https://shop.example.com/cards?step=2' } });
      expect(await eventsOf(res.body.id)).toEqual([]);
      const back = await answerChallenge(res.body.next_action.url, outcome);
      expect(back).toMatch(new RegExp(`/v1/payment-methods/${res.body.id}/return/`));
      const landed = await browse(back);
      expect(landed.status).toBe(303);
      const merchant = new URL(landed.location!);
      expect(Object.fromEntries(merchant.searchParams)).toEqual({ step: '2', payment_method: res.body.id });
      const after = (await api.get(`/v1/payment-methods/${res.body.id}`)).body;
      const row = await rowOf(res.body.id);
      if (outcome === 'completed') {
        expect(after).toMatchObject({ status: 'active', next_action: null, failure_code: null });
        expect(row.network_transaction_id).toMatch(/simntid_/);
        expect((await eventsOf(res.body.id)).map((e) => e.type)).toEqual(['payment_method.attached']);
      } else {
        expect(after).toMatchObject({ status: 'failed', next_action: null, failure_code: 'authentication_failed' });
        expect(row.vault_record_id).toBeNull();
        expect(await eventsOf(res.body.id)).toEqual([]);
      }
      // Back again (a reload): nothing changes; a wrong token is a 404.
      expect((await browse(back)).status).toBe(303);
      expect((await api.get(`/v1/payment-methods/${res.body.id}`)).body.version).toBe(after.version);
      expect((await browse(back.replace(/return\/[^/]+$/, 'return/wrong-token'))).status).toBe(404);
    });
  }

  it('replays the stored answer for the same key and card, and refuses the key with another card', async () => {
    const c = await newCustomer(api);
    const body = { customer: c.id, card: card(), usage: 'off_session' };
    const first = await save(body, 'same-key');
    const again = await save(body, 'same-key');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await h.query(sql`SELECT 1 FROM payment_methods WHERE customer_id = ${parseId('cus', c.id)}`)).toHaveLength(1);
    expectError(await save({ ...body, card: card('4000000000000002') }, 'same-key'), 422, 'idempotency_key_reused');
    const stored = JSON.stringify(await h.query(sql`SELECT * FROM idempotency_keys WHERE key = 'same-key'`));
    expect(stored).not.toContain('4242424242424242');
  });

  it('refuses bad input with typed errors and saves nothing', async () => {
    const c = await newCustomer(api);
    const ok = { customer: c.id, card: card(), usage: 'off_session' };
    expectError(await save({ ...ok, card: card('4242424242424241') }), 400, 'parameter_invalid', { param: 'card.number' });
    expectError(await save({ ...ok, card: card('4242424242424242', { exp_year: 2001 }) }), 400, 'parameter_invalid', { param: 'card.exp_year' });
    expectError(await save({ ...ok, card: card('5555555555554444') }), 400, 'parameter_invalid', { param: 'card.number' });
    expectError(await save({ ...ok, usage: 'sometimes' }), 400, 'parameter_invalid');
    expectError(await save({ ...ok, customer: 'ord_01jd8x3v0pe7wbz0m4k6f2n9qa' }), 400, 'parameter_invalid', { param: 'customer' });
    expectError(await save({ ...ok, card: { ...card(), cvc: '1' } }), 400, 'parameter_invalid');
    expectError(await save({ ...ok, currency: 'usd' }), 400, 'parameter_invalid', { param: 'currency' });
    expectError(await save({ ...ok, return_url: 'not a url' }), 400, 'parameter_invalid', { param: 'return_url' });
    expect(await h.query(sql`SELECT 1 FROM payment_methods WHERE customer_id = ${parseId('cus', c.id)}`)).toEqual([]);
  });

  it('another account’s or mode’s customer, or a deleted one, is 404 and nothing is saved', async () => {
    const c = await newCustomer(api);
    const other = await h.newTenant();
    const foreign = await newCustomer(other.api);
    expectError(await save({ customer: foreign.id, card: card(), usage: 'off_session' }), 404, 'resource_missing', { param: 'customer' });
    await api.request('DELETE', `/v1/customers/${c.id}`);
    expectError(await save({ customer: c.id, card: card(), usage: 'off_session' }), 404, 'resource_missing', { param: 'customer' });
    const saved = await save({ customer: c.id.replace(/.$/, '0'), card: card(), usage: 'off_session' });
    expect(saved.status).toBe(404);
    expect(await h.query(sql`SELECT 1 FROM payment_methods WHERE customer_id IN (${parseId('cus', c.id)}, ${parseId('cus', foreign.id)})`)).toEqual([]);
  });

  for (const point of ['payment_method_created', 'payment_method_connector_answered'] as const) {
    it(`a request that dies at ${point} is resumed by its retry: one method, verified once, attached once`, async () => {
      const c = await newCustomer(api);
      const key = `pm-crash-${point}-${c.id}`;
      const body = { customer: c.id, card: card(), usage: 'off_session' };
      const crashed = await h.service.crashingAt(point, () => save(body, key));
      expect(crashed.status).toBe(500);
      const [left] = await h.query(sql`SELECT id, status FROM payment_methods WHERE customer_id = ${parseId('cus', c.id)}`);
      expect(left).toMatchObject({ status: 'pending' });
      const retried = await save(body, key);
      expect(retried.status, retried.text).toBe(201);
      expect(retried.body).toMatchObject({ status: 'active', customer: c.id });
      expect(await h.query(sql`SELECT 1 FROM payment_methods WHERE customer_id = ${parseId('cus', c.id)}`)).toHaveLength(1);
      const sent = ['simulator_a', 'simulator_b'].reduce((n, name) => n + (h.service.simulator(name).chargeRequests.get(retried.body.id) ?? 0), 0);
      expect(sent).toBe(1);
      expect((await eventsOf(retried.body.id)).map((e) => e.type)).toEqual(['payment_method.attached']);
    });
  }

  it('the worker finishes a verification no retry came for: adopted where the processor holds it, failed (card erased) where none does', async () => {
    clock.set(Date.now());
    const c = await newCustomer(clocked.api);
    const body = (number: string) => ({ customer: c.id, card: card(number), usage: 'off_session' });
    const answered = await clocked.service.crashingAt('payment_method_connector_answered', () => clocked.api.post('/v1/payment-methods', body('4242424242424242'), { idempotencyKey: `w1-${c.id}` }));
    expect(answered.status).toBe(500);
    const nowhere = await clocked.service.crashingAt('payment_method_created', () => clocked.api.post('/v1/payment-methods', body('4242424242424242'), { idempotencyKey: `w2-${c.id}` }));
    expect(nowhere.status).toBe(500);
    const rows = await h.query(sql`SELECT id, status, connector FROM payment_methods WHERE customer_id = ${parseId('cus', c.id)} ORDER BY created_at, id`);
    expect(rows.map((r) => r.status)).toEqual(['pending', 'pending']);
    clock.advance(60 * 60_000);
    await clocked.service.runWorker();
    const after = await h.query(sql`SELECT id, status, failure_code, vault_record_id, network_transaction_id FROM payment_methods WHERE customer_id = ${parseId('cus', c.id)}`);
    const held = after.find((r) => r.status === 'active');
    const lost = after.find((r) => r.status === 'failed');
    expect(held?.network_transaction_id).toMatch(/simntid_/);
    expect(lost).toMatchObject({ failure_code: 'processing_error', vault_record_id: null });
    const attached = await h.query(sql`SELECT object_id FROM events WHERE type = 'payment_method.attached' AND data->'object'->>'customer' = ${c.id}`);
    expect(attached).toHaveLength(1);
  });
});
