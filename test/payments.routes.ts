// The routes of payments, refunds, routing, balance and their test helpers, whose tenancy and
// authentication are proven route by route in payments.security.test.ts (singletons such as the
// balance and the routing need checks of their own). isolation.security.test.ts counts them as covered.
export const PAYMENTS_AUTHENTICATED_ROUTES = [
  'POST /v1/payments',
  'GET /v1/payments',
  'GET /v1/payments/:id',
  'POST /v1/refunds',
  'GET /v1/refunds',
  'GET /v1/refunds/:id',
  'GET /v1/routing',
  'PUT /v1/routing',
  'GET /v1/balance',
  'GET /v1/balance-transactions',
  'POST /v1/test-helpers/payments/:id/resolve',
  'POST /v1/test-helpers/balance/fund',
] as const;

/** Called by processors, authenticated by the connector's signature instead of an API key. */
export const PAYMENTS_PUBLIC_ROUTES = ['POST /v1/connectors/:name/webhooks', 'POST /v1/connector-accounts/:id/webhooks'] as const;

/**
 * Authenticated but of no account: the connector catalogue, the same for every key
 * (connector-accounts.test.ts checks its authentication).
 */
export const SHARED_AUTHENTICATED_ROUTES = ['GET /v1/connectors'] as const;
