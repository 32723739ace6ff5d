// The routes of beneficiaries and payouts, whose tenancy and authentication are proven route by
// route in payouts.security.test.ts; isolation.security.test.ts counts them as covered.
export const PAYOUTS_AUTHENTICATED_ROUTES = [
  'POST /v1/beneficiaries',
  'GET /v1/beneficiaries',
  'GET /v1/beneficiaries/:id',
  'PATCH /v1/beneficiaries/:id',
  'DELETE /v1/beneficiaries/:id',
  'POST /v1/payouts',
  'GET /v1/payouts',
  'GET /v1/payouts/:id',
  'POST /v1/payouts/:id/cancel',
  'POST /v1/test-helpers/payouts/:id/resolve',
] as const;
