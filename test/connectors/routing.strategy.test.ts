// Routing strategies and the explanation (API.md §7, docs/routing.md): the ranking alone (pure,
// deterministic), then through the service — success_rate choosing by the window's outcomes, cold
// segments in priority order, a recovered connector winning its traffic back once its failures
// leave the window, the reasons connectors were skipped, GET /v1/routing/stats and its tenancy,
// and PUT /v1/routing refusing strategies that do not fit.
import { describe, expect, it } from 'vitest';
import { rankCandidates, markDeclined, explanationView, successScores, type Outcomes, type RankInput } from '../../src/domain/routing/strategy.js';
import { firstIdAt } from '../../src/domain/routing/stats.js';
import { CARDS, orderAndPay } from '../support/payments.js';
import { createConnectorAccount } from '../support/connectors.js';
import { useService } from '../support/fixtures.js';
import type { Api } from '../support/helpers.js';

const stats = (entries: Record<string, [number, number]>) => new Map(Object.entries(entries).map(([k, [attempts, authorized]]): [string, Outcomes] => [k, { attempts, authorized }]));
const rank = (input: Partial<RankInput> & Pick<RankInput, 'rule'>) =>
  rankCandidates({ unable: () => undefined, breakerOpen: () => false, random: () => 0, ...input });
const rule = (strategy: RankInput['rule']['strategy'], ...names: string[]) => ({ ref: 'r', strategy, connectors: names.map((name) => ({ name })) });

describe('ranking candidates (pure)', () => {
  it('success_rate puts the connector with the better rate in the segment first, with its score', () => {
    const ranked = rank({ rule: rule('success_rate', 'a', 'b'), stats: stats({ a: [40, 20], b: [40, 38] }) });
    expect(ranked.route).toEqual(['b', 'a']);
    expect(ranked.explanation).toMatchObject({ rule: 'r', strategy: 'success_rate', chosen: 'b' });
    const [b, a] = ranked.explanation.candidates;
    expect(b!.score!).toBeGreaterThan(a!.score!);
  });

  it('a cold segment (fewer than 20 outcomes) keeps the priority order, without scores', () => {
    const ranked = rank({ rule: rule('success_rate', 'a', 'b'), stats: stats({ a: [10, 0], b: [9, 9] }) });
    expect(ranked.route).toEqual(['a', 'b']);
    expect(ranked.explanation.candidates).toEqual([{ connector: 'a' }, { connector: 'b' }]);
    expect(successScores(['a', 'b'], undefined)).toBeUndefined();
  });

  it('explores: a connector whose failures left the window is tried again, and keeps winning while it approves', () => {
    // During the outage: a's failures in the window, b approving. a is not tried.
    expect(rank({ rule: rule('success_rate', 'a', 'b'), stats: stats({ a: [15, 0], b: [60, 57] }) }).route).toEqual(['b', 'a']);
    // The failures have aged out: a has no outcome left, so its bonus puts it first.
    expect(rank({ rule: rule('success_rate', 'a', 'b'), stats: stats({ b: [60, 57] }) }).route).toEqual(['a', 'b']);
    // It approves again: it stays first while its rate holds...
    expect(rank({ rule: rule('success_rate', 'a', 'b'), stats: stats({ a: [8, 8], b: [60, 57] }) }).route).toEqual(['a', 'b']);
    // ...and loses the traffic again if it declines.
    expect(rank({ rule: rule('success_rate', 'a', 'b'), stats: stats({ a: [8, 2], b: [60, 57] }) }).route).toEqual(['b', 'a']);
    // The same figures, the same order: no randomness.
    const once = rank({ rule: rule('success_rate', 'a', 'b'), stats: stats({ a: [30, 25], b: [30, 26] }), random: () => 0.99 });
    expect(rank({ rule: rule('success_rate', 'a', 'b'), stats: stats({ a: [30, 25], b: [30, 26] }), random: () => 0.01 })).toEqual(once);
  });

  it('lists why connectors were skipped: left out of the route, or (breaker open) put last', () => {
    const unable = (key: string) => (key === 'x' ? 'currency_not_supported' : key === 'y' ? 'amount_limit' : key === 'z' ? 'capability_missing' : undefined);
    const ranked = rank({ rule: rule('success_rate', 'open', 'x', 'y', 'z', 'b'), unable, breakerOpen: (k) => k === 'open', stats: stats({ open: [30, 30], b: [30, 20] }) });
    expect(ranked.route).toEqual(['b', 'open']);
    expect(ranked.explanation.candidates.map(({ connector, skipped }) => [connector, skipped])).toEqual([
      ['b', undefined],
      ['open', 'breaker_open'],
      ['x', 'currency_not_supported'],
      ['y', 'amount_limit'],
      ['z', 'capability_missing'],
    ]);
    // priority keeps an open connector in its place: the send skips it while the circuit stays open.
    expect(rank({ rule: rule('priority', 'open', 'b'), breakerOpen: (k) => k === 'open' }).explanation).toEqual({
      rule: 'r',
      strategy: 'priority',
      candidates: [{ connector: 'open', skipped: 'breaker_open' }, { connector: 'b' }],
      chosen: 'b',
    });
  });

  it('the cascade hook: connectors that already declined are left out, or marked afterwards', () => {
    const ranked = rank({ rule: rule('priority', 'a', 'b'), declined: new Set(['a']) });
    expect(ranked.route).toEqual(['b']);
    expect(ranked.explanation.candidates).toEqual([{ connector: 'b' }, { connector: 'a', skipped: 'already_declined' }]);
    const after = markDeclined(rank({ rule: rule('priority', 'a', 'b') }).explanation, 'a');
    // The stored explanation keeps the first planned; the answer names the final attempt's connector.
    expect(after).toMatchObject({ candidates: [{ connector: 'a', skipped: 'already_declined' }, { connector: 'b' }], chosen: 'a' });
    expect(explanationView(after, [{ connector: 'a', outcome: 'declined' }])!.chosen).toBe('a');
    expect(explanationView(after, [{ connector: 'a', outcome: 'declined' }, { connector: 'b', outcome: 'succeeded' }])!.chosen).toBe('b');
    expect(explanationView(after, [])!.chosen).toBe('a');
  });

  it('volume_split draws by weight; rules without a strategy keep theirs (weights: volume_split, else priority)', () => {
    const weighted = { ref: null, connectors: [{ name: 'a', weight: 1 }, { name: 'b', weight: 3 }] };
    expect(rank({ rule: weighted, random: () => 0.5 }).explanation).toMatchObject({ strategy: 'volume_split', chosen: 'b' });
    expect(rank({ rule: { ref: null, connectors: [{ name: 'a' }, { name: 'b' }] } }).explanation).toMatchObject({ strategy: 'priority', chosen: 'a' });
  });

  it("bounds the window's index scan by the first id of its start", () => {
    expect(firstIdAt(0)).toBe('00000000-0000-0000-0000-000000000000');
    expect(firstIdAt(0x0123456789ab)).toBe('01234567-89ab-0000-0000-000000000000');
  });
});

