// Saved payment methods: the internal attach (row and payment_method.attached in the caller's
// transaction), then over HTTP retrieve, list with its filters and pages, update of expiry and
// metadata, detach (and a second detach), typed errors and tenancy. The network transaction id and
// the vault record stay inside: no answer or event carries them.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { expectError } from '../support/helpers.js';
import { contextOf, newCustomer, savedCard, testVault } from '../support/customers.js';
import { attachPaymentMethod } from '../../src/domain/payment-methods/service.js';
import { parseId } from '../../src/kernel/ids.js';

const h = useService();
const { api } = h;
const owner = () => ({ accountId: h.tenant.accountId, livemode: false });
const nextYear = new Date().getUTCFullYear() + 1;

const eventsOf = (id: string) => h.query(sql`SELECT type, request_id, data FROM events WHERE object_id = ${id} ORDER BY id`);

describe('attachPaymentMethod (internal)', () => {
  it('stores the card summary with its event in the caller’s transaction; the network transaction id and vault record stay inside', async () => {
    const c = await newCustomer(api);
    const pm = await savedCard(h.db, owner(), c.id, { networkTransactionId: 'ntid-secret-123', vaultRecordId: 'vault-rec-1', card: { brand: 'mastercard', last4: '4444', exp_month: 3, exp_year: nextYear, fingerprint: 'fp-x', funding: 'debit' } });
    expect(pm).toMatchObject({
      object: 'payment_method', livemode: false, type: 'card', customer: c.id, usage: 'off_session', status: 'active',
      card: { brand: 'mastercard', last4: '4444', exp_month: 3, exp_year: nextYear, fingerprint: 'fp-x', funding: 'debit' }, failure_code: null, metadata: {}, version: 1,
    });
    expect(pm.id).toMatch(/^pm_[0-9a-z]{26}$/);
    const read = await api.get(`/v1/payment-methods/${pm.id}`);
    expect(read.body).toEqual(pm);
    const [row] = await h.query(sql`SELECT network_transaction_id, vault_record_id FROM payment_methods WHERE id = ${parseId('pm', pm.id)}`);
    expect(row).toEqual({ network_transaction_id: 'ntid-secret-123', vault_record_id: 'vault-rec-1' });
    const events = await eventsOf(pm.id);
    expect(events.map((e) => e.type)).toEqual(['payment_method.attached']);
    for (const text of [read.text, JSON.stringify(events)]) {
      expect(text).not.toContain('ntid-secret-123');
      expect(text).not.toContain('vault-rec-1');
    }
  });

  it('writes nothing when the caller’s transaction rolls back, and refuses a customer of another account, mode or none', async () => {
    const c = await newCustomer(api);
    const customerId = parseId('cus', c.id)!;
    const input = { customerId, usage: 'on_session' as const, card: { brand: 'visa' as const, last4: '1111', exp_month: 1, exp_year: nextYear, fingerprint: 'f' }, vaultRecordId: null, networkTransactionId: null, status: 'active' as const };
    await expect(
      h.db.transaction(async (tx) => {
        await attachPaymentMethod(tx, contextOf(owner()), input);
        throw new Error('the verification failed to commit');
      }),
    ).rejects.toThrow('the verification failed to commit');
    expect(await h.query(sql`SELECT 1 FROM payment_methods WHERE customer_id = ${customerId}`)).toEqual([]);
    expect(await h.query(sql`SELECT 1 FROM events WHERE type = 'payment_method.attached' AND data->'object'->>'customer' = ${c.id}`)).toEqual([]);

    const other = await h.newTenant();
    for (const stranger of [{ accountId: other.accountId, livemode: false }, { accountId: h.tenant.accountId, livemode: true }]) {
      await expect(h.db.transaction((tx) => attachPaymentMethod(tx, contextOf(stranger), input))).rejects.toMatchObject({ code: 'resource_missing', param: 'customer' });
    }
    expect(await h.query(sql`SELECT 1 FROM payment_methods WHERE customer_id = ${customerId}`)).toEqual([]);
  });
});

