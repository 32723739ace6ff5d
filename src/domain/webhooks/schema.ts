// Request and response schemas of webhook endpoints, their delivery attempts and the test-mode
// delivery scenarios: validation, handler types and OpenAPI at once.
import { Type, type Static } from 'typebox';
import { ListQuery, Metadata, MetadataView, OneOf, Timestamp, Versioned } from '../../kernel/schemas.js';
import { WEBHOOK_ENDPOINT_STATUSES, WEBHOOK_TEST_SCENARIOS } from './state.js';

export const MAX_GRACE_PERIOD_S = 7 * 24 * 3600;
export const DEFAULT_GRACE_PERIOD_S = 24 * 3600;

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Where events are POSTed. https in live mode; test mode also accepts http (and local addresses, for development).',
  examples: ['https://example.com/webhooks'],
});

const EventTypePattern = Type.String({
  pattern: '^(\\*|[a-z][a-z_]*(\\.[a-z_]+)*(\\.\\*)?)$',
  maxLength: 100,
  description: 'An event type (GET /v1/event-types), `<resource>.*` for every event of a resource, or `*` for all. A name or pattern that matches no event type is refused.',
  examples: ['payment_order.paid', 'payment.*', '*'],
});

const EnabledEvents = Type.Array(EventTypePattern, { minItems: 1, maxItems: 100, uniqueItems: true });

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: Url,
    enabled_events: EnabledEvents,
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>;

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    enabled_events: Type.Optional(EnabledEvents),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
    status: Type.Optional(Type.String({ enum: [...WEBHOOK_ENDPOINT_STATUSES], description: 'disabled stops deliveries (pending retries are dropped); enabled resumes them.' })),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>;

