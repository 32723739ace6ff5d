// The world of the isolation suite (test/api/isolation.security.test.ts): four principals (two accounts, each in test and live mode, live on the lab
// connector) owning objects of every kind; index 0 of every kind a principal owns never changes. The routes are in isolation.route-table.ts.
import crypto from 'node:crypto';
import { expect } from 'vitest';
import { setPayoutSettings } from '../../src/domain/accounts/service.js';
import type { ServiceFixture } from './fixtures.js';
import { call, orderBody, type ApiResponse } from './helpers.js';
import { mandateBody } from './mandates.js';
import { CARDS, cardMethod, LIVE_CARD } from './payments.js';
import { bankAccount } from './payouts.js';
import { savedCard } from './customers.js';
import { disputes } from '../../src/storage/schema.js';
import { newId, parseId } from '../../src/kernel/ids.js';
import { makeReconciliationRun } from './isolation.routes.connectors.js';

export type Principal = 'aTest' | 'aLive' | 'bTest' | 'bLive';
export const PRINCIPALS: Principal[] = ['aTest', 'aLive', 'bTest', 'bLive'];
export const OTHER_ACCOUNT: Record<Principal, Principal> = { aTest: 'bTest', aLive: 'bLive', bTest: 'aTest', bLive: 'aLive' };
export const OTHER_MODE: Record<Principal, Principal> = { aTest: 'aLive', aLive: 'aTest', bTest: 'bLive', bLive: 'bTest' };
export const isLive = (p: Principal) => p.endsWith('Live');

export type Resource =
  | 'payment_order'
  | 'event'
  | 'webhook_endpoint'
  | 'payment'
  | 'pending_payment'
  | 'refund'
  | 'mandate'
  | 'pending_mandate'
  | 'beneficiary'
  | 'payout'
  | 'connector_account'
  | 'customer'
  | 'payment_method'
  | 'authorized_payment'
  | 'capture'
  | 'pending_capture'
  | 'dispute'
  | 'reconciliation_run';
/** Where each kind is read; the snapshot also reads the delivery lists of events and endpoints. */
export const PATHS: Record<Resource, (id: string) => string[]> = {
  payment_order: (id) => [`/v1/payment-orders/${id}`],
  event: (id) => [`/v1/events/${id}`, `/v1/events/${id}/deliveries`],
  webhook_endpoint: (id) => [`/v1/webhook-endpoints/${id}`, `/v1/webhook-endpoints/${id}/deliveries`],
  payment: (id) => [`/v1/payments/${id}`],
  pending_payment: (id) => [`/v1/payments/${id}`],
  refund: (id) => [`/v1/refunds/${id}`],
  mandate: (id) => [`/v1/mandates/${id}`],
  pending_mandate: (id) => [`/v1/mandates/${id}`],
  beneficiary: (id) => [`/v1/beneficiaries/${id}`],
  payout: (id) => [`/v1/payouts/${id}`],
  connector_account: (id) => [`/v1/connector-accounts/${id}`],
  customer: (id) => [`/v1/customers/${id}`],
  payment_method: (id) => [`/v1/payment-methods/${id}`],
  authorized_payment: (id) => [`/v1/payments/${id}`],
  capture: (id) => [`/v1/captures/${id}`],
  pending_capture: (id) => [`/v1/captures/${id}`],
  dispute: (id) => [`/v1/disputes/${id}`],
  reconciliation_run: (id) => [`/v1/reconciliation-runs/${id}`],
};

/** Distinct amounts per principal, so a balance that mixed tenants or modes would show. */
export const AMOUNTS: Record<Principal, number> = { aTest: 1100, aLive: 2200, bTest: 3300, bLive: 4400 };

export class World {
  readonly keys = {} as Record<Principal, string>;
  readonly owned = {} as Record<Principal, Record<Resource, string[]>>;
  readonly funded = {} as Record<Principal, number>;
  readonly accountIds = {} as Record<Principal, string>;

  constructor(
    private readonly h: ServiceFixture,
    private readonly receiverUrl: () => string,
  ) {}

  /** A request of `me` (or with `key`); every POST carries a fresh Idempotency-Key. */
  as(me: Principal, method: string, path: string, body?: unknown, key: string | undefined = this.keys[me]): Promise<ApiResponse> {
    return call(this.h.url, method, path, { key, body, idempotencyKey: method === 'POST' ? crypto.randomUUID() : undefined });
  }

  /** Every id a principal owns, whatever the kind. */
  allOwned = (p: Principal) => new Set(Object.values(this.owned[p]).flat());

  private async made(me: Principal, resource: Resource, res: ApiResponse): Promise<string> {
    expect(res.status, `${me} ${resource}: ${res.text}`).toBe(201);
    expect(res.body.livemode).toBe(isLive(me));
    this.owned[me][resource].push(res.body.id);
    return res.body.id;
  }