describe('payment methods over HTTP', () => {
  it('lists by customer and status, newest first, in pages', async () => {
    const { api: mine, accountId } = await h.newTenant();
    const me = { accountId, livemode: false };
    const [a, b] = [await newCustomer(mine), await newCustomer(mine)];
    const ofA = [];
    for (let i = 0; i < 3; i++) ofA.push(await savedCard(h.db, me, a.id));
    const ofB = await savedCard(h.db, me, b.id, { status: 'failed', failureCode: 'card_declined' });
    expect(ofB).toMatchObject({ status: 'failed', failure_code: 'card_declined' });

    expect((await mine.get('/v1/payment-methods?limit=100')).body.data.map((p: { id: string }) => p.id)).toEqual([ofB.id, ...ofA.map((p) => p.id).reverse()]);
    expect((await mine.get(`/v1/payment-methods?customer=${a.id}`)).body.data.map((p: { id: string }) => p.id)).toEqual(ofA.map((p) => p.id).reverse());
    expect((await mine.get('/v1/payment-methods?status=failed')).body.data.map((p: { id: string }) => p.id)).toEqual([ofB.id]);
    const page = await mine.get(`/v1/payment-methods?customer=${a.id}&limit=2`);
    expect(page.body.has_more).toBe(true);
    const rest = await mine.get(`/v1/payment-methods?customer=${a.id}&limit=2&starting_after=${page.body.data[1].id}`);
    expect(rest.body).toMatchObject({ has_more: false, data: [{ id: ofA[0]!.id }] });
    expectError(await mine.get('/v1/payment-methods?customer=ben_01h455vb4pex5vsknk084sn02q'), 400, 'parameter_invalid', { param: 'customer' });
    expectError(await mine.get('/v1/payment-methods?status=expired'), 400, 'parameter_invalid', { param: 'status' });
    // Another account's customer: nothing of it shows.
    expect((await api.get(`/v1/payment-methods?customer=${a.id}`)).body.data).toEqual([]);
  });

  it('updates expiry and metadata (with its event), refuses a past expiry and other fields', async () => {
    const c = await newCustomer(api);
    const pm = await savedCard(h.db, owner(), c.id);
    const res = await api.request('PATCH', `/v1/payment-methods/${pm.id}`, { body: { exp_month: 7, exp_year: nextYear + 3, metadata: { label: 'work' } } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ card: { ...pm.card, exp_month: 7, exp_year: nextYear + 3 }, metadata: { label: 'work' }, version: 2 });
    const same = await api.request('PATCH', `/v1/payment-methods/${pm.id}`, { body: { exp_month: 7 } });
    expect(same.body.version).toBe(2);
    expect((await eventsOf(pm.id)).map((e) => e.type)).toEqual(['payment_method.attached', 'payment_method.updated']);

    expectError(await api.request('PATCH', `/v1/payment-methods/${pm.id}`, { body: { exp_year: 2020 } }), 400, 'parameter_invalid', { param: 'exp_year' });
    const now = new Date();
    if (now.getUTCMonth() > 0) {
      // This year, a month already over.
      await api.request('PATCH', `/v1/payment-methods/${pm.id}`, { body: { exp_year: now.getUTCFullYear(), exp_month: 12 } });
      expectError(await api.request('PATCH', `/v1/payment-methods/${pm.id}`, { body: { exp_month: now.getUTCMonth() } }), 400, 'parameter_invalid', { param: 'exp_month' });
    }
    expectError(await api.request('PATCH', `/v1/payment-methods/${pm.id}`, { body: { exp_month: 13 } }), 400, 'parameter_invalid', { param: 'exp_month' });
    expectError(await api.request('PATCH', `/v1/payment-methods/${pm.id}`, { body: { card: { number: '4242424242424242' } } }), 400, 'parameter_unknown', { param: 'card' });
    expectError(await api.request('PATCH', `/v1/payment-methods/${pm.id}`, { body: { usage: 'on_session' } }), 400, 'parameter_unknown', { param: 'usage' });
  });

  it('detaches once (card data erased, event), then answers 422 payment_method_detached to a detach or an update', async () => {
    const c = await newCustomer(api);
    const pm = await savedCard(h.db, owner(), c.id);
    const [before] = await h.query(sql`SELECT vault_record_id FROM payment_methods WHERE id = ${parseId('pm', pm.id)}`);
    const record = before!.vault_record_id as string;
    const tenancy = contextOf(owner());
    expect((await testVault.unseal(h.db, tenancy, record, { type: 'payment', id: 'pay_test' })).number).toBe('4242424242424242');
    const res = await api.post(`/v1/payment-methods/${pm.id}/detach`, undefined, { idempotencyKey: 'detach-1' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: pm.id, status: 'detached', customer: c.id, card: pm.card, version: 2 });
    const [row] = await h.query(sql`SELECT vault_record_id, detached_at FROM payment_methods WHERE id = ${parseId('pm', pm.id)}`);
    expect(row!.vault_record_id).toBeNull();
    expect(row!.detached_at).not.toBeNull();
    const events = await eventsOf(pm.id);
    expect(events.map((e) => e.type)).toEqual(['payment_method.attached', 'payment_method.detached']);
    expect(events[1]!.request_id).toBe(res.headers.get('request-id'));
    // Crypto-shredded: the record's data key is gone, so the card can never be unsealed again.
    await expect(testVault.unseal(h.db, tenancy, record, { type: 'payment', id: 'pay_test' })).rejects.toMatchObject({ code: 'record_erased' });
    const [shredded] = await h.query(sql`SELECT wrapped_key, sealed_card, erased_at FROM vault_records WHERE id = ${parseId('vr', record)}`);
    expect(shredded).toMatchObject({ wrapped_key: null, sealed_card: null });
    expect(shredded!.erased_at).not.toBeNull();

    const replay = await api.post(`/v1/payment-methods/${pm.id}/detach`, undefined, { idempotencyKey: 'detach-1' });
    expect(replay.text).toBe(res.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expectError(await api.post(`/v1/payment-methods/${pm.id}/detach`), 422, 'payment_method_detached', { type: 'eligibility' });
    expectError(await api.request('PATCH', `/v1/payment-methods/${pm.id}`, { body: { metadata: { a: 'b' } } }), 422, 'payment_method_detached');
    expectError(await api.post(`/v1/payment-methods/${pm.id}/detach`, { force: true }), 400, 'parameter_unknown', { param: 'force' });
    expect((await api.get(`/v1/payment-methods/${pm.id}`)).body.version).toBe(2);
    expect(await eventsOf(pm.id)).toHaveLength(2);
  });

  it("answers 404 for another account's or the other mode's method and for malformed ids", async () => {
    const c = await newCustomer(api);
    const pm = await savedCard(h.db, owner(), c.id);
    const other = await h.newTenant();
    for (const stranger of [other.api, h.live]) {
      expectError(await stranger.get(`/v1/payment-methods/${pm.id}`), 404, 'resource_missing');
      expectError(await stranger.request('PATCH', `/v1/payment-methods/${pm.id}`, { body: { metadata: {} } }), 404, 'resource_missing');
      expectError(await stranger.post(`/v1/payment-methods/${pm.id}/detach`), 404, 'resource_missing');
      expect((await stranger.get(`/v1/payment-methods?customer=${c.id}`)).body.data).toEqual([]);
    }
    expectError(await api.get(`/v1/payment-methods/${c.id}`), 404, 'resource_missing');
    expectError(await api.post('/v1/payment-methods/pm_nope/detach'), 404, 'resource_missing');
    expect((await api.get(`/v1/payment-methods/${pm.id}`)).body).toMatchObject({ status: 'active', version: 1 });
    // Saving a card needs the card (payment-methods.verify.test.ts covers the rest).
    expectError(await api.post('/v1/payment-methods', { customer: c.id }), 400, 'parameter_missing', { param: 'card' });
  });
});
