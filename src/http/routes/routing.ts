// HTTP surface of the routing configuration.
import { Type } from 'typebox';
import type { App } from '../types.js';
import type { Db } from '../../storage/db.js';
import { errorResponses } from '../../kernel/schemas.js';
import { PutRoutingBody, RoutingStats } from '../../domain/routing/schema.js';
import { putRouting, retrieveRouting } from '../../domain/routing/service.js';
import { routingStatsView } from '../../domain/routing/stats.js';
import type { Runtime } from '../../runtime.js';

const tags = ['routing'];

export function registerRoutingRoutes(app: App, db: Db, rt: Runtime) {
  app.get(
    '/v1/routing',
    {
      schema: {
        tags,
        operationId: 'retrieveRouting',
        summary: "Retrieve this mode's routing rules",
        response: { 200: Type.Ref('Routing'), ...errorResponses() },
      },
    },
    async (req) => retrieveRouting(db, rt, req.ctx),
  );

  app.put(
    '/v1/routing',
    {
      schema: {
        tags,
        operationId: 'replaceRouting',
        summary: "Replace this mode's routing rules",
        description:
          'Ordered rules; the first that matches a payment (currency, amount range, payment method type) names the connectors to try. ' +
          'Other processes of the service apply the change within ROUTING_CACHE_TTL_MS.',
        body: PutRoutingBody,
        response: { 200: Type.Ref('Routing'), ...errorResponses('resource_missing') },
      },
    },
    async (req) => putRouting(db, rt, req.ctx, req.body),
  );

  app.get(
    '/v1/routing/stats',
    {
      schema: {
        tags,
        operationId: 'retrieveRoutingStats',
        summary: "This mode's recent authorisation rates per connector and segment",
        description:
          'The window success_rate routing scores (docs/routing.md): per connector and segment (card brand, currency, issuing country where known), ' +
          "the attempts whose outcome was learnt and how many were authorised, over the mode's latest payments of the last hour.",
        response: { 200: RoutingStats, ...errorResponses() },
      },
    },
    async (req) => routingStatsView(db, rt, req.ctx),
  );
}
