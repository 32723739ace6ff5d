// Routing: rule matching and weighted order (pure), GET/PUT /v1/routing (validation, versions,
// per mode), and payments following the rules — currency, amount range, weights.
import { describe, expect, it } from 'vitest';
import { orderConnectors, planRoute, ruleMatches, type RoutingRule } from '../../src/connectors/router.js';
import { CARDS, cardMethod, orderAndPay } from '../support/payments.js';
import { useService } from '../support/fixtures.js';

describe('routing rules (pure)', () => {
  const card = { currency: 'EUR', amount: 1000, paymentMethodType: 'card' as const };

  it('matches on currency, inclusive amount range and method type; an empty rule matches all', () => {
    expect(ruleMatches({ connectors: [] }, card)).toBe(true);
    expect(ruleMatches({ currencies: ['USD'], connectors: [] }, card)).toBe(false);
    expect(ruleMatches({ currencies: ['USD', 'EUR'], connectors: [] }, card)).toBe(true);
    expect(ruleMatches({ amount_min: 1000, amount_max: 1000, connectors: [] }, card)).toBe(true);
    expect(ruleMatches({ amount_min: 1001, connectors: [] }, card)).toBe(false);
    expect(ruleMatches({ amount_max: 999, connectors: [] }, card)).toBe(false);
    expect(ruleMatches({ payment_method_types: ['card'], connectors: [] }, card)).toBe(true);
  });

  it('the first matching rule decides', () => {
    const rules: RoutingRule[] = [
      { currencies: ['USD'], connectors: [{ name: 'x' }] },
      { amount_max: 5000, connectors: [{ name: 'y' }, { name: 'z' }] },
      { connectors: [{ name: 'z' }] },
    ];
    expect(planRoute(rules, card)).toEqual(['y', 'z']);
    expect(planRoute(rules, { ...card, currency: 'USD' })).toEqual(['x']);
    expect(planRoute(rules, { ...card, amount: 9000 })).toEqual(['z']);
    expect(planRoute([], card)).toBeUndefined();
  });

  it('orders by weight without replacement, then the unweighted in the order listed', () => {
    const connectors = [{ name: 'a', weight: 1 }, { name: 'fallback' }, { name: 'b', weight: 3 }, { name: 'zero', weight: 0 }];
    // Cumulative weights a: [0, 1), b: [1, 4) out of 4; the second draw has only b left.
    expect(orderConnectors(connectors, () => 0.1)).toEqual(['a', 'b', 'fallback', 'zero']);
    expect(orderConnectors(connectors, () => 0.5)).toEqual(['b', 'a', 'fallback', 'zero']);
    expect(orderConnectors([{ name: 'a' }, { name: 'b' }], () => 0.99)).toEqual(['a', 'b']);
  });

  it('splits volume close to the weights', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const firsts = { a: 0, b: 0 };
    for (let i = 0; i < 4000; i++) firsts[orderConnectors([{ name: 'a', weight: 70 }, { name: 'b', weight: 30 }], random)[0] as 'a' | 'b']++;
    expect(firsts.a / 4000).toBeGreaterThan(0.65);
    expect(firsts.a / 4000).toBeLessThan(0.75);
  });
});