  endpointBody(me: Principal) {
    // Live mode needs a public https destination (never called: no worker runs here); test mode may use the local receiver.
    return { url: isLive(me) ? 'https://example.com/hooks' : `${this.receiverUrl()}/hooks/${me}`, enabled_events: ['*'], metadata: { owner: me } };
  }

  connectorAccountBody(me: Principal) {
    const name = `${me}-${crypto.randomUUID().slice(0, 8)}`;
    // The simulators serve test mode only; live mode takes a processor that routes no card payment here.
    return isLive(me)
      ? { connector: 'gocardless', name, credentials: { access_token: `live_${'k'.repeat(40)}` }, metadata: { owner: me } }
      : { connector: 'simulator_a', name, metadata: { owner: me } };
  }

  /** A new object of each kind, owned by `me`. */
  readonly make: Record<Resource, (me: Principal) => Promise<string>> = {
    payment_order: async (me) => this.made(me, 'payment_order', await this.as(me, 'POST', '/v1/payment-orders', orderBody({ amount: AMOUNTS[me], metadata: { owner: me } }))),
    event: async (me) => {
      const order = await this.make.payment_order(me);
      const res = await this.as(me, 'GET', '/v1/events?type=payment_order.created&limit=1');
      expect(res.body.data[0].data.object.id).toBe(order);
      this.owned[me].event.push(res.body.data[0].id);
      return res.body.data[0].id;
    },
    webhook_endpoint: async (me) => this.made(me, 'webhook_endpoint', await this.as(me, 'POST', '/v1/webhook-endpoints', this.endpointBody(me))),
    payment: async (me) => this.pay(me, 'payment', isLive(me) ? LIVE_CARD : CARDS.success, 'succeeded'),
    // Live mode has no pending card (the test helpers refuse live keys whatever the object): a settled one stands in.
    pending_payment: async (me) => (isLive(me) ? this.pay(me, 'pending_payment', LIVE_CARD, 'succeeded') : this.pay(me, 'pending_payment', CARDS.pending, 'pending')),
    refund: async (me) => this.made(me, 'refund', await this.as(me, 'POST', '/v1/refunds', { payment: await this.make.payment(me), amount: 100 })),
    authorized_payment: async (me) => {
      const order = await this.made(me, 'payment_order', await this.as(me, 'POST', '/v1/payment-orders', orderBody({ amount: AMOUNTS[me], capture_method: 'manual', metadata: { owner: me } })));
      const res = await this.as(me, 'POST', '/v1/payments', { payment_order: order, payment_method: cardMethod(isLive(me) ? LIVE_CARD : CARDS.success) });
      expect(res.body.status, res.text).toBe('requires_capture');
      return this.made(me, 'authorized_payment', res);
    },
    capture: async (me) => this.made(me, 'capture', await this.as(me, 'POST', `/v1/payments/${await this.make.authorized_payment(me)}/capture`, { amount: 100 })),
    // Test mode's pending-capture card keeps it pending; live mode has none (the helper refuses live keys whatever the object).
    pending_capture: async (me) => {
      const manual = orderBody({ amount: AMOUNTS[me], capture_method: 'manual', metadata: { owner: me } });
      const manualOrder = await this.made(me, 'payment_order', await this.as(me, 'POST', '/v1/payment-orders', manual));
      const card = isLive(me) ? LIVE_CARD : CARDS.pendingCapture;
      const paid = await this.as(me, 'POST', '/v1/payments', { payment_order: manualOrder, payment_method: cardMethod(card) });
      expect(paid.body.status, paid.text).toBe('requires_capture');
      const payment = await this.made(me, 'authorized_payment', paid);
      const res = await this.as(me, 'POST', `/v1/payments/${payment}/capture`, { amount: 100 });
      expect(res.body.status, res.text).toBe(isLive(me) ? 'succeeded' : 'pending');
      return this.made(me, 'pending_capture', res);
    },
    // Processors report disputes (live mode's lab connector sends none): the row is written as a report makes it.
    dispute: async (me) => {
      const [payment, { id, uuid }, at] = [parseId('pay', await this.make.payment(me))!, newId('dp'), new Date()];
      const owner = { accountId: parseId('acct', this.accountIds[me])!, id: uuid, livemode: isLive(me), createdAt: at, updatedAt: at, metadata: { owner: me } };
      await this.h.db.insert(disputes).values({ ...owner, paymentId: payment, status: 'needs_response', amount: 100, currency: 'EUR', reason: 'fraudulent', connector: 'lab', connectorReference: `lab_${uuid}`, stage: 1 });
      this.owned[me].dispute.push(id);
      return id;
    },
    reconciliation_run: async (me) => makeReconciliationRun(this, this.h.db, me),
    mandate: async (me) => this.made(me, 'mandate', await this.as(me, 'POST', '/v1/mandates', mandateBody('sepa_core', '0000', { metadata: { owner: me } }))),
    pending_mandate: async (me) => this.made(me, 'pending_mandate', await this.as(me, 'POST', '/v1/mandates', mandateBody('sepa_core', '0003', { metadata: { owner: me } }))),
    // The 0003 account keeps a payout in transit, were it ever sent (no worker runs here).
    beneficiary: async (me) =>
      this.made(me, 'beneficiary', await this.as(me, 'POST', '/v1/beneficiaries', { name: `Owner ${me}`, type: 'individual', bank_account: bankAccount('0003'), metadata: { owner: me } })),
    connector_account: async (me) => this.made(me, 'connector_account', await this.as(me, 'POST', '/v1/connector-accounts', this.connectorAccountBody(me))),
    customer: async (me) => this.made(me, 'customer', await this.as(me, 'POST', '/v1/customers', { email: `${me}@example.com`, metadata: { owner: me } })),
    // No API call saves a card yet: the internal attach stands in, for a customer made through the API.
    payment_method: async (me) => {
      const customer = await this.make.customer(me);
      const method = await savedCard(this.h.db, { accountId: this.accountIds[me], livemode: isLive(me) }, customer, { metadata: { owner: me } });
      this.owned[me].payment_method.push(method.id);
      return method.id;
    },
    payout: async (me) =>
      this.made(me, 'payout', await this.as(me, 'POST', '/v1/payouts', { beneficiary: this.owned[me].beneficiary[0], amount: 10, currency: 'EUR', reference: `iso-${me}` })),
  };

