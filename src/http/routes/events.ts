import { Type } from 'typebox';
import type { App } from '../types.js';
import type { Db } from '../../storage/db.js';
import { errorResponses, IdParam, ListOf, ListQuery, Timestamp } from '../../kernel/schemas.js';
import { listEvents, retrieveEvent } from '../../domain/events/service.js';

export const EventSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('event'),
    type: Type.String({ examples: ['payment_order.created'] }),
    livemode: Type.Boolean(),
    created_at: Timestamp,
    data: Type.Object({ object: Type.Object({}, { additionalProperties: true, description: 'A snapshot of the object after the change.' }) }),
    request: Type.Object({ id: Type.Union([Type.String(), Type.Null()]), idempotency_key: Type.Union([Type.String(), Type.Null()]) }),
  },
  { $id: 'Event', title: 'Event' },
);

const ListEventsQuery = ListQuery({
  type: Type.Optional(Type.String({ pattern: '^[a-z_.*]{1,100}$', description: 'An event type; `*` matches any run of characters, as in `payment.*`.' })),
});
const tags = ['events'];

export function registerEventRoutes(app: App, db: Db) {
  app.get(
    '/v1/events',
    { schema: { tags, operationId: 'listEvents', summary: 'List events, newest first', querystring: ListEventsQuery, response: { 200: ListOf(Type.Ref('Event')), ...errorResponses() } } },
    async (req) => listEvents(db, req.ctx, req.query),
  );
  app.get(
    '/v1/events/:id',
    { schema: { tags, operationId: 'retrieveEvent', summary: 'Retrieve an event', params: IdParam('evt_01jd8x3v0pe7wbz0m4k6f2n9qa'), response: { 200: Type.Ref('Event'), ...errorResponses(404) } } },
    async (req) => retrieveEvent(db, req.ctx, req.params.id),
  );
}
