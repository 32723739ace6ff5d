// The routes of mandates and their test helper, whose tenancy and authentication are proven route
// by route in mandates.security.test.ts. isolation.security.test.ts counts them as covered.
export const MANDATES_AUTHENTICATED_ROUTES = [
  'POST /v1/mandates',
  'GET /v1/mandates',
  'GET /v1/mandates/:id',
  'POST /v1/mandates/:id/revoke',
  'POST /v1/test-helpers/mandates/:id/resolve',
] as const;
