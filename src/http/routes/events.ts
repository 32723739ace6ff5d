// HTTP surface of the event log and of the event-type catalogue (src/events/types.ts): the
// Event schema as a union discriminated by `type`, one named schema per type, the OpenAPI
// `webhooks` section (what each type's delivery looks like) and GET /v1/event-types.
import { Type, type TSchema } from 'typebox';
import type { App } from '../types.js';
import type { Db } from '../../storage/db.js';
import { errorResponses, IdParam, ListOf, ListQuery, Timestamp } from '../../kernel/schemas.js';
import { listEvents, retrieveEvent } from '../../events/service.js';
import { EVENT_OBJECTS, EVENT_TYPE_NAMES, EVENT_TYPES, type EventType } from '../../events/types.js';

const COMPONENT = '#/components/schemas/';

/** The name of an event type's schema: `payment_order.paid` → `PaymentOrderPaidEvent`. */
export function eventSchemaName(type: EventType): string {
  return type.split(/[._]/).map((word) => word[0]!.toUpperCase() + word.slice(1)).join('') + 'Event';
}

/** The $id of the schema of an event type's `data.object`. */
export function objectSchemaName(type: EventType): string {
  return EVENT_OBJECTS[EVENT_TYPES[type].object];
}

function eventObject(type: TSchema, object: TSchema, options: { $id: string; title: string; description: string }) {
  return Type.Object(
    {
      id: Type.String({ examples: ['evt_01jd8x3v0pe7wbz0m4k6f2n9qa'], description: 'Also the webhook-id header of its deliveries.' }),
      object: Type.Literal('event'),
      type,
      livemode: Type.Boolean(),
      created_at: Timestamp,
      data: Type.Object({ object }),
      request: Type.Object({ id: Type.Union([Type.String(), Type.Null()]), idempotency_key: Type.Union([Type.String(), Type.Null()]) }),
    },
    options,
  );
}

/** One schema per event type, its `data.object` the object that type carries. */
export const EVENT_SCHEMAS = EVENT_TYPE_NAMES.map((type) =>
  eventObject(Type.Literal(type), Type.Ref(objectSchemaName(type)), { $id: eventSchemaName(type), title: eventSchemaName(type), description: EVENT_TYPES[type].description }),
);

export const EventSchema = Type.Unsafe({
  $id: 'Event',
  title: 'Event',
  description: 'A change of one object, with a snapshot of the object after it. `type` says which change and which object `data.object` holds (GET /v1/event-types).',
  oneOf: EVENT_TYPE_NAMES.map((type) => Type.Ref(eventSchemaName(type))),
  discriminator: { propertyName: 'type', mapping: Object.fromEntries(EVENT_TYPE_NAMES.map((type) => [type, COMPONENT + eventSchemaName(type)])) },
});

export const EventTypeSchema = Type.Object(
  {
    object: Type.Literal('event_type'),
    name: Type.String({ enum: EVENT_TYPE_NAMES, description: 'The event type, as in `type` and in enabled_events.' }),
    description: Type.String(),
    data_object: Type.String({ enum: Object.keys(EVENT_OBJECTS), description: 'The `object` of the event\'s data.object.' }),
    schema: Type.String({ description: 'Where the schema of data.object is in the OpenAPI document (/v1/openapi.json).', examples: [`${COMPONENT}Payment`] }),
    event_schema: Type.String({ description: 'Where the schema of the whole event is in the OpenAPI document.', examples: [`${COMPONENT}PaymentSucceededEvent`] }),
  },
  { $id: 'EventType', title: 'EventType' },
);

const EVENT_TYPE_LIST = {
  object: 'list' as const,
  data: EVENT_TYPE_NAMES.map((name) => ({
    object: 'event_type',
    name,
    description: EVENT_TYPES[name].description,
    data_object: EVENT_TYPES[name].object,
    schema: COMPONENT + objectSchemaName(name),
    event_schema: COMPONENT + eventSchemaName(name),
  })),
  has_more: false,
};

const header = (name: string, description: string) => ({ name, in: 'header', required: true, schema: { type: 'string' }, description }) as const;

/** The OpenAPI 3.1 `webhooks` section: the request each endpoint subscribed to a type receives. */
export function eventWebhooks() {
  const parameters = [
    header('webhook-id', 'The event id: the same on every retry and redelivery; deduplicate by it.'),
    header('webhook-timestamp', 'When this attempt was signed, in unix seconds; refuse it when more than five minutes from your clock.'),
    header('webhook-signature', 'Space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, one per valid secret (Standard Webhooks).'),
  ];
  return Object.fromEntries(
    EVENT_TYPE_NAMES.map((type) => [
      type,
      {
        post: {
          operationId: eventSchemaName(type).replace(/^./, (c) => c.toLowerCase()).replace(/Event$/, 'Webhook'),
          summary: type,
          description: EVENT_TYPES[type].description,
          tags: ['webhooks'],
          security: [],
          parameters,
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: COMPONENT + eventSchemaName(type) } } } },
          responses: {
            '2XX': { description: 'Received: the delivery succeeded.' },
            '4XX': { description: 'Refused: sent again on the retry schedule, like any answer but 2xx; 410 Gone disables the endpoint.' },
          },
        },
      },
    ]),
  );
}

const ListEventsQuery = ListQuery({
  type: Type.Optional(Type.String({ pattern: '^[a-z_.*]{1,100}$', description: 'An event type; `*` matches any run of characters, as in `payment.*`.' })),
});
const tags = ['events'];
// Events hold stored snapshots: JSON.stringify sends them as stored, where a serialiser compiled
// from a oneOf over every type would be slow to build and could drop fields a snapshot has and its
// schema lacks.
const asStored = () => (data: unknown) => JSON.stringify(data);

export function registerEventRoutes(app: App, db: Db) {
  app.get(
    '/v1/events',
    {
      serializerCompiler: asStored,
      schema: { tags, operationId: 'listEvents', summary: 'List events, newest first', querystring: ListEventsQuery, response: { 200: ListOf(Type.Ref('Event')), ...errorResponses() } },
    },
    async (req) => req.read((from) => listEvents(from, req.ctx, req.query)),
  );
  app.get(
    '/v1/events/:id',
    {
      serializerCompiler: asStored,
      schema: { tags, operationId: 'retrieveEvent', summary: 'Retrieve an event', params: IdParam('evt_01jd8x3v0pe7wbz0m4k6f2n9qa'), response: { 200: Type.Ref('Event'), ...errorResponses('resource_missing') } },
    },
    async (req) => retrieveEvent(db, req.ctx, req.params.id),
  );
  app.get(
    '/v1/event-types',
    {
      schema: {
        tags,
        operationId: 'listEventTypes',
        summary: 'List every event type: what it means and the schema of its data.object',
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: ListOf(Type.Ref('EventType')), ...errorResponses() },
      },
    },
    async () => EVENT_TYPE_LIST,
  );
}