describe('success_rate routing, the explanation and GET /v1/routing/stats', () => {
  const h = useService();
  const put = (api: Api, rules: unknown[]) => api.request('PUT', '/v1/routing', { body: { rules } });
  const only = (name: string) => [{ name, connectors: [{ name }] }];
  const bySuccess = [{ name: 'by-success', strategy: 'success_rate', connectors: [{ name: 'simulator_a' }, { name: 'simulator_b' }] }];
  /** GET /v1/routing/stats reads the window afresh, so the next payment routes by what it shows. */
  const statsOf = async (api: Api) => {
    const res = await api.get('/v1/routing/stats');
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const payMany = async (api: Api, n: number, card: string) => {
    for (let i = 0; i < n; i++) await orderAndPay(api, card);
  };

  it('every payment answers its routing, on create and on GET', async () => {
    const { api } = await h.newTenant();
    const { payment } = await orderAndPay(api, CARDS.processorError);
    const routing = { rule: 'default', strategy: 'priority', candidates: [{ connector: 'simulator_a' }, { connector: 'simulator_b' }], chosen: 'simulator_b' };
    // simulator_a failed before acting and simulator_b took it: chosen is the final attempt's connector.
    expect(payment.routing).toEqual(routing);
    expect((await api.get(`/v1/payments/${payment.id}`)).body.routing).toEqual(routing);
  });

  it('success_rate sends the payment to the connector approving more in its segment; the stats show the figures', async () => {
    const { api, live } = await h.newTenant();
    const other = await h.newTenant();
    expect((await put(api, only('simulator_a'))).status).toBe(200);
    await payMany(api, 12, CARDS.declined);
    expect((await put(api, only('simulator_b'))).status).toBe(200);
    await payMany(api, 10, CARDS.success);
    expect((await put(api, bySuccess)).status).toBe(200);

    const stats = await statsOf(api);
    expect(stats).toMatchObject({ object: 'routing_stats', livemode: false, window: { max_payments: 5000 } });
    expect(stats.data).toEqual([
      { connector: 'simulator_a', card_brand: 'visa', currency: 'EUR', issuing_country: null, attempts: 12, authorized: 0, authorization_rate: 0 },
      { connector: 'simulator_b', card_brand: 'visa', currency: 'EUR', issuing_country: null, attempts: 10, authorized: 10, authorization_rate: 1 },
    ]);

    const { payment } = await orderAndPay(api, CARDS.success);
    expect(payment.connector).toBe('simulator_b');
    expect(payment.routing).toMatchObject({ rule: 'by-success', strategy: 'success_rate', chosen: 'simulator_b' });
    expect(payment.routing.candidates.map((c: any) => c.connector)).toEqual(['simulator_b', 'simulator_a']);
    expect(payment.routing.candidates[0].score).toBeGreaterThan(payment.routing.candidates[1].score);

    // Another segment (the same cards in dollars) has no outcomes: cold, so the rule's order.
    const dollars = (await orderAndPay(api, CARDS.success, { currency: 'USD' })).payment;
    expect(dollars.routing.candidates).toEqual([{ connector: 'simulator_a' }, { connector: 'simulator_b' }]);

    // Tenancy: the figures are the account's and the mode's own.
    expect((await statsOf(other.api)).data).toEqual([]);
    expect(await statsOf(live)).toMatchObject({ livemode: true, data: [] });
  });

  it('a cold segment follows the priority order', async () => {
    const { api } = await h.newTenant();
    expect((await put(api, bySuccess)).status).toBe(200);
    const { payment } = await orderAndPay(api, CARDS.success);
    expect(payment.connector).toBe('simulator_a');
    expect(payment.routing).toEqual({ rule: 'by-success', strategy: 'success_rate', candidates: [{ connector: 'simulator_a' }, { connector: 'simulator_b' }], chosen: 'simulator_a' });
  });

  it('a recovered connector wins its traffic back once its failures leave the window', async () => {
    const { api } = await h.newTenant();
    const { clock } = h.service;
    try {
      expect((await put(api, only('simulator_a'))).status).toBe(200);
      await payMany(api, 10, CARDS.declined);
      clock.advance(40 * 60_000);
      expect((await put(api, only('simulator_b'))).status).toBe(200);
      await payMany(api, 20, CARDS.success);
      expect((await put(api, bySuccess)).status).toBe(200);
      await statsOf(api);
      expect((await orderAndPay(api, CARDS.success)).payment.connector).toBe('simulator_b');

      // 65 minutes on, simulator_a's declines are out of the window: it is tried, approves, and keeps the traffic.
      clock.advance(25 * 60_000);
      const routed: string[] = [];
      for (let i = 0; i < 4; i++) {
        await statsOf(api);
        const { payment } = await orderAndPay(api, CARDS.success);
        // Chosen by score in a warm segment, not by the cold segment's list order.
        expect(payment.routing.candidates.map((c: any) => typeof c.score)).toEqual(['number', 'number']);
        routed.push(payment.connector);
      }
      expect(routed).toEqual(['simulator_a', 'simulator_a', 'simulator_a', 'simulator_a']);
    } finally {
      clock.reset();
    }
  });

  it('the explanation names an open breaker and a currency the processor does not take', async () => {
    const { api } = await h.newTenant();
    const { breaker } = h.service.payments.connectors;
    for (let i = 0; i < 20; i++) breaker.onFailure('simulator_a');
    try {
      const { payment } = await orderAndPay(api, CARDS.success);
      expect(payment.connector).toBe('simulator_b');
      expect(payment.routing).toEqual({ rule: 'default', strategy: 'priority', candidates: [{ connector: 'simulator_a', skipped: 'breaker_open' }, { connector: 'simulator_b' }], chosen: 'simulator_b' });
    } finally {
      breaker.onSuccess('simulator_a');
    }

    const adyen = await createConnectorAccount(api, 'adyen', 'adyen-test', { api_key: 'AQEtestkey0001', merchant_account: 'AcmeECOM' });
    expect((await put(api, [{ name: 'cards', connectors: [{ name: 'adyen-test' }, { name: 'simulator_b' }] }])).status).toBe(200);
    // Adyen's currency table has no Malagasy ariary.
    const { payment } = await orderAndPay(api, CARDS.success, { currency: 'MGA' });
    expect(payment.connector).toBe('simulator_b');
    expect(payment.routing).toEqual({ rule: 'cards', strategy: 'priority', candidates: [{ connector: 'simulator_b' }, { connector: adyen.id, skipped: 'currency_not_supported' }], chosen: 'simulator_b' });
  });

  it('PUT /v1/routing refuses a strategy it does not know, or one that does not fit the weights, naming the field', async () => {
    const { api } = await h.newTenant();
    const cases: [unknown, string][] = [
      [{ strategy: 'fastest', connectors: [{ name: 'simulator_a' }] }, 'rules.0.strategy'],
      [{ strategy: 'volume_split', connectors: [{ name: 'simulator_a' }, { name: 'simulator_b' }] }, 'rules.0.strategy'],
      [{ strategy: 'success_rate', connectors: [{ name: 'simulator_a' }, { name: 'simulator_b', weight: 3 }] }, 'rules.0.connectors.1.weight'],
      [{ strategy: 'priority', connectors: [{ name: 'simulator_a', weight: 1 }] }, 'rules.0.connectors.0.weight'],
    ];
    for (const [bad, param] of cases) {
      const res = await put(api, [bad]);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.param).toBe(param);
    }
    const ok = await put(api, [{ strategy: 'volume_split', connectors: [{ name: 'simulator_a', weight: 1 }, { name: 'simulator_b', weight: 1 }] }, ...bySuccess]);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.rules.map((r: any) => r.strategy)).toEqual(['volume_split', 'success_rate']);
  });
});
