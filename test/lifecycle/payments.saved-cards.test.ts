// Paying with a saved card (docs/customers.md): on session (with or without the CVC again) and off
// session (merchant-initiated), the card unsealed for the payment with an audit row; typed errors
// for another tenant's method, a detached one, one saved for on_session used off session, one not
// active, off_session without a saved card; a processor asking for 3-D Secure off session fails it.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { expectError, type Api } from '../support/helpers.js';
import { newCustomer, savedCard, sealedCard } from '../support/customers.js';
import { CARDS, newOrder } from '../support/payments.js';
import { CHALLENGE_CARD } from '../support/payments.actions.js';
import { parseId } from '../../src/kernel/ids.js';

const h = useService();
const { api } = h;
const owner = () => ({ accountId: h.tenant.accountId, livemode: false });

/** A card saved by a succeeded payment: its pm_ id. */
async function saveByPaying(client: Api, usage: 'on_session' | 'off_session', customer?: string) {
  const c = customer ?? (await newCustomer(client)).id;
  const card = { number: CARDS.success, exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' };
  const res = await client.post('/v1/payments', { payment_order: (await newOrder(client)).id, payment_method: { type: 'card', card }, customer: c, setup_future_usage: usage });
  expect(res.body.payment_method_saved, res.text).toMatch(/^pm_/);
  return res.body.payment_method_saved as string;
}

const payWith = async (client: Api, pm: string, extra: Record<string, unknown> = {}, savedCardExtra: Record<string, unknown> = {}) =>
  client.post('/v1/payments', { payment_order: (await newOrder(client)).id, payment_method: { type: 'saved_card', saved_card: { id: pm, ...savedCardExtra } }, ...extra });

const unsealingsFor = (paymentId: string) => h.query(sql`SELECT movement_type, movement_id FROM vault_unsealings WHERE movement_id = ${paymentId}`);

describe('paying with a saved card', () => {
  it('on session, with and without the CVC again, and off session: succeeded, the card shown as the method’s, one audited unsealing each', async () => {
    const pm = await saveByPaying(api, 'off_session');
    const method = (await api.get(`/v1/payment-methods/${pm}`)).body;
    for (const [extra, cardExtra] of [[{}, { cvc: '123' }], [{}, {}], [{ off_session: true }, {}], [{ off_session: true, off_session_reason: 'subscription' }, {}]] as const) {
      const res = await payWith(api, pm, extra, cardExtra);
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ status: 'succeeded', payment_method: { type: 'card', card: { last4: '4242', fingerprint: method.card.fingerprint } }, payment_method_saved: null });
      expect(await unsealingsFor(res.body.id)).toEqual([{ movement_type: 'payment', movement_id: res.body.id }]);
      expect(res.text).not.toContain(CARDS.success);
    }
  });

  it('refuses with typed errors and creates nothing', async () => {
    const { api: mine } = await h.newTenant();
    const onSession = await saveByPaying(mine, 'on_session');
    const offSession = await saveByPaying(mine, 'off_session');
    const theirs = await saveByPaying(api, 'off_session');
    const before = (await mine.get('/v1/payments?limit=100')).body.data.length;

    expectError(await payWith(mine, theirs), 404, 'resource_missing', { param: 'payment_method.saved_card.id' });
    expectError(await payWith(mine, 'pm_nope', { off_session: true }), 404, 'resource_missing', { param: 'payment_method.saved_card.id' });
    expectError(await payWith(mine, onSession, { off_session: true }), 422, 'payment_method_on_session_only');
    expectError(await payWith(mine, offSession, { off_session_reason: 'subscription' }), 400, 'parameter_invalid', { param: 'off_session_reason' });
    expectError(await payWith(mine, offSession, { off_session: true, return_url: 'https://shop.example.com/done' }), 400, 'parameter_invalid', { param: 'return_url' });
    expectError(await payWith(mine, offSession, { off_session: true, off_session_reason: 'whenever' }), 400, 'parameter_invalid', { param: 'off_session_reason' });
    expectError(await payWith(mine, offSession, {}, { number: CARDS.success }), 400, 'parameter_unknown');
    const typed = await mine.post('/v1/payments', { payment_order: (await newOrder(mine)).id, payment_method: { type: 'card', card: { number: CARDS.success, exp_month: 12, exp_year: 2040, cvc: '123' } }, off_session: true });
    expectError(typed, 400, 'parameter_invalid', { param: 'off_session' });
    expect((await mine.post(`/v1/payment-methods/${offSession}/detach`)).status).toBe(200);
    expectError(await payWith(mine, offSession, { off_session: true }), 422, 'payment_method_detached');
    expect((await mine.get('/v1/payments?limit=100')).body.data).toHaveLength(before);
  });

  it('a method not active cannot be charged; off session a card needing 3-D Secure fails authentication_required', async () => {
    const c = await newCustomer(api);
    const failed = await savedCard(h.db, owner(), c.id, { status: 'failed', failureCode: 'card_declined' });
    expectError(await payWith(api, failed.id), 422, 'payment_method_not_active');
    const challenge = await savedCard(h.db, owner(), c.id, { vaultRecordId: await sealedCard(h.db, owner(), CHALLENGE_CARD) });
    const res = await payWith(api, challenge.id, { off_session: true });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'authentication_required', next_action: null });
    // The card stays saved: a failed charge does not erase a saved card.
    const [row] = await h.query(sql`SELECT status, vault_record_id FROM payment_methods WHERE id = ${parseId('pm', challenge.id)}`);
    expect(row).toMatchObject({ status: 'active' });
    expect(row!.vault_record_id).not.toBeNull();
  });
});
