// Lists: cursor pagination (newest first, limit, starting_after, ending_before, has_more), the
// filters of payment orders (status, reference, created[gte]/created[lte]) and of events (type,
// with `*` wildcards), and the typed 400s for bad list parameters.
import { beforeAll, describe, expect, it } from 'vitest';
import { orderBody } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';

const { api } = useService();
/** The orders of this file's tenant, oldest first. */
const orders: any[] = [];
const SHARED_REFERENCE = 'shared-reference';

beforeAll(async () => {
  for (let i = 0; i < 7; i++) {
    const res = await api.post('/v1/payment-orders', orderBody({ amount: 100 + i, reference: i % 3 === 0 ? SHARED_REFERENCE : `ref-${i}` }));
    expect(res.status).toBe(201);
    orders.push(res.body);
    // Distinct creation times, so created[gte]/created[lte] boundaries are unambiguous.
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  // Orders 1 and 4 cancelled; the rest open.
  for (const i of [1, 4]) {
    const res = await api.post(`/v1/payment-orders/${orders[i].id}/cancel`, undefined, { idempotencyKey: undefined });
    expect(res.status).toBe(200);
    orders[i] = res.body;
  }
});

const ids = (list: { data: { id: string }[] }) => list.data.map((o) => o.id);
const newestFirst = () => [...orders].reverse().map((o) => o.id as string);

describe('lists: pagination', () => {
  it('answers a list object, newest first, limit 10 by default', async () => {
    const res = await api.get('/v1/payment-orders');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'has_more', 'object']);
    expect(res.body.object).toBe('list');
    expect(res.body.has_more).toBe(false);
    expect(ids(res.body)).toEqual(newestFirst());
    expect(res.body.data[0]).toEqual(orders[6]);
  });

  it('walks forward with starting_after and has_more, and back with ending_before', async () => {
    const expected = newestFirst();
    const pages: string[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const res = await api.get(`/v1/payment-orders?limit=3${cursor ? `&starting_after=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      pages.push(ids(res.body));
      if (!res.body.has_more) break;
      cursor = res.body.data.at(-1).id;
    }
    expect(pages).toEqual([expected.slice(0, 3), expected.slice(3, 6), expected.slice(6)]);

    // Backwards from the oldest: the page just newer than it, still newest first.
    const back = await api.get(`/v1/payment-orders?limit=3&ending_before=${expected[6]}`);
    expect(ids(back.body)).toEqual(expected.slice(3, 6));
    expect(back.body.has_more).toBe(true);
    const front = await api.get(`/v1/payment-orders?limit=3&ending_before=${expected[3]}`);
    expect(ids(front.body)).toEqual(expected.slice(0, 3));
    expect(front.body.has_more).toBe(false);
    const partial = await api.get(`/v1/payment-orders?limit=2&ending_before=${expected[3]}`);
    expect(ids(partial.body)).toEqual(expected.slice(1, 3));
    expect(partial.body.has_more).toBe(true);
  });

  it('limit bounds: 1 and 100 pass; 0, 101, -1, 1.5 and text → 400 param limit', async () => {
    const one = await api.get('/v1/payment-orders?limit=1');
    expect(ids(one.body)).toEqual(newestFirst().slice(0, 1));
    expect(one.body.has_more).toBe(true);
    const hundred = await api.get('/v1/payment-orders?limit=100');
    expect(ids(hundred.body)).toEqual(newestFirst());
    for (const limit of ['0', '101', '-1', '1.5', 'ten', '']) {
      const res = await api.get(`/v1/payment-orders?limit=${limit}`);
      expect(res.status, `limit=${limit}`).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'validation', code: 'parameter_invalid', param: 'limit' });
    }
    const events = await api.get('/v1/events?limit=101');
    expect(events.status).toBe(400);
    expect(events.body.error).toMatchObject({ type: 'validation', code: 'parameter_invalid', param: 'limit' });
  });

  it('both cursors at once → 400', async () => {
    const res = await api.get(`/v1/payment-orders?starting_after=${orders[5].id}&ending_before=${orders[1].id}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'validation', code: 'parameter_invalid' });
    expect(['starting_after', 'ending_before']).toContain(res.body.error.param);
  });

  it.each([
    ['starting_after', 'garbage'],
    ['starting_after', 'ord_'],
    ['starting_after', 'ord_zzzzzzzzzzzzzzzzzzzzzzzzzz'],
    ['ending_before', 'evt_01jd8x3v0pe7wbz0m4k6f2n9qa'],
    ['ending_before', '12345'],
  ])('a malformed or wrong-prefix cursor %s=%s → 400 naming it', async (param, value) => {
    const res = await api.get(`/v1/payment-orders?${param}=${value}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'validation', code: 'parameter_invalid', param });
  });

  it.each([
    ['/v1/payment-orders', 'created[gte]', '0000-01-01T00:00:00Z'],
    ['/v1/events', 'created[lte]', '0000-06-01T00:00:00Z'],
    ['/v1/payment-orders', 'created[lte]', '9999-12-31T23:00:00-05:00'],
  ])('a timestamp the database cannot store (%s %s=%s) → 400 naming it, not a 500', async (path, param, value) => {
    const res = await api.get(`${path}?${param}=${encodeURIComponent(value)}`);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'validation', code: 'parameter_invalid', param });
    const earliest = await api.get(`${path}?${param}=${encodeURIComponent('0001-01-01T00:00:00Z')}`);
    expect(earliest.status, earliest.text).toBe(200);
  });

  it('a malformed cursor on events → 400 too', async () => {
    const res = await api.get(`/v1/events?starting_after=${orders[0].id}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'validation', code: 'parameter_invalid', param: 'starting_after' });
  });

  it('a well-formed cursor that matches no object pages from its position in time', async () => {
    const res = await api.get('/v1/payment-orders?starting_after=ord_01jd8x3v0pe7wbz0m4k6f2n9qa');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]); // an id from 2024: nothing of ours is older
  });
});

describe('lists: payment order filters', () => {
  it('status', async () => {
    const cancelled = await api.get('/v1/payment-orders?status=cancelled');
    expect(ids(cancelled.body)).toEqual([orders[4].id, orders[1].id]);
    const open = await api.get('/v1/payment-orders?status=open&limit=2');
    expect(ids(open.body)).toEqual([orders[6].id, orders[5].id]);
    expect(open.body.has_more).toBe(true);
    const paid = await api.get('/v1/payment-orders?status=paid');
    expect(paid.body).toEqual({ object: 'list', data: [], has_more: false });
    const bad = await api.get('/v1/payment-orders?status=opened');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'validation', code: 'parameter_invalid', param: 'status' });
  });

  it('reference (exact match), combined with status and pagination', async () => {
    const shared = await api.get(`/v1/payment-orders?reference=${SHARED_REFERENCE}`);
    expect(ids(shared.body)).toEqual([orders[6].id, orders[3].id, orders[0].id]);
    const page = await api.get(`/v1/payment-orders?reference=${SHARED_REFERENCE}&limit=1&starting_after=${orders[6].id}`);
    expect(ids(page.body)).toEqual([orders[3].id]);
    expect(page.body.has_more).toBe(true);
    const one = await api.get('/v1/payment-orders?reference=ref-4&status=cancelled');
    expect(ids(one.body)).toEqual([orders[4].id]);
    const none = await api.get('/v1/payment-orders?reference=ref-4&status=open');
    expect(none.body.data).toEqual([]);
    expect((await api.get('/v1/payment-orders?reference=ref')).body.data).toEqual([]);
    expect((await api.get('/v1/payment-orders?reference=REF-4')).body.data).toEqual([]);
    const tooLong = await api.get(`/v1/payment-orders?reference=${'r'.repeat(129)}`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ code: 'parameter_invalid', param: 'reference' });
  });

  it('created[gte] and created[lte], inclusive, alone or together', async () => {
    const at = (i: number) => orders[i].created_at as string;
    const expectIds = (pred: (createdAt: number) => boolean) =>
      newestFirst().filter((id) => pred(Date.parse(orders.find((o) => o.id === id).created_at)));
    const q = (s: string) => s.replace(/\[/g, '%5B').replace(/\]/g, '%5D');

    const gte = await api.get(q(`/v1/payment-orders?created[gte]=${at(4)}`));
    expect(gte.status).toBe(200);
    expect(ids(gte.body)).toEqual(expectIds((t) => t >= Date.parse(at(4))));
    expect(ids(gte.body)).toContain(orders[4].id);

    const lte = await api.get(q(`/v1/payment-orders?created[lte]=${at(2)}`));
    expect(ids(lte.body)).toEqual(expectIds((t) => t <= Date.parse(at(2))));
    expect(ids(lte.body)).toContain(orders[2].id);
    expect(ids(lte.body)).not.toContain(orders[3].id);

    const between = await api.get(q(`/v1/payment-orders?created[gte]=${at(2)}&created[lte]=${at(4)}`));
    expect(ids(between.body)).toEqual([orders[4].id, orders[3].id, orders[2].id]);

    const withStatus = await api.get(q(`/v1/payment-orders?created[gte]=${at(2)}&created[lte]=${at(4)}&status=open`));
    expect(ids(withStatus.body)).toEqual([orders[3].id, orders[2].id]);

    // Any RFC 3339 offset names the same instant.
    const offset = new Date(Date.parse(at(4)) + 2 * 3600 * 1000).toISOString().replace('Z', '+02:00');
    const viaOffset = await api.get(q(`/v1/payment-orders?created[gte]=${encodeURIComponent(offset)}`));
    expect(ids(viaOffset.body)).toEqual(ids(gte.body));

    const empty = await api.get(q(`/v1/payment-orders?created[gte]=${at(4)}&created[lte]=${at(2)}`));
    expect(empty.body.data).toEqual([]);
  });

  it.each(['yesterday', '2026-13-01T00:00:00Z', '2026-01-01', '1700000000', '2026-06-30T23:59:60Z'])(
    'created[gte]=%s → 400 naming the parameter',
    async (value) => {
      const res = await api.get(`/v1/payment-orders?created%5Bgte%5D=${encodeURIComponent(value)}`);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'validation', code: 'parameter_invalid', param: 'created[gte]' });
    },
  );
});

describe('lists: event type filter', () => {
  it('no filter and `*` list every event of the tenant, newest first', async () => {
    const all = await api.get('/v1/events?limit=100');
    expect(all.status).toBe(200);
    // 7 created + 2 cancelled
    expect(all.body.data).toHaveLength(9);
    const times = all.body.data.map((e: any) => Date.parse(e.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const star = await api.get('/v1/events?limit=100&type=*');
    expect(ids(star.body)).toEqual(ids(all.body));
  });

  it('`payment_order.*` matches every order event; an exact type only that type', async () => {
    const wildcard = await api.get('/v1/events?limit=100&type=payment_order.*');
    expect(wildcard.body.data).toHaveLength(9);
    for (const e of wildcard.body.data) expect(e.type).toMatch(/^payment_order\./);

    const cancelled = await api.get('/v1/events?type=payment_order.cancelled');
    expect(cancelled.body.data.map((e: any) => [e.type, e.data.object.id])).toEqual([
      ['payment_order.cancelled', orders[4].id],
      ['payment_order.cancelled', orders[1].id],
    ]);
    expect(cancelled.body.data[0].data.object).toEqual(orders[4]);

    const created = await api.get('/v1/events?type=payment_order.created&limit=100');
    expect(created.body.data.map((e: any) => e.data.object.id)).toEqual(newestFirst());
    for (const e of created.body.data) expect(e.type).toBe('payment_order.created');

    const suffix = await api.get('/v1/events?type=*.cancelled');
    expect(ids(suffix.body)).toEqual(ids(cancelled.body));
  });

  it('wildcards are the only pattern: `_`, `.` and prefixes are literal', async () => {
    // `payment.*` names payment events, not payment_order ones.
    expect((await api.get('/v1/events?type=payment.*')).body.data).toEqual([]);
    // `_` is not a one-character wildcard, `.` is not "any character".
    expect((await api.get('/v1/events?type=payment_order_created')).body.data).toEqual([]);
    expect((await api.get('/v1/events?type=payment_ordersx*')).body.data).toEqual([]);
    // A bare prefix without `*` is an exact type.
    expect((await api.get('/v1/events?type=payment_order')).body.data).toEqual([]);
    expect((await api.get('/v1/events?type=payment_order.')).body.data).toEqual([]);
  });

  it('type filter with pagination', async () => {
    const first = await api.get('/v1/events?type=payment_order.created&limit=4');
    expect(first.body.data).toHaveLength(4);
    expect(first.body.has_more).toBe(true);
    const second = await api.get(`/v1/events?type=payment_order.created&limit=4&starting_after=${first.body.data.at(-1).id}`);
    expect(second.body.data).toHaveLength(3);
    expect(second.body.has_more).toBe(false);
    expect([...ids(first.body), ...ids(second.body)].length).toBe(new Set([...ids(first.body), ...ids(second.body)]).size);
  });

  it.each(['PAYMENT_ORDER.*', 'payment order', "payment_order.created' OR 1=1", 'x'.repeat(101), ''])(
    'an invalid type pattern %j → 400 param type',
    async (type) => {
      const res = await api.get(`/v1/events?type=${encodeURIComponent(type)}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'validation', code: 'parameter_invalid', param: 'type' });
    },
  );
});
