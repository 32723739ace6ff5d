// The world of the isolation suite (test/api/isolation.security.test.ts): four principals (two accounts, each in test and live mode, live on the lab
// connector) owning objects of every kind, one row per authenticated route saying how to call it; index 0 of every kind a principal owns never changes.
import crypto from 'node:crypto';
import { expect } from 'vitest';
import { setPayoutSettings } from '../../src/domain/accounts/service.js';
import type { ServiceFixture } from './fixtures.js';
import { call, orderBody, type ApiResponse } from './helpers.js';
import { mandateBody, mandateMethod } from './mandates.js';
import { CARDS, cardMethod, LIVE_CARD } from './payments.js';
import { bankAccount } from './payouts.js';
import { savedCard } from './customers.js';
import { disputes } from '../../src/storage/schema.js';
import { newId, parseId } from '../../src/kernel/ids.js';

import { AMOUNTS, isLive, OTHER_ACCOUNT, OTHER_MODE, PATHS, PRINCIPALS, type Principal, type Resource } from './isolation.principals.js';

export * from './isolation.principals.js';

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
    // Processors report disputes (live mode's lab connector sends none): the row is written as a report makes it.
    dispute: async (me) => {
      const [payment, { id, uuid }, at] = [parseId('pay', await this.make.payment(me))!, newId('dp'), new Date()];
      const owner = { accountId: parseId('acct', this.accountIds[me])!, id: uuid, livemode: isLive(me), createdAt: at, updatedAt: at, metadata: { owner: me } };
      await this.h.db.insert(disputes).values({ ...owner, paymentId: payment, status: 'needs_response', amount: 100, currency: 'EUR', reason: 'fraudulent', connector: 'lab', connectorReference: `lab_${uuid}`, stage: 1 });
      this.owned[me].dispute.push(id);
      return id;
    },
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
    for (let cursor = ''; ; ) {
      const page = await this.as(me, 'GET', `${url}${url.includes('?') ? '&' : '?'}limit=100${cursor}`);
      expect(page.status, page.text).toBe(200);
      items.push(...page.body.data);
      if (!page.body.has_more) return items;
      cursor = `&starting_after=${page.body.data.at(-1).id}`;
    }
  }
}

export interface Route {
  /** As the app registers it, with `:id` for the object's id. */
  route: string;
  /**
   * create: makes a new `resource`; list: lists `resource`; read: reads the object `:id` (or a
   * list under it); write: changes or acts on the object `:id` (a fresh one of the caller's own);
   * account: the caller's own account-wide object (balance, routing, funding), or reference data
   * the same for every key (the connector catalogue, event types).
   */
  kind: 'create' | 'list' | 'read' | 'write' | 'account';
  resource?: Resource;
  /** The status the caller's own request gets. */
  ok: number;
  /** Appended to the path. */
  query?: string;
  /** A valid body of `me`, so that only authentication or tenancy can fail. */
  body?: (w: World, me: Principal) => unknown;
  /** Body fields naming another object: another account's or mode's is 404 resource_missing naming the field. */
  refs?: { param: string; resource: Resource; body: (w: World, me: Principal, id: string) => unknown }[];
  /** A list filter naming another principal's object: it still lists only the caller's own. */
  filter?: (w: World, them: Principal) => string;
  /** Test helpers: a live key is refused with 403 permission_denied, whatever the id. */
  testOnly?: boolean;
}

const newOrderId = async (w: World, me: Principal) => w.make.payment_order(me);
const ownBeneficiary = (w: World, me: Principal) => w.owned[me].beneficiary[0];
const first = (w: World, them: Principal, resource: Resource) => w.owned[them][resource][0];

