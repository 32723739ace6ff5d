// Inbound processor webhooks: POST /v1/connectors/{name}/webhooks. No API key — the connector's
// signature authenticates the request — and the body is kept as the exact bytes received, since
// that is what the processor signed.
import { Type } from 'typebox';
import type { App } from '../types.js';
import type { Db } from '../../storage/db.js';
import { errorResponses } from '../../kernel/schemas.js';
import { ApiError } from '../../kernel/errors.js';
import { receiveConnectorWebhook } from '../../movement/inbound.js';
import { MOVEMENT_KINDS } from '../../domain/movements.js';
import type { Runtime } from '../../runtime.js';

const Received = Type.Object({
  received: Type.Literal(true),
  duplicate: Type.Boolean({ description: 'The event was received before; nothing was done again.' }),
  applied: Type.Boolean({ description: 'False when the event names nothing of ours.' }),
});

export function registerConnectorWebhookRoutes(app: App, db: Db, rt: Runtime) {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    scope.post(
      '/v1/connectors/:name/webhooks',
      {
        config: { auth: false },
        schema: {
          tags: ['connectors'],
          operationId: 'receiveConnectorWebhook',
          summary: "Receive a processor's asynchronous outcome",
          description:
            "Called by processors, not by merchants: verified with the connector's secret (401 connector_webhook_signature_invalid, " +
            '401 connector_webhook_timestamp_stale), deduplicated by the processor event id, applied to the payment or refund.',
          security: [],
          params: Type.Object({ name: Type.String({ maxLength: 64, examples: ['simulator_a'] }) }),
          response: { 200: Received, ...errorResponses(404) },
        },
      },
      async (req) => {
        if (typeof req.body !== 'string' || req.body === '') throw new ApiError('body_missing');
        return receiveConnectorWebhook(db, rt, MOVEMENT_KINDS, (req.params as { name: string }).name, req.headers, req.body);
      },
    );
  });
}
