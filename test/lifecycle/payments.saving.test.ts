// Saving a card while paying (docs/customers.md): a succeeded card payment with customer and
// setup_future_usage names the saved pm_, which holds the card sealed in the vault and the network
// transaction id the processor answered; a failed one saves nothing and erases its sealed card;
// typed errors for bad combinations, another tenant's customer, a deleted customer.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { expectError } from '../support/helpers.js';
import { contextOf, newCustomer, testVault } from '../support/customers.js';
import { CARDS, cardMethod, newOrder, pay } from '../support/payments.js';
import { parseId } from '../../src/kernel/ids.js';
import { answerChallenge, browse, MERCHANT_RETURN, payWithChallenge } from '../support/payments.actions.js';

const h = useService();
const { api } = h;
const owner = () => ({ accountId: h.tenant.accountId, livemode: false });
const vaultRowsOf = (accountUuid: string) => h.query(sql`SELECT id, wrapped_key, erased_at FROM vault_records WHERE account_id = ${accountUuid}`);

describe('saving a card while paying', () => {
  it('saves the card of a succeeded payment: pm_ named by the answer and the event, card in the vault, network transaction id kept', async () => {
    const c = await newCustomer(api);
    const order = await newOrder(api);
    const res = await pay(api, order.id, CARDS.success, { customer: c.id, setup_future_usage: 'off_session' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'succeeded', payment_method: { type: 'card', card: { last4: '4242' } } });
    const pmId = res.body.payment_method_saved as string;
    expect(pmId).toMatch(/^pm_[0-9a-z]{26}$/);
    expect((await api.get(`/v1/payments/${res.body.id}`)).body.payment_method_saved).toBe(pmId);

    const pm = (await api.get(`/v1/payment-methods/${pmId}`)).body;
    expect(pm).toMatchObject({ customer: c.id, usage: 'off_session', status: 'active', card: res.body.payment_method.card });
    const [row] = await h.query(sql`SELECT vault_record_id, network_transaction_id FROM payment_methods WHERE id = ${parseId('pm', pmId)}`);
    expect(row!.network_transaction_id).toMatch(/^simntid_/);
    const card = await testVault.unseal(h.db, contextOf(owner()), row!.vault_record_id as string, { type: 'payment', id: 'pay_check' });
    expect(card).toEqual({ number: CARDS.success, expMonth: 12, expYear: new Date().getUTCFullYear() + 2 });

    const [succeeded] = await h.query(sql`SELECT data FROM events WHERE type = 'payment.succeeded' AND object_id = ${res.body.id}`);
    expect((succeeded!.data as { object: { payment_method_saved: string } }).object.payment_method_saved).toBe(pmId);
    const [attached] = await h.query(sql`SELECT request_id FROM events WHERE type = 'payment_method.attached' AND object_id = ${pmId}`);
    expect(attached!.request_id).toBe(res.headers.get('request-id'));
    // Nothing internal in the answer: no vault record, no network transaction id, no card number.
    for (const secret of [row!.vault_record_id as string, row!.network_transaction_id as string, CARDS.success]) expect(res.text).not.toContain(secret);
  });

  it('a failed payment saves nothing and its sealed card is erased', async () => {
    const { api: mine, accountId } = await h.newTenant();
    const c = await newCustomer(mine);
    const res = await pay(mine, (await newOrder(mine)).id, CARDS.declined, { customer: c.id, setup_future_usage: 'on_session' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'card_declined', payment_method_saved: null });
    expect((await mine.get(`/v1/payment-methods?customer=${c.id}`)).body.data).toEqual([]);
    const records = await vaultRowsOf(parseId('acct', accountId)!);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ wrapped_key: null });
    expect(records[0]!.erased_at).not.toBeNull();
  });

  it('a payment waiting for 3-D Secure saves the card once the customer completes it, and nothing when they fail it', async () => {
    const c = await newCustomer(api);
    for (const outcome of ['completed', 'failed'] as const) {
      const { payment } = await payWithChallenge(api, { return_url: MERCHANT_RETURN, customer: c.id, setup_future_usage: 'on_session' });
      expect(payment).toMatchObject({ status: 'requires_action', payment_method_saved: null });
      expect((await browse(await answerChallenge(payment.next_action.url, outcome))).status).toBe(303);
      const after = (await api.get(`/v1/payments/${payment.id}`)).body;
      if (outcome === 'completed') {
        expect(after).toMatchObject({ status: 'succeeded', payment_method_saved: expect.stringMatching(/^pm_/) });
        expect((await api.get(`/v1/payment-methods/${after.payment_method_saved}`)).body).toMatchObject({ customer: c.id, usage: 'on_session', status: 'active' });
      } else {
        expect(after).toMatchObject({ status: 'failed', payment_method_saved: null });
      }
    }
    expect((await api.get(`/v1/payment-methods?customer=${c.id}`)).body.data).toHaveLength(1);
  });

  it('a payment without saving keeps nothing in the vault and names no method', async () => {
    const { api: mine, accountId } = await h.newTenant();
    const res = await pay(mine, (await newOrder(mine)).id, CARDS.success, { return_url: 'https://shop.example.com/done' });
    expect(res.body).toMatchObject({ status: 'succeeded', payment_method_saved: null });
    expect(await vaultRowsOf(parseId('acct', accountId)!)).toEqual([]);
  });

  it('refuses bad combinations with typed errors, another tenant’s or a deleted customer with 404, and writes nothing', async () => {
    const { api: mine, accountId } = await h.newTenant();
    const c = await newCustomer(mine);
    const order = await newOrder(mine);
    expectError(await pay(mine, order.id, CARDS.success, { customer: c.id }), 400, 'parameter_missing', { param: 'setup_future_usage' });
    expectError(await pay(mine, order.id, CARDS.success, { setup_future_usage: 'off_session' }), 400, 'parameter_missing', { param: 'customer' });
    expectError(await pay(mine, order.id, CARDS.success, { customer: c.id, setup_future_usage: 'sometimes' }), 400, 'parameter_invalid', { param: 'setup_future_usage' });
    const debit = await mine.post('/v1/payments', { payment_order: order.id, payment_method: { type: 'mandate', mandate: 'mdt_01jd8x3v0pe7wbz0m4k6f2n9qa' }, customer: c.id, setup_future_usage: 'on_session' });
    expectError(debit, 400, 'parameter_invalid', { param: 'setup_future_usage' });

    const stranger = await newCustomer(api);
    expectError(await pay(mine, order.id, CARDS.success, { customer: stranger.id, setup_future_usage: 'off_session' }), 404, 'resource_missing', { param: 'customer' });
    expectError(await pay(mine, order.id, CARDS.success, { customer: 'cus_nope', setup_future_usage: 'off_session' }), 404, 'resource_missing', { param: 'customer' });
    const gone = await newCustomer(mine);
    expect((await mine.request('DELETE', `/v1/customers/${gone.id}`)).status).toBe(200);
    expectError(await pay(mine, order.id, CARDS.success, { customer: gone.id, setup_future_usage: 'off_session' }), 404, 'resource_missing', { param: 'customer' });

    expect((await mine.get('/v1/payments')).body.data).toEqual([]);
    expect((await mine.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    expect(await vaultRowsOf(parseId('acct', accountId)!)).toEqual([]);
  });
});