export const ROUTES: Route[] = [
  {
    route: 'POST /v1/payment-orders',
    kind: 'create',
    resource: 'payment_order',
    ok: 201,
    body: () => orderBody(),
    refs: [{ param: 'customer.id', resource: 'customer', body: (_w, _me, id) => orderBody({ customer: { id } }) }],
  },
  { route: 'GET /v1/payment-orders', kind: 'list', resource: 'payment_order', ok: 200, filter: () => 'status=open' },
  { route: 'GET /v1/payment-orders/:id', kind: 'read', resource: 'payment_order', ok: 200 },
  { route: 'POST /v1/payment-orders/:id/cancel', kind: 'write', resource: 'payment_order', ok: 200 },
  { route: 'GET /v1/events', kind: 'list', resource: 'event', ok: 200, filter: () => 'type=payment_order.created' },
  { route: 'GET /v1/event-types', kind: 'account', ok: 200 },
  { route: 'GET /v1/events/:id', kind: 'read', resource: 'event', ok: 200 },
  { route: 'GET /v1/events/:id/deliveries', kind: 'read', resource: 'event', ok: 200 },
  {
    route: 'POST /v1/events/:id/redeliver',
    kind: 'write',
    resource: 'event',
    ok: 202,
    refs: [{ param: 'webhook_endpoint', resource: 'webhook_endpoint', body: (_w, _me, id) => ({ webhook_endpoint: id }) }],
  },
  { route: 'POST /v1/webhook-endpoints', kind: 'create', resource: 'webhook_endpoint', ok: 201, body: (w, me) => w.endpointBody(me) },
  { route: 'GET /v1/webhook-endpoints', kind: 'list', resource: 'webhook_endpoint', ok: 200 },
  { route: 'GET /v1/webhook-endpoints/:id', kind: 'read', resource: 'webhook_endpoint', ok: 200 },
  { route: 'GET /v1/webhook-endpoints/:id/deliveries', kind: 'read', resource: 'webhook_endpoint', ok: 200 },
  { route: 'PATCH /v1/webhook-endpoints/:id', kind: 'write', resource: 'webhook_endpoint', ok: 200, body: () => ({ description: 'changed' }) },
  { route: 'DELETE /v1/webhook-endpoints/:id', kind: 'write', resource: 'webhook_endpoint', ok: 200 },
  { route: 'POST /v1/webhook-endpoints/:id/rotate-secret', kind: 'write', resource: 'webhook_endpoint', ok: 200 },
  { route: 'POST /v1/test-helpers/webhook-endpoints/:id/send', kind: 'write', resource: 'webhook_endpoint', ok: 200, body: () => ({ scenario: 'deliver' }), testOnly: true },
  {
    route: 'POST /v1/payments',
    kind: 'create',
    resource: 'payment',
    ok: 201,
    body: async (w, me) => ({ payment_order: await newOrderId(w, me), payment_method: cardMethod(isLive(me) ? LIVE_CARD : CARDS.success) }),
    refs: [
      { param: 'payment_order', resource: 'payment_order', body: (_w, me, id) => ({ payment_order: id, payment_method: cardMethod(isLive(me) ? LIVE_CARD : CARDS.success) }) },
      { param: 'payment_method.mandate', resource: 'mandate', body: async (w, me, id) => ({ payment_order: await newOrderId(w, me), payment_method: mandateMethod(id) }) },
    ],
  },
  { route: 'GET /v1/payments', kind: 'list', resource: 'payment', ok: 200, filter: (w, them) => `payment_order=${first(w, them, 'payment_order')}` },
  { route: 'GET /v1/payments/:id', kind: 'read', resource: 'payment', ok: 200, query: '?refresh=true' },
  {
    route: 'POST /v1/refunds',
    kind: 'create',
    resource: 'refund',
    ok: 201,
    body: async (w, me) => ({ payment: await w.make.payment(me), amount: 1 }),
    refs: [{ param: 'payment', resource: 'payment', body: (_w, _me, id) => ({ payment: id, amount: 1 }) }],
  },
  { route: 'GET /v1/refunds', kind: 'list', resource: 'refund', ok: 200, filter: (w, them) => `payment=${first(w, them, 'payment')}` },
  { route: 'GET /v1/refunds/:id', kind: 'read', resource: 'refund', ok: 200 },
  { route: 'GET /v1/captures', kind: 'list', resource: 'capture', ok: 200, filter: (w, them) => `payment=${first(w, them, 'authorized_payment')}` },
  { route: 'GET /v1/captures/:id', kind: 'read', resource: 'capture', ok: 200 },
  { route: 'GET /v1/disputes', kind: 'list', resource: 'dispute', ok: 200, filter: (w, them) => `payment=${first(w, them, 'payment')}` },
  { route: 'GET /v1/disputes/:id', kind: 'read', resource: 'dispute', ok: 200 },
  // After the reads: the capture it makes is nobody's listed object.
  { route: 'POST /v1/payments/:id/capture', kind: 'write', resource: 'authorized_payment', ok: 201, body: () => ({ amount: 100 }) },
  { route: 'POST /v1/payments/:id/cancel', kind: 'write', resource: 'authorized_payment', ok: 200 },
  { route: 'GET /v1/routing', kind: 'account', ok: 200 },
  { route: 'PUT /v1/routing', kind: 'account', ok: 200, body: (_w, me) => ({ rules: [{ connectors: [{ name: isLive(me) ? 'lab_live' : 'simulator_b' }] }] }) },
  { route: 'GET /v1/balance', kind: 'account', ok: 200 },
  { route: 'GET /v1/account/integration', kind: 'account', ok: 200 },
  { route: 'GET /v1/balance-transactions', kind: 'list', ok: 200, filter: (w, them) => `source=${first(w, them, 'payment')}` },
  { route: 'POST /v1/test-helpers/payments/:id/resolve', kind: 'write', resource: 'pending_payment', ok: 200, body: () => ({ outcome: 'succeeded' }), testOnly: true },
  { route: 'POST /v1/test-helpers/balance/fund', kind: 'account', ok: 201, body: () => ({ amount: 1, currency: 'JPY' }), testOnly: true },
  { route: 'POST /v1/test-helpers/retry-limits/reset', kind: 'account', ok: 200, testOnly: true },
  { route: 'POST /v1/mandates', kind: 'create', resource: 'mandate', ok: 201, body: () => mandateBody() },
  { route: 'GET /v1/mandates', kind: 'list', resource: 'mandate', ok: 200, filter: () => 'customer_email=payer%40example.com' },
  { route: 'GET /v1/mandates/:id', kind: 'read', resource: 'mandate', ok: 200 },
  { route: 'POST /v1/mandates/:id/revoke', kind: 'write', resource: 'mandate', ok: 200 },
  { route: 'POST /v1/test-helpers/mandates/:id/resolve', kind: 'write', resource: 'pending_mandate', ok: 200, body: () => ({ outcome: 'active' }), testOnly: true },
  { route: 'POST /v1/beneficiaries', kind: 'create', resource: 'beneficiary', ok: 201, body: () => ({ name: 'New', type: 'business', bank_account: bankAccount('0000', 'gb') }) },
  { route: 'GET /v1/beneficiaries', kind: 'list', resource: 'beneficiary', ok: 200, filter: () => 'status=active' },
  { route: 'GET /v1/beneficiaries/:id', kind: 'read', resource: 'beneficiary', ok: 200 },
  { route: 'PATCH /v1/beneficiaries/:id', kind: 'write', resource: 'beneficiary', ok: 200, body: () => ({ name: 'Changed' }) },
  { route: 'DELETE /v1/beneficiaries/:id', kind: 'write', resource: 'beneficiary', ok: 200 },
  {
    route: 'POST /v1/payouts',
    kind: 'create',
    resource: 'payout',
    ok: 201,
    body: (w, me) => ({ beneficiary: ownBeneficiary(w, me), amount: 5, currency: 'EUR', reference: 'iso-create' }),
    refs: [{ param: 'beneficiary', resource: 'beneficiary', body: (_w, _me, id) => ({ beneficiary: id, amount: 5, currency: 'EUR', reference: 'iso-foreign' }) }],
  },
  { route: 'GET /v1/payouts', kind: 'list', resource: 'payout', ok: 200, filter: (w, them) => `beneficiary=${first(w, them, 'beneficiary')}` },
  { route: 'GET /v1/payouts/:id', kind: 'read', resource: 'payout', ok: 200 },
  { route: 'POST /v1/payouts/:id/cancel', kind: 'write', resource: 'payout', ok: 200 },
  { route: 'POST /v1/test-helpers/payouts/:id/resolve', kind: 'write', resource: 'payout', ok: 200, body: () => ({ outcome: 'paid' }), testOnly: true },

  { route: 'POST /v1/customers', kind: 'create', resource: 'customer', ok: 201, body: () => ({ email: 'new@example.com', name: 'New' }) },
  { route: 'GET /v1/customers', kind: 'list', resource: 'customer', ok: 200, filter: (w, them) => `email=${them}%40example.com` },
  { route: 'GET /v1/customers/:id', kind: 'read', resource: 'customer', ok: 200 },
  { route: 'PATCH /v1/customers/:id', kind: 'write', resource: 'customer', ok: 200, body: () => ({ name: 'Changed' }) },
  { route: 'DELETE /v1/customers/:id', kind: 'write', resource: 'customer', ok: 200 },
  {
    route: 'POST /v1/payment-methods',
    kind: 'create',
    resource: 'payment_method',
    ok: 201,
    body: async (w, me) => ({ customer: await w.make.customer(me), card: cardMethod(isLive(me) ? LIVE_CARD : CARDS.success).card, usage: 'off_session' }),
    refs: [{ param: 'customer', resource: 'customer', body: (_w, me, id) => ({ customer: id, card: cardMethod(isLive(me) ? LIVE_CARD : CARDS.success).card, usage: 'off_session' }) }],
  },
  { route: 'GET /v1/payment-methods', kind: 'list', resource: 'payment_method', ok: 200, filter: (w, them) => `customer=${first(w, them, 'customer')}` },
  { route: 'GET /v1/payment-methods/:id', kind: 'read', resource: 'payment_method', ok: 200 },
  { route: 'PATCH /v1/payment-methods/:id', kind: 'write', resource: 'payment_method', ok: 200, body: () => ({ metadata: { changed: 'yes' } }) },
  { route: 'POST /v1/payment-methods/:id/detach', kind: 'write', resource: 'payment_method', ok: 200 },

  { route: 'GET /v1/connectors', kind: 'account', ok: 200 },
  { route: 'POST /v1/connector-accounts', kind: 'create', resource: 'connector_account', ok: 201, body: (w, me) => w.connectorAccountBody(me) },
  { route: 'GET /v1/connector-accounts', kind: 'list', resource: 'connector_account', ok: 200, filter: () => 'status=enabled' },
  { route: 'GET /v1/connector-accounts/:id', kind: 'read', resource: 'connector_account', ok: 200 },
  { route: 'PATCH /v1/connector-accounts/:id', kind: 'write', resource: 'connector_account', ok: 200, body: () => ({ metadata: { changed: 'yes' } }) },
  { route: 'DELETE /v1/connector-accounts/:id', kind: 'write', resource: 'connector_account', ok: 200 },
];
