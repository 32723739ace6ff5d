// The principals of the isolation suite (test/api/isolation.security.test.ts) and the kinds of
// object they own, with where each is read (isolation.routes.ts builds the world on them).
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
  | 'dispute';
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
  dispute: (id) => [`/v1/disputes/${id}`],
};

/** Distinct amounts per principal, so a balance that mixed tenants or modes would show. */
export const AMOUNTS: Record<Principal, number> = { aTest: 1100, aLive: 2200, bTest: 3300, bLive: 4400 };
