// Inbound processor webhooks: POST /v1/connectors/{name}/webhooks (the built-in simulators) and
// POST /v1/connector-accounts/{id}/webhooks (a connector account's processor). No API key — the
// processor's signature authenticates the request — and the body is kept as the exact bytes
// received, since that is what the processor signed. A connector account's URL is size-limited and
// has a rate-limit bucket of its own.
import { Type } from 'typebox';
import type { App } from '../types.js';
import type { Config } from '../../config.js';
import type { Db } from '../../storage/db.js';
import type { RateLimiter } from '../rate-limiter.js';
import { errorResponses } from '../../kernel/schemas.js';
import { ApiError } from '../../kernel/errors.js';
import { builtInSender, receiveConnectorWebhook } from '../../movement/inbound.js';
import { MOVEMENT_KINDS } from '../../domain/movements.js';
import { connectorAccountSender } from '../../domain/connector-accounts/service.js';
import type { Runtime } from '../../runtime.js';
import { takeToken } from '../rate-limit.js';

const Received = Type.Object({
  received: Type.Literal(true),
  duplicate: Type.Boolean({ description: 'The event was received before; nothing was done again.' }),
  applied: Type.Boolean({ description: 'False when the event names nothing of ours.' }),
}, { description: 'Received: the receipt of the notification.' });

const ACCOUNT_WEBHOOK_BODY_LIMIT_BYTES = 256 * 1024;

const description = (verifiedWith: string) =>
  `Called by processors, not by merchants: verified with ${verifiedWith} (401 connector_webhook_signature_invalid, ` +
  '401 connector_webhook_timestamp_stale), deduplicated by the processor event id, applied to the payment, refund, payout or mandate.';

function rawBody(body: unknown): string {
  if (typeof body !== 'string' || body === '') throw new ApiError('body_missing');
  return body;
}

export function registerConnectorWebhookRoutes(app: App, db: Db, rt: Runtime, limits?: { limiter: RateLimiter; config: Config }) {
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
          summary: "Receive a built-in simulated processor's asynchronous outcome",
          description: description("the simulator's secret"),
          security: [],
          params: Type.Object({ name: Type.String({ maxLength: 64, examples: ['simulator_a'] }) }),
          response: { 200: Received, ...errorResponses('resource_missing', 'connector_webhook_signature_invalid', 'connector_webhook_timestamp_stale') },
        },
      },
      async (req) => {
        const body = rawBody(req.body);
        return receiveConnectorWebhook(db, rt, MOVEMENT_KINDS, builtInSender(rt, (req.params as { name: string }).name), req.headers, body);
      },
    );
    scope.post(
      '/v1/connector-accounts/:id/webhooks',
      {
        config: { auth: false },
        bodyLimit: ACCOUNT_WEBHOOK_BODY_LIMIT_BYTES,
        schema: {
          tags: ['connector accounts'],
          operationId: 'receiveConnectorAccountWebhook',
          summary: "Receive a processor's asynchronous outcome for one connector account (its webhook_url)",
          description: `${description("the connector account's webhook secret, by the processor's own scheme")} At most 256 KiB; rate-limited per account.`,
          security: [],
          params: Type.Object({ id: Type.String({ maxLength: 64, examples: ['ca_01jd8x3v0pe7wbz0m4k6f2n9qa'] }) }),
          response: {
            200: {
              description: 'Received. Processors that expect a plain-text acknowledgement get it instead of the JSON receipt (Adyen: `[accepted]`).',
              content: { 'application/json': { schema: Received }, 'text/plain': { schema: Type.String({ examples: ['[accepted]'] }) } },
            },
            ...errorResponses('resource_missing', 'body_too_large', 'connector_webhook_signature_invalid', 'connector_webhook_timestamp_stale'),
          },
        },
      },
      async (req, reply) => {
        const body = rawBody(req.body);
        const sender = await connectorAccountSender(db, rt, (req.params as { id: string }).id);
        if (limits) await takeToken(limits.limiter, `connector_account_webhooks:${sender.name}`, limits.config.rateLimit.live, reply, req.log);
        const received = await receiveConnectorWebhook(db, rt, MOVEMENT_KINDS, sender, req.headers, body);
        const ack = sender.connector.webhookAcknowledgement;
        return ack === undefined ? received : reply.type('text/plain; charset=utf-8').send(ack);
      },
    );
  });
}
