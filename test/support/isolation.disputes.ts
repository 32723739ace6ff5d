// The dispute routes of the cross-tenant test (isolation.routes.ts holds the rest; it is at its size limit).
import type { Route } from './isolation.routes.js';

export const DISPUTE_ROUTES: Route[] = [
  { route: 'GET /v1/disputes', kind: 'list', resource: 'dispute', ok: 200, filter: (w, them) => `payment=${w.owned[them].payment[0]}` },
  { route: 'GET /v1/disputes/:id', kind: 'read', resource: 'dispute', ok: 200 },
  { route: 'POST /v1/disputes/:id/evidence', kind: 'write', resource: 'dispute', ok: 200, body: () => ({ evidence: { uncategorized_text: 'receipt' } }) },
  // The lab connector its disputes come from cannot answer one: the caller's own is refused by the processor (a typed 422), past tenancy.
  { route: 'POST /v1/disputes/:id/accept', kind: 'write', resource: 'dispute', ok: 422 },
];