  private async pay(me: Principal, resource: Resource, card: string, status: string) {
    const order = await this.make.payment_order(me);
    const res = await this.as(me, 'POST', '/v1/payments', { payment_order: order, payment_method: cardMethod(card) });
    expect(res.body.status, res.text).toBe(status);
    return this.made(me, resource, res);
  }

  /** Two objects of every kind per principal; money to pay out (funding in test mode, a lab payment in live mode). */
  async build(accounts: { accountId: string; testKey: string; liveKey: string }[]) {
    const [a, b] = accounts as [(typeof accounts)[0], (typeof accounts)[0]];
    Object.assign(this.keys, { aTest: a.testKey, aLive: a.liveKey, bTest: b.testKey, bLive: b.liveKey });
    Object.assign(this.accountIds, { aTest: a.accountId, aLive: a.accountId, bTest: b.accountId, bLive: b.accountId });
    for (const t of [a, b]) await setPayoutSettings(this.h.db, t.accountId, { liveEnabled: true });
    for (const me of PRINCIPALS) {
      this.owned[me] = Object.fromEntries(Object.keys(PATHS).map((r) => [r, []])) as unknown as Record<Resource, string[]>;
      this.funded[me] = 0;
      if (isLive(me)) {
        const order = await this.as(me, 'POST', '/v1/payment-orders', orderBody({ amount: 100_000 }));
        const paid = await this.as(me, 'POST', '/v1/payments', { payment_order: order.body.id, payment_method: cardMethod(LIVE_CARD) });
        expect(paid.body.status, paid.text).toBe('succeeded');
        this.owned[me].payment_order.push(order.body.id);
        this.owned[me].payment.push(paid.body.id);
      } else {
        this.funded[me] = AMOUNTS[me] * 100;
        expect((await this.as(me, 'POST', '/v1/test-helpers/balance/fund', { amount: this.funded[me], currency: 'EUR' })).status).toBe(201);
      }
      for (let i = 0; i < 2; i++) for (const resource of Object.keys(PATHS) as Resource[]) await this.make[resource](me);
    }
  }

  /** What every principal sees of everyone's untouchable objects (index 0 of every kind). */
  async snapshot() {
    const seen: Record<string, unknown> = {};
    for (const p of PRINCIPALS) {
      for (const [resource, paths] of Object.entries(PATHS) as [Resource, (id: string) => string[]][]) {
        for (const path of paths(this.owned[p][resource][0]!)) {
          const res = await this.as(p, 'GET', path);
          expect(res.status, `${p} ${path}: ${res.text}`).toBe(200);
          seen[`${p} ${path}`] = res.body;
        }
      }
    }
    return seen;
  }

  /** Every item of a list, following its cursor. */
  async listAll(me: Principal, url: string): Promise<any[]> {
    const items: any[] = [];
    // A list read backwards (ending_before) goes on backwards: the two cursors cannot be combined.
    const backwards = /[?&]ending_before=/.test(url);
    for (let cursor = '', next = url; ; ) {
      const page = await this.as(me, 'GET', `${next}${next.includes('?') ? '&' : '?'}limit=100${cursor}`);
      expect(page.status, page.text).toBe(200);
      items.push(...page.body.data);
      if (!page.body.has_more) return items;
      if (backwards) next = url.replace(/ending_before=[^&]*/, `ending_before=${page.body.data[0].id}`);
      else cursor = `&starting_after=${page.body.data.at(-1).id}`;
    }
  }
}
