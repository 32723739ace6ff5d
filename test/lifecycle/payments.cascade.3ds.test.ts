// The 3-D Secure retry of a cascade (docs/declines.md "Cascading retries"): card 4000000000003246
// is soft-declined `authentication_required` by the simulators unless 3-D Secure is requested. A
// rule cascading `authentication_required` retries an on-session payment with a return_url at the
// same connector as attempt 2 (`pay_…_2`) with 3-D Secure requested: the customer completes the
// challenge and it succeeds. Without a return_url, or off session, no such retry is made.
import { describe, expect, it } from 'vitest';
import { newCustomer, savedCard, sealedCard } from '../support/customers.js';
import { useService } from '../support/fixtures.js';
import { newOrder, pay } from '../support/payments.js';
import { answerChallenge, browse, MERCHANT_RETURN } from '../support/payments.actions.js';

const SOFT_DECLINE = '4000000000003246';
const CASCADE = { rules: [{ connectors: [{ name: 'simulator_a' }], cascade: { on: ['authentication_required'], max_attempts: 2 } }] };

describe('cascade: authentication_required retried with 3-D Secure (simulators)', () => {
  const h = useService();
  const { api } = h;
  const sent = (reference: string) => h.service.simulator('simulator_a').chargeRequests.get(reference) ?? 0;

  it('on session with a return_url: attempt 2 at the same connector asks for 3-D Secure; the challenge completed, it succeeds', async () => {
    expect((await api.request('PUT', '/v1/routing', { body: CASCADE })).status).toBe(200);
    const order = await newOrder(api);
    const res = await pay(api, order.id, SOFT_DECLINE, { return_url: MERCHANT_RETURN });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'requires_action', connector: 'simulator_a', next_action: { type: 'redirect_to_url' } });
    expect(res.body.attempts).toEqual([
      expect.objectContaining({ connector: 'simulator_a', outcome: 'declined', decline_type: 'authentication_required', error_code: 'authentication_required' }),
      expect.objectContaining({ connector: 'simulator_a', outcome: 'requires_action' }),
    ]);
    const id = res.body.id as string;
    // Attempt 1 under the payment's id, attempt 2 (with 3-D Secure) under id_2: one request each.
    expect([sent(id), sent(`${id}_2`)]).toEqual([1, 1]);
    expect((await h.service.simulator('simulator_a').charges.get(`${id}_2`))?.state).toBe('AWAITING_AUTHENTICATION');

    const back = await answerChallenge(res.body.next_action.url, 'completed');
    expect((await browse(back)).status).toBe(303);
    expect((await api.get(`/v1/payments/${id}`)).body).toMatchObject({ status: 'succeeded', connector: 'simulator_a', decline_type: null });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
  });

  it('without a return_url: no 3-D Secure retry, the soft decline stands', async () => {
    await api.request('PUT', '/v1/routing', { body: CASCADE });
    const res = await pay(api, (await newOrder(api)).id, SOFT_DECLINE);
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'authentication_required', decline_type: 'authentication_required' });
    expect(res.body.attempts).toHaveLength(1);
    expect(sent(`${res.body.id}_2`)).toBe(0);
  });

  it('off session (a saved card, the customer absent): no 3-D Secure retry', async () => {
    await api.request('PUT', '/v1/routing', { body: CASCADE });
    const owner = { accountId: h.tenant.accountId, livemode: false };
    const customer = await newCustomer(api);
    const pm = await savedCard(h.db, owner, customer.id, { vaultRecordId: await sealedCard(h.db, owner, SOFT_DECLINE) });
    const res = await api.post('/v1/payments', { payment_order: (await newOrder(api)).id, payment_method: { type: 'saved_card', saved_card: { id: pm.id } }, off_session: true });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'authentication_required', next_action: null });
    expect(res.body.attempts).toHaveLength(1);
    expect(sent(`${res.body.id}_2`)).toBe(0);
  });
});
