// Typed events: the catalogue is the only source of event types (unknown ones do not compile), the
// OpenAPI document describes each type (a oneOf discriminated by `type`, a `webhooks` entry each),
// GET /v1/event-types lists them, and event answers are the same bytes as before the union.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import fastJsonStringify from 'fast-json-stringify';
import { client, createTenant, createTestDatabase, orderBody, startTestService, type TestDatabase, type TestService } from '../support/helpers.js';
import { cardMethod, CARDS } from '../support/payments.js';
import { documentValidator } from '../support/events.js';
import { Receiver } from '../support/webhooks.js';
import { EVENT_OBJECTS, EVENT_TYPE_NAMES, EVENT_TYPES, checkEventPatterns, type EventType } from '../../src/events/types.js';
import { listEvents, recordEvent, retrieveEvent } from '../../src/events/service.js';
import type { EventfulStatus } from '../../src/movement/transition.js';
import type { PayoutStatus } from '../../src/domain/payouts/state.js';
import { ListOf, Timestamp } from '../../src/kernel/schemas.js';
import { parseId } from '../../src/kernel/ids.js';

let testDb: TestDatabase;
let service: TestService;
let api: ReturnType<typeof client>;
let accountId: string;
let document: any;

beforeAll(async () => {
  testDb = await createTestDatabase();
  service = await startTestService(testDb);
  const tenant = await createTenant(testDb.database);
  accountId = parseId('acct', tenant.accountId)!;
  api = client(service.url, tenant.testKey);
  document = (await client(service.url).get('/v1/openapi.json')).body;
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
});

// Never called: tsc (npm run typecheck covers test/) fails if an error below stops being one.
export function typeChecks(tx: never, ctx: never) {
  // @ts-expect-error an event type that is not in the catalogue does not compile
  void recordEvent(tx, ctx, 'definitely.not.an.event', { id: 'x' }, new Date());
  // @ts-expect-error a status whose `${object}.${status}` is no event type cannot be moved to: nothing announces payout.pending
  const unannounced: EventfulStatus<'payout', PayoutStatus> = 'pending';
  const announced: EventfulStatus<'payout', PayoutStatus> = 'returned';
  const known: EventType = 'payment_order.paid';
  return [unannounced, announced, known];
}

describe('the event-type catalogue', () => {
  it('names each type after its object, describes it, and points at a schema the document has', () => {
    for (const type of EVENT_TYPE_NAMES) {
      const entry = EVENT_TYPES[type];
      const [resource] = type.split('.');
      // webhook_endpoint.test is about a synthetic object, not about the endpoint; balance.available
      // carries the balance transaction that moved the money (docs/webhooks.md names the event after the balance).
      const exceptions: Record<string, string> = { 'webhook_endpoint.test': 'webhook_test', 'balance.available': 'balance_transaction' };
      expect(exceptions[type] ?? resource, type).toBe(entry.object);
      expect(entry.description.length, type).toBeGreaterThan(20);
      expect(document.components.schemas[EVENT_OBJECTS[entry.object]], type).toBeDefined();
    }
    expect(new Set(Object.values(EVENT_OBJECTS)).size).toBe(Object.keys(EVENT_OBJECTS).length);
  });

  it('accepts every type, * and <resource>.* as patterns, and nothing that matches no type', () => {
    expect(() => checkEventPatterns([...EVENT_TYPE_NAMES, '*', 'payment.*', 'payment_order.*', 'webhook_endpoint.*'], 'p')).not.toThrow();
    expect(() => checkEventPatterns(['payment_order.paid', 'payment_orders.*'], 'p')).toThrow(/p\.1 "payment_orders\.\*" matches no event type; did you mean "payment_order\.\*"/);
    expect(() => checkEventPatterns(['mandate.activated'], 'p')).toThrow(/did you mean "mandate\.active"/);
  });
});