describe('GET/PUT /v1/routing and payments that follow it', () => {
  let nextRandom = 0;
  const h = useService({ runtime: { random: () => nextRandom } });
  const { api, live } = h;

  it('starts from the test-mode default (simulator_a, then simulator_b)', async () => {
    const res = await api.get('/v1/routing');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'routing',
      livemode: false,
      rules: [{ name: 'default', connectors: [{ name: 'simulator_a' }, { name: 'simulator_b' }] }],
      is_default: true,
      connectors: [
        { name: 'simulator_a', connector: 'simulator_a', connector_account: null, circuit: 'closed' },
        { name: 'simulator_b', connector: 'simulator_b', connector_account: null, circuit: 'closed' },
      ],
      version: 0,
      updated_at: null,
    });
  });

  it('replaces the rules, bumps the version, and payments follow currency and amount rules', async () => {
    const rules = [
      { name: 'usd', currencies: ['USD'], connectors: [{ name: 'simulator_b' }] },
      { name: 'small', amount_max: 1000, payment_method_types: ['card'], connectors: [{ name: 'simulator_b' }, { name: 'simulator_a' }] },
      { name: 'rest', connectors: [{ name: 'simulator_a' }, { name: 'simulator_b' }] },
    ];
    const put = await api.request('PUT', '/v1/routing', { body: { rules } });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ rules, is_default: false, version: 1 });
    expect(put.body.updated_at).toEqual(expect.any(String));
    expect((await api.get('/v1/routing')).body).toEqual(put.body);
    expect((await api.request('PUT', '/v1/routing', { body: { rules } })).body.version).toBe(2);

    expect((await orderAndPay(api, CARDS.success, { currency: 'USD', amount: 50_000 })).payment.connector).toBe('simulator_b');
    expect((await orderAndPay(api, CARDS.success, { amount: 1000 })).payment.connector).toBe('simulator_b');
    expect((await orderAndPay(api, CARDS.success, { amount: 1001 })).payment.connector).toBe('simulator_a');
    // Fallback follows the rule's order too: simulator_b first, then simulator_a.
    const fallback = (await orderAndPay(api, CARDS.processorError, { amount: 5000 })).payment;
    expect(fallback.attempts.map((a: any) => [a.connector, a.outcome])).toEqual([
      ['simulator_a', 'error'],
      ['simulator_b', 'succeeded'],
    ]);

    // Each mode has its own configuration.
    expect((await live.get('/v1/routing')).body).toMatchObject({ livemode: true, is_default: true, rules: [] });
  });

  it('draws the first connector by weight', async () => {
    await api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'simulator_a', weight: 1 }, { name: 'simulator_b', weight: 3 }] }] } });
    nextRandom = 0.1;
    expect((await orderAndPay(api, CARDS.success)).payment.connector).toBe('simulator_a');
    nextRandom = 0.9;
    const b = (await orderAndPay(api, CARDS.success)).payment;
    expect(b.connector).toBe('simulator_b');
    expect(b.attempts).toHaveLength(1);
  });

  it.each([
    ['an unknown connector', { rules: [{ connectors: [{ name: 'stripe' }] }] }, 'rules.0.connectors.0.name', 'parameter_invalid'],
    ['a connector twice', { rules: [{ connectors: [{ name: 'simulator_a' }, { name: 'simulator_a' }] }] }, 'rules.0.connectors.1.name', 'parameter_invalid'],
    ['an empty connector list', { rules: [{ connectors: [] }] }, 'rules.0.connectors', 'parameter_invalid'],
    ['amount_min above amount_max', { rules: [{ amount_min: 10, amount_max: 5, connectors: [{ name: 'simulator_a' }] }] }, 'rules.0.amount_min', 'parameter_invalid'],
    ['an unknown currency', { rules: [{ currencies: ['EURO'], connectors: [{ name: 'simulator_a' }] }] }, 'rules.0.currencies.0', 'parameter_invalid'],
    ['a negative weight', { rules: [{ connectors: [{ name: 'simulator_a', weight: -1 }] }] }, 'rules.0.connectors.0.weight', 'parameter_invalid'],
    ['an unknown field', { rules: [{ connectors: [{ name: 'simulator_a' }], country: 'FR' }] }, 'rules.0.country', 'parameter_unknown'],
    ['no rules field', {}, 'rules', 'parameter_missing'],
  ])('refuses %s with 400, changing nothing', async (_what, body, param, code) => {
    const before = (await api.get('/v1/routing')).body;
    const res = await api.request('PUT', '/v1/routing', { body });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'validation', code, param });
    expect((await api.get('/v1/routing')).body).toEqual(before);
  });

  it('an empty rule list routes nothing', async () => {
    const own = (await h.newTenant()).api;
    expect((await own.request('PUT', '/v1/routing', { body: { rules: [] } })).status).toBe(200);
    const order = (await own.post('/v1/payment-orders', { amount: 100, currency: 'EUR', reference: 'r', customer: { email: 'a@b.co' } })).body;
    const res = await own.post('/v1/payments', { payment_order: order.id, payment_method: cardMethod(CARDS.success) });
    expect(res.body.error.code).toBe('routing_no_match');
  });
});