export const RotateSecretBody = Type.Object(
  {
    grace_period_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_PERIOD_S,
        default: DEFAULT_GRACE_PERIOD_S,
        description: 'How long the previous secret keeps signing beside the new one (default 24 hours, at most 7 days; 0 ends it at once).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RotateSecretBody = Static<typeof RotateSecretBody>;

const endpointFields = {
  id: Type.String({ examples: ['we_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
  object: Type.Literal('webhook_endpoint'),
  livemode: Type.Boolean(),
  url: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  enabled_events: Type.Array(Type.String()),
  status: Type.String({ enum: [...WEBHOOK_ENDPOINT_STATUSES] }),
  disabled_reason: Type.Union([Type.String({ enum: ['requested', 'gone', 'failing'] }), Type.Null()], {
    description: 'requested (through the API), gone (the endpoint answered 410), failing (no success for days).',
  }),
  metadata: MetadataView,
  previous_secret_expires_at: Type.Union([Timestamp, Type.Null()], {
    description: 'While the secret before the last rotation still signs (both signatures are sent), when it stops.',
  }),
  ...Versioned('Increases by one with every change.'),
};

export const WebhookEndpoint = Type.Object(endpointFields, { $id: 'WebhookEndpoint', title: 'WebhookEndpoint' });
export type WebhookEndpointView = Static<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = Type.Object(
  {
    ...endpointFields,
    secret: Type.String({ description: 'The signing secret (`whsec_…`). Returned only by create and rotate-secret: store it now.' }),
  },
  { $id: 'WebhookEndpointWithSecret', title: 'WebhookEndpointWithSecret' },
);
export type WebhookEndpointWithSecretView = Static<typeof WebhookEndpointWithSecret>;

export const DeletedWebhookEndpoint = Type.Object({
  id: Type.String(),
  object: Type.Literal('webhook_endpoint'),
  deleted: Type.Literal(true),
});

export const ListWebhookEndpointsQuery = ListQuery({ status: OneOf(WEBHOOK_ENDPOINT_STATUSES) });
export type ListWebhookEndpointsQuery = Static<typeof ListWebhookEndpointsQuery>;

export const WebhookDeliveryAttempt = Type.Object(
  {
    id: Type.String({ examples: ['wda_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('webhook_delivery_attempt'),
    livemode: Type.Boolean(),
    event: Type.String({ description: 'The event id, also the webhook-id header of the request.' }),
    event_type: Type.String(),
    webhook_endpoint: Type.String(),
    url: Type.String({ description: 'Where this attempt was sent.' }),
    trigger: Type.String({ enum: ['event', 'redeliver'], description: 'event: the event fan-out; redeliver: POST /v1/events/{id}/redeliver.' }),
    attempt: Type.Integer({ description: 'Attempt number within its delivery, from 1.' }),
    outcome: Type.String({ enum: ['succeeded', 'failed'] }),
    response_status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status answered, null when none arrived.' }),
    error: Type.Union(
      [Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()],
      { description: 'http_status (a non-2xx answer), timeout, connection_refused, connection_reset, dns_failure, destination_forbidden, tls_error, connection_error, invalid_url, signing_failed.' },
    ),
    duration_ms: Type.Integer(),
    next_retry_at: Type.Union([Timestamp, Type.Null()], { description: 'When the next attempt is scheduled; null when this one ended the delivery.' }),
    created_at: Timestamp,
  },
  { $id: 'WebhookDeliveryAttempt', title: 'WebhookDeliveryAttempt' },
);
export type WebhookDeliveryAttemptView = Static<typeof WebhookDeliveryAttempt>;

export const ListAttemptsQuery = ListQuery({});
export type ListAttemptsQuery = Static<typeof ListAttemptsQuery>;

export const RedeliverBody = Type.Object(
  {
    webhook_endpoint: Type.Optional(
      Type.String({ description: 'Send to this endpoint only (it must be enabled). Default: every enabled endpoint subscribed to the event type now.' }),
    ),
  },
  { additionalProperties: false },
);
export type RedeliverBody = Static<typeof RedeliverBody>;

export const Redelivery = Type.Object({
  object: Type.Literal('event_redelivery'),
  event: Type.String(),
  webhook_endpoints: Type.Array(Type.String(), { description: 'Endpoints a new delivery was queued for (same webhook-id as before).' }),
});

export const WebhookTest = Type.Object(
  {
    id: Type.String({ examples: ['wht_01jd8x3v0pe7wbz0m4k6f2n9qa'], description: 'A new id per scenario run; both requests of out_of_order carry the same one.' }),
    object: Type.Literal('webhook_test'),
    scenario: Type.String({ enum: [...WEBHOOK_TEST_SCENARIOS] }),
    version: Type.Integer({ description: 'Like any object\'s version: out_of_order sends version 2, then version 1.' }),
  },
  {
    $id: 'WebhookTest',
    title: 'WebhookTest',
    description: 'The synthetic object of a webhook_endpoint.test event, sent by the test-mode delivery scenarios.',
  },
);

export const SendTestBody = Type.Object(
  { scenario: Type.String({ enum: [...WEBHOOK_TEST_SCENARIOS] }) },
  { additionalProperties: false },
);
export type SendTestBody = Static<typeof SendTestBody>;

export const WebhookTestResult = Type.Object({
  object: Type.Literal('webhook_test'),
  scenario: Type.String({ enum: [...WEBHOOK_TEST_SCENARIOS] }),
  webhook_endpoint: Type.String(),
  passed: Type.Union([Type.Boolean(), Type.Null()], {
    description:
      'true: every answer was what a correct receiver gives, and the answers show all the scenario checks (deliver, invalid_signature, ' +
      'stale_timestamp). false: some answer was not. null: every answer was right, but what the scenario is about happens inside the ' +
      'receiver and no answer can show it (duplicate: acting once; out_of_order: keeping version 2); check receiver_should against your records.',
  }),
  answers_as_expected: Type.Boolean({ description: 'Every request got the answer a correct receiver gives: 2xx to what it should accept, 4xx to what it should refuse.' }),
  receiver_should: Type.String({ description: 'What a correct receiver does with these requests, naming their ids.' }),
  requests: Type.Array(
    Type.Object({
      webhook_id: Type.String(),
      webhook_timestamp: Type.Integer(),
      event_type: Type.String(),
      object_version: Type.Integer(),
      signature_valid: Type.Boolean(),
      expected: Type.String({ enum: ['accept', 'reject'] }),
      response_status: Type.Union([Type.Integer(), Type.Null()]),
      error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
      duration_ms: Type.Integer(),
    }),
  ),
  description: Type.String({ description: 'What was sent.' }),
});
