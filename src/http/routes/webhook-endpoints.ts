// HTTP surface of webhook endpoints, their delivery attempts, event redelivery and the test-mode
// delivery scenarios: validate, call one service function, shape the answer.
import { Type } from 'typebox';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { bodyOptional, errorResponses, IdParam, IdempotencyHeader, ListOf, NoParameters } from '../../kernel/schemas.js';
import {
  CreateWebhookEndpointBody,
  DeletedWebhookEndpoint,
  ListAttemptsQuery,
  ListWebhookEndpointsQuery,
  RedeliverBody,
  Redelivery,
  RotateSecretBody,
  SendTestBody,
  UpdateWebhookEndpointBody,
  WebhookTestResult,
} from '../../domain/webhooks/schema.js';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  retrieveWebhookEndpoint,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  type WebhookSettings,
} from '../../domain/webhooks/service.js';
import { listEndpointAttempts, listEventAttempts, redeliverEvent } from '../../domain/webhooks/attempts.js';
import { sendTestScenario } from '../../domain/webhooks/test-scenarios.js';
import { registerReadRoutes } from './reads.js';
import type { WebhookTestScenario } from '../../domain/webhooks/state.js';

const Endpoint = Type.Ref('WebhookEndpoint');
const EndpointWithSecret = Type.Ref('WebhookEndpointWithSecret');
const Attempt = Type.Ref('WebhookDeliveryAttempt');
const ENDPOINT_ID_EXAMPLE = 'we_01jd8x3v0pe7wbz0m4k6f2n9qa';
const EndpointId = IdParam(ENDPOINT_ID_EXAMPLE);
const EventId = IdParam('evt_01jd8x3v0pe7wbz0m4k6f2n9qa');
const tags = ['webhook endpoints'];

export function registerWebhookRoutes(app: App, db: Db, settings: WebhookSettings) {
  app.post(
    '/v1/webhook-endpoints',
    {
      config: { idempotency: 'optional' },
      schema: {
        tags,
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint (the answer holds its signing secret, once)',
        body: CreateWebhookEndpointBody,
        headers: IdempotencyHeader(false),
        response: { 201: EndpointWithSecret, ...errorResponses('webhook_endpoint_limit_reached') },
      },
    },
    async (req, reply) => sendOutcome(reply, await createWebhookEndpoint(db, settings, req.ctx, req.body)),
  );

  registerReadRoutes(app, {
    path: '/v1/webhook-endpoints', tags, schema: 'WebhookEndpoint', names: ['webhook endpoint', 'webhook endpoints'], idExample: ENDPOINT_ID_EXAMPLE,
    query: ListWebhookEndpointsQuery, retrieve: (ctx, id) => retrieveWebhookEndpoint(db, ctx, id), list: (from, ctx, query) => listWebhookEndpoints(from, ctx, query),
  });

  app.patch(
    '/v1/webhook-endpoints/:id',
    {
      schema: {
        tags,
        operationId: 'updateWebhookEndpoint',
        summary: 'Update a webhook endpoint: url, enabled_events, description, metadata, status',
        params: EndpointId,
        body: UpdateWebhookEndpointBody,
        response: { 200: Endpoint, ...errorResponses('resource_missing') },
      },
    },
    async (req, reply) => sendOutcome(reply, await updateWebhookEndpoint(db, settings, req.ctx, req.params.id, req.body)),
  );

  app.delete(
    '/v1/webhook-endpoints/:id',
    {
      preValidation: bodyOptional,
      schema: {
        tags,
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint; nothing more is sent to it',
        params: EndpointId,
        body: NoParameters,
        response: { 200: DeletedWebhookEndpoint, ...errorResponses('resource_missing') },
      },
    },
    async (req, reply) => sendOutcome(reply, await deleteWebhookEndpoint(db, req.ctx, req.params.id)),
  );

  app.post(
    '/v1/webhook-endpoints/:id/rotate-secret',
    {
      config: { idempotency: 'optional' },
      preValidation: bodyOptional,
      schema: {
        tags,
        operationId: 'rotateWebhookEndpointSecret',
        summary: 'Issue a new signing secret; the previous one keeps signing for a grace period',
        params: EndpointId,
        body: RotateSecretBody,
        headers: IdempotencyHeader(false),
        response: { 200: EndpointWithSecret, ...errorResponses('resource_missing') },
      },
    },
    async (req, reply) => sendOutcome(reply, await rotateWebhookSecret(db, settings, req.ctx, req.params.id, req.body)),
  );

  // The delivery attempts of one endpoint, or of one event: the same page, found from either side.
  const deliveries = [
    { path: '/v1/webhook-endpoints/:id/deliveries', tags, operationId: 'listWebhookEndpointDeliveries', of: 'made to a webhook endpoint', params: EndpointId, list: listEndpointAttempts },
    { path: '/v1/events/:id/deliveries', tags: ['events'], operationId: 'listEventDeliveries', of: 'of an event', params: EventId, list: listEventAttempts },
  ];
  for (const { path, of, params, list, ...named } of deliveries) {
    app.get(
      path,
      {
        schema: {
          ...named,
          summary: `List the delivery attempts ${of}, newest first`,
          params,
          querystring: ListAttemptsQuery,
          response: { 200: ListOf(Attempt), ...errorResponses('resource_missing') },
        },
      },
      async (req) => req.read((from) => list(from, req.ctx, req.params.id, req.query)),
    );
  }

  app.post(
    '/v1/events/:id/redeliver',
    {
      config: { idempotency: 'optional' },
      preValidation: bodyOptional,
      schema: {
        tags: ['events'],
        operationId: 'redeliverEvent',
        summary: 'Send an event again (same webhook-id) to one endpoint or to every subscribed one',
        params: EventId,
        body: RedeliverBody,
        headers: IdempotencyHeader(false),
        response: { 202: Redelivery, ...errorResponses('resource_missing', 'invalid_state') },
      },
    },
    async (req, reply) => sendOutcome(reply, await redeliverEvent(db, req.ctx, req.params.id, req.body)),
  );

  app.post(
    '/v1/test-helpers/webhook-endpoints/:id/send',
    {
      config: { idempotency: 'optional' },
      schema: {
        tags: ['test helpers'],
        operationId: 'sendTestWebhook',
        summary: 'Test mode: send a delivery scenario to an endpoint and report what it answered',
        description:
          'Scenarios: deliver, duplicate (same webhook-id twice), out_of_order (version 2 before version 1), invalid_signature, ' +
          'stale_timestamp. The requests are sent while this call waits; the answer shows each one, what the receiver answered and what ' +
          'a correct receiver does (receiver_should). `passed` is null when the answers were right but cannot show the rest (duplicate, out_of_order).',
        params: EndpointId,
        body: SendTestBody,
        headers: IdempotencyHeader(false),
        response: { 200: WebhookTestResult, ...errorResponses('resource_missing', 'permission_denied') },
      },
    },
    async (req, reply) =>
      sendOutcome(reply, await sendTestScenario(db, settings, req.ctx, req.params.id, req.body.scenario as WebhookTestScenario)),
  );
}