describe('the OpenAPI document', () => {
  it('describes Event as a oneOf discriminated by type, with one named schema per type', () => {
    const event = document.components.schemas.Event;
    expect(event.oneOf).toHaveLength(EVENT_TYPE_NAMES.length);
    expect(event.discriminator.propertyName).toBe('type');
    for (const type of EVENT_TYPE_NAMES) {
      const ref: string = event.discriminator.mapping[type];
      expect(event.oneOf).toContainEqual({ $ref: ref });
      const schema = document.components.schemas[ref.replace('#/components/schemas/', '')];
      expect(schema.properties.type.enum, type).toEqual([type]);
      expect(schema.properties.data.properties.object, type).toEqual({ $ref: `#/components/schemas/${EVENT_OBJECTS[EVENT_TYPES[type].object]}` });
      expect(schema.description).toBe(EVENT_TYPES[type].description);
    }
    expect(document.components.schemas.PaymentSucceededEvent.properties.type.enum).toEqual(['payment.succeeded']);
  });

  it('has a webhooks entry per event type: the signed POST an endpoint receives', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.webhooks).sort()).toEqual([...EVENT_TYPE_NAMES].sort());
    const hook = document.webhooks['payment_order.paid'].post;
    expect(hook.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PaymentOrderPaidEvent' });
    expect(hook.parameters.map((p: any) => [p.in, p.name])).toEqual([['header', 'webhook-id'], ['header', 'webhook-timestamp'], ['header', 'webhook-signature']]);
    expect(Object.keys(hook.responses)).toEqual(['2XX', '4XX']);
    const ids = Object.values(document.webhooks).map((w: any) => w.post.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers list and retrieve of events with the Event schema', () => {
    expect(document.paths['/v1/events'].get.responses['200'].content['application/json'].schema.properties.data.items).toEqual({ $ref: '#/components/schemas/Event' });
    expect(document.paths['/v1/events/{id}'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Event' });
  });
});

describe('GET /v1/event-types', () => {
  it('lists every type with its description and where its schemas are in the document', async () => {
    const res = await api.get('/v1/event-types');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', has_more: false });
    expect(res.body.data.map((t: any) => t.name)).toEqual(EVENT_TYPE_NAMES);
    expect(res.body.data.find((t: any) => t.name === 'refund.failed')).toEqual({
      object: 'event_type',
      name: 'refund.failed',
      description: EVENT_TYPES['refund.failed'].description,
      data_object: 'refund',
      schema: '#/components/schemas/Refund',
      event_schema: '#/components/schemas/RefundFailedEvent',
    });
    const at = (pointer: string) => pointer.split('/').slice(1).reduce((node, key) => node?.[key], document);
    for (const t of res.body.data) {
      expect(at(t.schema).properties.object.enum, t.name).toEqual([t.data_object]);
      expect(at(t.event_schema).properties.type.enum).toEqual([t.name]);
    }
    expect(document.paths['/v1/event-types'].get.operationId).toBe('listEventTypes');
  });

  it('needs an API key and takes no parameters', async () => {
    expect((await client(service.url).get('/v1/event-types')).status).toBe(401);
    const res = await api.get('/v1/event-types?limit=2');
    expect(res.body.error).toMatchObject({ code: 'parameter_unknown', param: 'limit' });
  });
});

describe('event answers', () => {
  // The Event schema before it became a union: fastify serialised answers from it.
  const Before = Type.Object({
    id: Type.String(),
    object: Type.Literal('event'),
    type: Type.String(),
    livemode: Type.Boolean(),
    created_at: Timestamp,
    data: Type.Object({ object: Type.Object({}, { additionalProperties: true }) }),
    request: Type.Object({ id: Type.Union([Type.String(), Type.Null()]), idempotency_key: Type.Union([Type.String(), Type.Null()]) }),
  });

  it('are the same bytes as before, every stored field kept', async () => {
    const metadata = { 'line\nbreak': 'a\u2028b', quote: '"\\', euro: '💶', empty: '' };
    const order = (await api.post('/v1/payment-orders', orderBody({ metadata }))).body;
    await api.post('/v1/payments', { payment_order: order.id, payment_method: cardMethod(CARDS.success) });
    const ctx = { accountId, livemode: false, requestId: '' };
    const list = await listEvents(testDb.database.db, ctx, { limit: 10 });
    expect(list.data.map((e) => e.type)).toEqual(['payment.succeeded', 'payment_order.paid', 'payment.created', 'payment_order.processing', 'payment_order.created']);
    const listed = await api.get('/v1/events?limit=10');
    expect(listed.text).toBe(fastJsonStringify(ListOf(Before) as object)(list));
    expect(listed.text).toBe(JSON.stringify(list));
    const paid = list.data[1]!;
    const one = await api.get(`/v1/events/${paid.id}`);
    expect(one.text).toBe(fastJsonStringify(Before as object)(await retrieveEvent(testDb.database.db, ctx, paid.id)));
    expect(one.body.data.object.metadata).toEqual(metadata);
  });

  it('validate against the document: each event against its own type\'s schema', async () => {
    const validate = documentValidator(document);
    const events = (await api.get('/v1/events?limit=100')).body.data;
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) expect(validate(event), event.type).toEqual([]);
    const wrong = { ...events[0], type: 'payment_order.created' };
    expect(validate(wrong).length).toBeGreaterThan(0);
  });

  it('webhook_endpoint.test events sent by the test helper validate too', async () => {
    const receiver = await Receiver.start();
    try {
      const endpoint = (await api.post('/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['webhook_endpoint.test'] })).body;
      await api.post(`/v1/test-helpers/webhook-endpoints/${endpoint.id}/send`, { scenario: 'out_of_order' });
      const validate = documentValidator(document);
      for (const r of receiver.requests) {
        const event = JSON.parse(r.body);
        expect(validate(event)).toEqual([]);
        expect(parseId('wht', event.data.object.id)).toBeTruthy();
      }
      expect(receiver.requests).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });
});
