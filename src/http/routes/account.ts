// The caller's own account: its implementation plan (docs/test-mode.md, going live), computed from what it has done in
// test mode. Either mode's key may read it; it never shows another account's.
import { Type } from 'typebox';
import type { App } from '../types.js';
import type { Db } from '../../storage/db.js';
import { errorResponses } from '../../kernel/schemas.js';
import { IntegrationPlan } from '../../domain/accounts/schema.js';
import { callerPlan } from '../../domain/accounts/integration.js';

export function registerAccountRoutes(app: App, db: Db) {
  app.addSchema(IntegrationPlan);
  app.get(
    '/v1/account/integration',
    {
      schema: {
        tags: ['account'],
        operationId: 'retrieveIntegrationPlan',
        summary: "Retrieve the account's implementation plan",
        description:
          'A checklist computed from what the account has done in test mode (webhook endpoint, delivery scenarios, each test-card scenario, a refund, a replayed Idempotency-Key, …), each item with its evidence. Live activation requires its required items.',
        response: { 200: Type.Ref('IntegrationPlan'), ...errorResponses() },
      },
    },
    async (req) => callerPlan(db, req.ctx.accountId),
  );
}
