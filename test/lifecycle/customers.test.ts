// Customers over HTTP: create, retrieve, list with its filters and pages, update, delete (which
// detaches every saved card), the reference unique per account and mode, typed errors, tenancy,
// idempotency, events committed with the change, and payment orders naming a customer by id.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { expectError, orderBody } from '../support/helpers.js';
import { contextOf, newCustomer, savedCard, testVault } from '../support/customers.js';
import { parseId } from '../../src/kernel/ids.js';

const h = useService();
const { api } = h;
const owner = () => ({ accountId: h.tenant.accountId, livemode: false });

const eventsOf = async (id: string) =>
  h.query(sql`SELECT type, request_id, (data->'object'->>'version')::int AS version FROM events WHERE object_id = ${id} ORDER BY id`);

describe('customer lifecycle', () => {
  it('creates, retrieves, updates and deletes, each change with its event written by the same request', async () => {
    const res = await api.post('/v1/customers', { email: 'grace@example.com', name: 'Grace Hopper', reference: 'user-1', metadata: { tier: 'gold' } });
    expect(res.status, res.text).toBe(201);
    const customer = res.body;
    expect(customer).toMatchObject({ object: 'customer', livemode: false, email: 'grace@example.com', name: 'Grace Hopper', reference: 'user-1', metadata: { tier: 'gold' }, version: 1 });
    expect(customer.id).toMatch(/^cus_[0-9a-z]{26}$/);
    expect((await api.get(`/v1/customers/${customer.id}`)).body).toEqual(customer);

    const patched = await api.request('PATCH', `/v1/customers/${customer.id}`, { body: { name: null, email: 'grace@navy.example', reference: null, metadata: {} } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name: null, email: 'grace@navy.example', reference: null, metadata: {}, version: 2 });
    const unchanged = await api.request('PATCH', `/v1/customers/${customer.id}`, { body: { email: 'grace@navy.example' } });
    expect(unchanged.body.version).toBe(2);

    const deleted = await api.request('DELETE', `/v1/customers/${customer.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ id: customer.id, object: 'customer', deleted: true });
    expectError(await api.get(`/v1/customers/${customer.id}`), 404, 'resource_missing', { param: 'id' });
    expectError(await api.request('DELETE', `/v1/customers/${customer.id}`), 404, 'resource_missing');
    expectError(await api.request('PATCH', `/v1/customers/${customer.id}`, { body: { name: 'X' } }), 404, 'resource_missing');

    const events = await eventsOf(customer.id);
    expect(events.map((e) => [e.type, e.version])).toEqual([['customer.created', 1], ['customer.updated', 2], ['customer.deleted', 3]]);
    expect(events[0]!.request_id).toBe(res.headers.get('request-id'));
    expect(events[2]!.request_id).toBe(deleted.headers.get('request-id'));
  });

  it('refuses bad input with typed errors and writes nothing', async () => {
    const before = await h.query(sql`SELECT count(*)::int AS n FROM customers`);
    expectError(await api.post('/v1/customers', { name: 'No Email' }), 400, 'parameter_missing', { param: 'email' });
    expectError(await api.post('/v1/customers', { email: 'not-an-email' }), 400, 'parameter_invalid', { param: 'email' });
    expectError(await api.post('/v1/customers', { email: 'a@example.com', reference: '' }), 400, 'parameter_invalid', { param: 'reference' });
    expectError(await api.post('/v1/customers', { email: 'a@example.com', phone: '1' }), 400, 'parameter_unknown', { param: 'phone' });
    expectError(await api.post('/v1/customers', { email: 'a@example.com', metadata: { k: 1 } }), 400, 'parameter_invalid');
    const c = await newCustomer(api);
    expectError(await api.request('PATCH', `/v1/customers/${c.id}`, { body: { email: null } }), 400, 'parameter_invalid', { param: 'email' });
    expectError(await api.get('/v1/customers/pm_01h455vb4pex5vsknk084sn02q'), 404, 'resource_missing');
    expectError(await api.get('/v1/customers?email='), 400, 'parameter_invalid', { param: 'email' });
    const after = await h.query(sql`SELECT count(*)::int AS n FROM customers`);
    expect(after[0]!.n).toBe(before[0]!.n + 1);
  });

  it('keeps references unique per account and mode, 422 reference_already_used on a clash, free again after a delete', async () => {
    const first = await newCustomer(api, { reference: 'dup-ref' });
    const clash = expectError(await api.post('/v1/customers', { email: 'b@example.com', reference: 'dup-ref' }), 422, 'reference_already_used', { param: 'reference', type: 'validation' });
    expect(clash.message).toContain('dup-ref');
    const other = await newCustomer(api, { reference: 'other-ref' });
    expectError(await api.request('PATCH', `/v1/customers/${other.id}`, { body: { reference: 'dup-ref' } }), 422, 'reference_already_used', { param: 'reference' });
    expect((await api.get(`/v1/customers/${other.id}`)).body).toMatchObject({ reference: 'other-ref', version: 1 });
    // The other mode and another account may use it.
    expect((await h.live.post('/v1/customers', { email: 'c@example.com', reference: 'dup-ref' })).status).toBe(201);
    expect((await (await h.newTenant()).api.post('/v1/customers', { email: 'c@example.com', reference: 'dup-ref' })).status).toBe(201);
    // Customers without a reference never clash.
    expect((await api.post('/v1/customers', { email: 'x@example.com' })).status).toBe(201);
    expect((await api.post('/v1/customers', { email: 'x@example.com' })).status).toBe(201);
    await api.request('DELETE', `/v1/customers/${first.id}`);
    expect((await api.post('/v1/customers', { email: 'd@example.com', reference: 'dup-ref' })).status).toBe(201);
    const refused = await h.query(sql`SELECT count(*)::int AS n FROM events WHERE type = 'customer.created' AND data->'object'->>'email' = 'b@example.com'`);
    expect(refused[0]!.n).toBe(0);
  });

  it('lets exactly one of several concurrent creates with one reference win', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => api.post('/v1/customers', { email: `race${i}@example.com`, reference: 'race-ref' })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 422, 422, 422, 422, 422]);
    for (const a of answers.filter((x) => x.status === 422)) expect(a.body.error).toMatchObject({ code: 'reference_already_used', param: 'reference' });
    const rows = await h.query(sql`SELECT count(*)::int AS n FROM customers WHERE reference = 'race-ref'`);
    expect(rows[0]!.n).toBe(1);
    const events = await h.query(sql`SELECT count(*)::int AS n FROM events WHERE type = 'customer.created' AND data->'object'->>'reference' = 'race-ref'`);
    expect(events[0]!.n).toBe(1);
  });

  it('replays a create with the same Idempotency-Key and refuses another body under it', async () => {
    const body = { email: 'replay@example.com', reference: 'replay-1' };
    const first = await api.post('/v1/customers', body, { idempotencyKey: 'cus-replay-1' });
    const second = await api.post('/v1/customers', body, { idempotencyKey: 'cus-replay-1' });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expectError(await api.post('/v1/customers', { ...body, name: 'Other' }, { idempotencyKey: 'cus-replay-1' }), 422, 'idempotency_key_reused');
    const rows = await h.query(sql`SELECT count(*)::int AS n FROM customers WHERE reference = 'replay-1'`);
    expect(rows[0]!.n).toBe(1);
  });
});

describe('listing customers', () => {
  it('filters by email and reference, newest first, in pages', async () => {
    const { api: mine } = await h.newTenant();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await newCustomer(mine, { email: i % 2 ? 'odd@example.com' : 'even@example.com', reference: `r-${i}` }));
    const all = await mine.get('/v1/customers?limit=100');
    expect(all.body.data.map((c: { id: string }) => c.id)).toEqual(made.map((c) => c.id).reverse());
    const odd = await mine.get('/v1/customers?email=odd@example.com');
    expect(odd.body.data.map((c: { reference: string }) => c.reference)).toEqual(['r-3', 'r-1']);
    const one = await mine.get('/v1/customers?reference=r-2');
    expect(one.body.data.map((c: { id: string }) => c.id)).toEqual([made[2]!.id]);
    expect((await mine.get('/v1/customers?email=ODD@example.com')).body.data).toEqual([]);

    const page1 = await mine.get('/v1/customers?limit=2');
    expect(page1.body).toMatchObject({ object: 'list', has_more: true });
    const page2 = await mine.get(`/v1/customers?limit=2&starting_after=${page1.body.data[1].id}`);
    expect(page2.body.data.map((c: { id: string }) => c.id)).toEqual([made[2]!.id, made[1]!.id]);
    const back = await mine.get(`/v1/customers?limit=2&ending_before=${page2.body.data[0].id}`);
    expect(back.body.data).toEqual(page1.body.data);
    expectError(await mine.get('/v1/customers?starting_after=ord_01h455vb4pex5vsknk084sn02q'), 400, 'parameter_invalid', { param: 'starting_after' });
    expectError(await mine.get('/v1/customers?phone=1'), 400, 'parameter_unknown');

    await mine.request('DELETE', `/v1/customers/${made[4]!.id}`);
    expect((await mine.get('/v1/customers?reference=r-4')).body.data).toEqual([]);
  });
});

describe('tenancy', () => {
  it("answers 404 for another account's or the other mode's customer, and lists only the caller's", async () => {
    const c = await newCustomer(api, { reference: 'mine-only' });
    const other = await h.newTenant();
    for (const stranger of [other.api, h.live]) {
      expectError(await stranger.get(`/v1/customers/${c.id}`), 404, 'resource_missing');
      expectError(await stranger.request('PATCH', `/v1/customers/${c.id}`, { body: { name: 'Mallory' } }), 404, 'resource_missing');
      expectError(await stranger.request('DELETE', `/v1/customers/${c.id}`), 404, 'resource_missing');
      expect((await stranger.get('/v1/customers?reference=mine-only')).body.data).toEqual([]);
    }
    const otherAccount = expectError(await other.api.get(`/v1/customers/${c.id}`), 404, 'resource_missing');
    expect(otherAccount.message).not.toContain('mode');
    expect((await api.get(`/v1/customers/${c.id}`)).body).toMatchObject({ name: 'Ada Lovelace', version: 1 });
  });
});

describe('deleting a customer with saved cards', () => {
  it('detaches every method it holds (vault record cleared, one event each) in the same transaction as customer.deleted', async () => {
    const c = await newCustomer(api);
    const keep = await newCustomer(api);
    const cards = [await savedCard(h.db, owner(), c.id), await savedCard(h.db, owner(), c.id, { usage: 'on_session', status: 'requires_action' })];
    const already = await savedCard(h.db, owner(), c.id);
    expect((await api.post(`/v1/payment-methods/${already.id}/detach`)).status).toBe(200);
    const untouched = await savedCard(h.db, owner(), keep.id);
    const recordsOf = (ids: string[]) => h.query(sql`SELECT vault_record_id FROM payment_methods WHERE id IN (${sql.join(ids.map((id) => sql`${parseId('pm', id)}`), sql`, `)}) ORDER BY id`);
    const records = (await recordsOf(cards.map((card) => card.id))).map((r) => r.vault_record_id as string);
    const [kept] = (await recordsOf([untouched.id])).map((r) => r.vault_record_id as string);

    const deleted = await api.request('DELETE', `/v1/customers/${c.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    for (const card of cards) {
      expect((await api.get(`/v1/payment-methods/${card.id}`)).body).toMatchObject({ status: 'detached', customer: c.id, version: 2 });
      const events = await eventsOf(card.id);
      expect(events.map((e) => e.type)).toEqual(['payment_method.attached', 'payment_method.detached']);
      expect(events[1]!.request_id).toBe(deleted.headers.get('request-id'));
    }
    expect((await api.get(`/v1/payment-methods/${already.id}`)).body.version).toBe(2);
    expect((await api.get(`/v1/payment-methods/${untouched.id}`)).body).toMatchObject({ status: 'active', version: 1 });
    const rows = await h.query(sql`SELECT status, vault_record_id, detached_at FROM payment_methods WHERE customer_id = (SELECT id FROM customers WHERE deleted_at IS NOT NULL ORDER BY deleted_at DESC LIMIT 1)`);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatchObject({ status: 'detached', vault_record_id: null });
    // Their cards are crypto-shredded; the other customer's card is not.
    const tenancy = contextOf(owner());
    for (const record of records) await expect(testVault.unseal(h.db, tenancy, record, { type: 'payment', id: 'pay_test' })).rejects.toMatchObject({ code: 'record_erased' });
    expect((await testVault.unseal(h.db, tenancy, kept!, { type: 'payment', id: 'pay_test' })).number).toBe('4242424242424242');
    // A card cannot be attached to a deleted customer.
    await expect(savedCard(h.db, owner(), c.id)).rejects.toMatchObject({ code: 'resource_missing', param: 'customer' });
  });
});

describe('payment orders naming a customer', () => {
  it("copies the customer's email and name and names it on the order", async () => {
    const c = await newCustomer(api, { email: 'buyer@example.com', name: 'Buyer' });
    const res = await api.post('/v1/payment-orders', orderBody({ customer: { id: c.id } }));
    expect(res.status, res.text).toBe(201);
    expect(res.body.customer).toEqual({ id: c.id, email: 'buyer@example.com', name: 'Buyer' });
    expect((await api.get(`/v1/payment-orders/${res.body.id}`)).body.customer.id).toBe(c.id);
    const typed = await api.post('/v1/payment-orders', orderBody());
    expect(typed.body.customer).toEqual({ id: null, email: 'jane@example.com', name: 'Jane Doe' });
    // Later changes of the customer do not rewrite the order.
    await api.request('PATCH', `/v1/customers/${c.id}`, { body: { email: 'new@example.com' } });
    expect((await api.get(`/v1/payment-orders/${res.body.id}`)).body.customer.email).toBe('buyer@example.com');
  });

  it("answers 404 for another account's, the other mode's, a deleted or a malformed customer, and 400 for mixed or missing fields", async () => {
    const c = await newCustomer(api);
    const other = await h.newTenant();
    expectError(await other.api.post('/v1/payment-orders', orderBody({ customer: { id: c.id } })), 404, 'resource_missing', { param: 'customer.id' });
    expectError(await h.live.post('/v1/payment-orders', orderBody({ customer: { id: c.id } })), 404, 'resource_missing', { param: 'customer.id' });
    expectError(await api.post('/v1/payment-orders', orderBody({ customer: { id: 'ord_01h455vb4pex5vsknk084sn02q' } })), 404, 'resource_missing', { param: 'customer.id' });
    const gone = await newCustomer(api);
    await api.request('DELETE', `/v1/customers/${gone.id}`);
    expectError(await api.post('/v1/payment-orders', orderBody({ customer: { id: gone.id } })), 404, 'resource_missing', { param: 'customer.id' });
    expectError(await api.post('/v1/payment-orders', orderBody({ customer: { id: c.id, email: 'x@example.com' } })), 400, 'parameter_invalid', { param: 'customer.email' });
    expectError(await api.post('/v1/payment-orders', orderBody({ customer: { id: c.id, name: 'X' } })), 400, 'parameter_invalid', { param: 'customer.name' });
    expectError(await api.post('/v1/payment-orders', orderBody({ customer: { name: 'X' } })), 400, 'parameter_missing', { param: 'customer.email' });
    expectError(await api.post('/v1/payment-orders', orderBody({ customer: {} })), 400, 'parameter_missing', { param: 'customer.email' });
  });

  it('take setup_future_usage (for the hosted checkout) only with customer.id, and show it (null by default)', async () => {
    const c = await newCustomer(api);
    for (const usage of ['on_session', 'off_session']) {
      const res = await api.post('/v1/payment-orders', orderBody({ customer: { id: c.id }, setup_future_usage: usage }));
      expect(res.status, res.text).toBe(201);
      expect(res.body.setup_future_usage).toBe(usage);
      expect((await api.get(`/v1/payment-orders/${res.body.id}`)).body.setup_future_usage).toBe(usage);
    }
    expect((await api.post('/v1/payment-orders', orderBody({ customer: { id: c.id } }))).body.setup_future_usage).toBeNull();
    expect((await api.post('/v1/payment-orders', orderBody())).body.setup_future_usage).toBeNull();
    const [before] = await h.query(sql`SELECT count(*)::int AS n FROM payment_orders WHERE account_id = ${parseId('acct', h.tenant.accountId)}`);
    // Without a customer id: refused, the refusal stored against the key (the one-statement create stood aside).
    const typed = orderBody({ setup_future_usage: 'off_session' });
    const first = await api.post('/v1/payment-orders', typed, { idempotencyKey: 'ord-sfu-no-cus' });
    expectError(first, 400, 'parameter_invalid', { param: 'setup_future_usage' });
    expect((await api.post('/v1/payment-orders', typed, { idempotencyKey: 'ord-sfu-no-cus' })).text).toBe(first.text);
    expectError(await api.post('/v1/payment-orders', orderBody({ customer: { id: c.id }, setup_future_usage: 'always' })), 400, 'parameter_invalid', { param: 'setup_future_usage' });
    const [after] = await h.query(sql`SELECT count(*)::int AS n FROM payment_orders WHERE account_id = ${parseId('acct', h.tenant.accountId)}`);
    expect(after).toEqual(before);
  });

  it('stores a refusal against the Idempotency-Key and replays it', async () => {
    const body = orderBody({ customer: { id: 'cus_01h455vb4pex5vsknk084sn02q' } });
    const first = await api.post('/v1/payment-orders', body, { idempotencyKey: 'ord-missing-cus' });
    expectError(first, 404, 'resource_missing', { param: 'customer.id' });
    const again = await api.post('/v1/payment-orders', body, { idempotencyKey: 'ord-missing-cus' });
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });
});
