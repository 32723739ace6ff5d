// The table of the isolation suite (test/api/isolation.security.test.ts): one row per authenticated route saying how to call it, over the world
// of test/support/isolation.routes.ts (its principals and the objects they own).
import { orderBody } from './helpers.js';
import { mandateBody, mandateMethod } from './mandates.js';
import { CARDS, cardMethod, LIVE_CARD } from './payments.js';
import { bankAccount } from './payouts.js';
import { isLive, type Principal, type Resource, type World } from './isolation.routes.js';
import { CONNECTOR_ROUTES } from './isolation.routes.connectors.js';

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
  /** The status the caller's own request gets (a live key's: okLive, when live mode cannot do it). */
  ok: number;
  okLive?: number;
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
  { route: 'POST /v1/disputes/:id/evidence', kind: 'write', resource: 'dispute', ok: 200, body: () => ({ evidence: { uncategorized_text: 'receipt' } }) },
  // The lab connector its disputes come from cannot answer one: the caller's own is refused by the processor (a typed 422), past tenancy.
  { route: 'POST /v1/disputes/:id/accept', kind: 'write', resource: 'dispute', ok: 422 },
  // After the reads: the capture it makes is nobody's listed object.
  { route: 'POST /v1/payments/:id/capture', kind: 'write', resource: 'authorized_payment', ok: 201, body: () => ({ amount: 100 }) },
  { route: 'POST /v1/payments/:id/cancel', kind: 'write', resource: 'authorized_payment', ok: 200 },
  { route: 'GET /v1/routing', kind: 'account', ok: 200 },
  { route: 'PUT /v1/routing', kind: 'account', ok: 200, body: (_w, me) => ({ rules: [{ connectors: [{ name: isLive(me) ? 'lab_live' : 'simulator_b' }] }] }) },
  { route: 'GET /v1/routing/stats', kind: 'account', ok: 200 },
  { route: 'GET /v1/balance', kind: 'account', ok: 200 },
  { route: 'GET /v1/account/integration', kind: 'account', ok: 200 },
  { route: 'GET /v1/balance-transactions', kind: 'list', ok: 200, filter: (w, them) => `source=${first(w, them, 'payment')}` },
  { route: 'POST /v1/test-helpers/payments/:id/resolve', kind: 'write', resource: 'pending_payment', ok: 200, body: () => ({ outcome: 'succeeded' }), testOnly: true },
  { route: 'POST /v1/test-helpers/captures/:id/resolve', kind: 'write', resource: 'pending_capture', ok: 200, body: () => ({ outcome: 'succeeded' }), testOnly: true },
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

  ...CONNECTOR_ROUTES,
];
