// Cascading retries through the service with the simulators (docs/declines.md): card
// 4000000000000440 is declined `generic` by simulator_a and approved by simulator_b, so a rule
// cascading `generic` across [simulator_a, simulator_b] turns it into a success with two attempts;
// 4000000000000853 is `do_not_retry` everywhere and never cascades. PUT /v1/routing refuses
// cascades no retry can serve.
import { describe, expect, it } from 'vitest';
import { CARDS, newOrder, pay } from '../support/payments.js';
import { useService } from '../support/fixtures.js';

const CASCADING = '4000000000000440';
const STOLEN = '4000000000000853';

const rule = (cascade?: Record<string, unknown>, connectors = ['simulator_a', 'simulator_b']) => ({
  rules: [{ name: 'cards', connectors: connectors.map((name) => ({ name })), ...(cascade ? { cascade } : {}) }],
});

describe('cascading retries (simulators)', () => {
  const h = useService();
  const { api } = h;

  it('a generic decline at simulator_a cascades to simulator_b: succeeded with two attempts, one of each', async () => {
    expect((await api.request('PUT', '/v1/routing', { body: rule({ on: ['generic'], max_attempts: 2 }) })).status).toBe(200);
    const order = await newOrder(api);
    const res = await pay(api, order.id, CASCADING);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'succeeded', connector: 'simulator_b', decline_type: null, failure_code: null });
    expect(res.body.attempts).toEqual([
      expect.objectContaining({ connector: 'simulator_a', outcome: 'declined', decline_type: 'generic' }),
      expect.objectContaining({ connector: 'simulator_b', outcome: 'succeeded' }),
    ]);
    // Its routing explanation says why simulator_a was left behind and where the payment went.
    expect(res.body.routing).toMatchObject({
      candidates: [{ connector: 'simulator_a', skipped: 'already_declined' }, { connector: 'simulator_b' }],
      chosen: 'simulator_b',
    });
    expect(res.body.routing.candidates[1].skipped).toBeUndefined();
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
    // Once settled, the same request answers the same payment.
    expect((await api.get(`/v1/payments/${res.body.id}`)).body.attempts).toHaveLength(2);
    // Refunded where attempt 2 took it: simulator_b holds the charge under pay_…_2, not the payment's id.
    const refund = await api.post('/v1/refunds', { payment: res.body.id, amount: 500 });
    expect(refund.status, refund.text).toBe(201);
    expect(refund.body).toMatchObject({ status: 'succeeded', connector: 'simulator_b' });
  });

  it('a manual payment cascaded: its authorisation at simulator_b is captured and voided under pay_…_2', async () => {
    await api.request('PUT', '/v1/routing', { body: rule({ on: ['generic'], max_attempts: 2 }) });
    const captured = await pay(api, (await newOrder(api)).id, CASCADING, { capture_method: 'manual' });
    expect(captured.body).toMatchObject({ status: 'requires_capture', connector: 'simulator_b' });
    const capture = await api.post(`/v1/payments/${captured.body.id}/capture`, {});
    expect(capture.status, capture.text).toBeLessThan(300);
    expect((await api.get(`/v1/payments/${captured.body.id}`)).body.status).toBe('succeeded');
    const voided = await pay(api, (await newOrder(api)).id, CASCADING, { capture_method: 'manual' });
    const cancel = await api.post(`/v1/payments/${voided.body.id}/cancel`, {});
    expect(cancel.status, cancel.text).toBeLessThan(300);
    expect((await api.get(`/v1/payments/${voided.body.id}`)).body.status).toBe('canceled');
  });

  it('without a cascade (the default) the decline ends the payment at simulator_a', async () => {
    await api.request('PUT', '/v1/routing', { body: rule() });
    const order = await newOrder(api);
    const res = await pay(api, order.id, CASCADING);
    expect(res.body).toMatchObject({ status: 'failed', connector: 'simulator_a', decline_type: 'generic' });
    expect(res.body.attempts).toHaveLength(1);
  });

  it('max_attempts 1 sends no second attempt', async () => {
    await api.request('PUT', '/v1/routing', { body: rule({ on: ['generic'], max_attempts: 1 }) });
    const res = await pay(api, (await newOrder(api)).id, CASCADING);
    expect(res.body).toMatchObject({ status: 'failed', decline_type: 'generic' });
    expect(res.body.attempts).toHaveLength(1);
  });

  it('a decline type the rule does not list stays declined (insufficient funds is retry_later)', async () => {
    await api.request('PUT', '/v1/routing', { body: rule({ on: ['generic'], max_attempts: 2 }) });
    const res = await pay(api, (await newOrder(api)).id, CARDS.insufficientFunds);
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'insufficient_funds', decline_type: 'retry_later' });
    expect(res.body.attempts).toHaveLength(1);
  });

  it('do_not_retry (stolen card) never cascades, whatever the rule lists', async () => {
    await api.request('PUT', '/v1/routing', { body: rule({ on: ['generic', 'retry_later'], max_attempts: 2 }) });
    const res = await pay(api, (await newOrder(api)).id, STOLEN);
    expect(res.body).toMatchObject({ status: 'failed', connector: 'simulator_a', decline_type: 'do_not_retry' });
    expect(res.body.attempts).toHaveLength(1);
  });

  it('a card every connector declines: the failed payment carries the last attempt (simulator_b)', async () => {
    await api.request('PUT', '/v1/routing', { body: rule({ on: ['generic'], max_attempts: 5 }) });
    const res = await pay(api, (await newOrder(api)).id, CARDS.declined);
    expect(res.body).toMatchObject({ status: 'failed', connector: 'simulator_b', decline_type: 'generic', failure_code: 'card_declined' });
    expect(res.body.attempts.map((a: { connector: string; outcome: string }) => `${a.connector}:${a.outcome}`)).toEqual(['simulator_a:declined', 'simulator_b:declined']);
  });
});

describe('PUT /v1/routing: a cascade checked', () => {
  const h = useService();
  const { api } = h;

  it.each([
    [{ on: ['do_not_retry'], max_attempts: 2 }, 'rules.0.cascade.on'],
    [{ on: ['generic', 'fix_data'], max_attempts: 2 }, 'rules.0.cascade.on'],
    [{ on: ['generic'], max_attempts: 0 }, 'rules.0.cascade.max_attempts'],
    [{ on: ['generic'], max_attempts: 6 }, 'rules.0.cascade.max_attempts'],
    [{ on: ['soft'], max_attempts: 2 }, 'rules.0.cascade.on'],
    [{ on: [], max_attempts: 2 }, 'rules.0.cascade.on'],
    [{ on: ['generic'] }, 'rules.0.cascade.max_attempts'],
  ])('%j → 400 naming %s, and the rules unchanged', async (cascade, param) => {
    const res = await api.request('PUT', '/v1/routing', { body: rule(cascade) });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.param).toMatch(new RegExp(`^${param.replaceAll('.', '\\.')}`));
    expect((await api.get('/v1/routing')).body.is_default).toBe(true);
  });

  it('a valid cascade is stored and shown', async () => {
    const res = await api.request('PUT', '/v1/routing', { body: rule({ on: ['generic', 'retry_later'], max_attempts: 3 }) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.rules[0].cascade).toEqual({ on: ['generic', 'retry_later'], max_attempts: 3 });
  });
});
