// Every validation rule of POST /v1/payment-orders, one row each: what is sent, and the status,
// type, code and param of the answer (or 201 for the boundary values that must pass).
import { describe, expect, it } from 'vitest';
import { orderBody } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';

const { api } = useService();

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

/** A valid body with `path` (dot-separated) set to `value`, or removed when value is ABSENT. */
const ABSENT = Symbol('absent');
function bodyWith(path: string, value: unknown): Record<string, unknown> {
  const body: Record<string, any> = orderBody();
  const keys = path.split('.');
  let target = body;
  for (const key of keys.slice(0, -1)) target = target[key] = { ...target[key] };
  const last = keys[keys.length - 1]!;
  if (value === ABSENT) delete target[last];
  else target[last] = value;
  return body;
}

const metadata = (entries: number, key = (i: number) => `key_${i}`, value = 'v') =>
  Object.fromEntries(Array.from({ length: entries }, (_, i) => [key(i), value]));

type Row = [label: string, field: string, value: unknown, code: 'parameter_missing' | 'parameter_invalid', param: string];

const INVALID: Row[] = [
  // amount: integer in the minor unit, 1 ≤ amount ≤ 99 999 999 999
  ['amount missing', 'amount', ABSENT, 'parameter_missing', 'amount'],
  ['amount 0', 'amount', 0, 'parameter_invalid', 'amount'],
  ['amount -1', 'amount', -1, 'parameter_invalid', 'amount'],
  ['amount 1.5', 'amount', 1.5, 'parameter_invalid', 'amount'],
  ['amount "100"', 'amount', '100', 'parameter_invalid', 'amount'],
  ['amount 100000000000', 'amount', 100_000_000_000, 'parameter_invalid', 'amount'],
  ['amount null', 'amount', null, 'parameter_invalid', 'amount'],
  ['amount true', 'amount', true, 'parameter_invalid', 'amount'],
  // currency: upper-case ISO 4217 code from the active list
  ['currency missing', 'currency', ABSENT, 'parameter_missing', 'currency'],
  ['currency "eur"', 'currency', 'eur', 'parameter_invalid', 'currency'],
  ['currency "XXX"', 'currency', 'XXX', 'parameter_invalid', 'currency'],
  ['currency "EURO"', 'currency', 'EURO', 'parameter_invalid', 'currency'],
  ['currency 123', 'currency', 123, 'parameter_invalid', 'currency'],
  ['currency ""', 'currency', '', 'parameter_invalid', 'currency'],
  ['currency fund code "CLF"', 'currency', 'CLF', 'parameter_invalid', 'currency'],
  // reference: 1..128
  ['reference missing', 'reference', ABSENT, 'parameter_missing', 'reference'],
  ['reference ""', 'reference', '', 'parameter_invalid', 'reference'],
  ['reference of 129 characters', 'reference', 'r'.repeat(129), 'parameter_invalid', 'reference'],
  ['reference 42', 'reference', 42, 'parameter_invalid', 'reference'],
  // customer: email required and valid, name optional
  ['customer missing', 'customer', ABSENT, 'parameter_missing', 'customer'],
  ['customer a string', 'customer', 'jane@example.com', 'parameter_invalid', 'customer'],
  ['customer.email missing', 'customer.email', ABSENT, 'parameter_missing', 'customer.email'],
  ['customer.email "jane"', 'customer.email', 'jane', 'parameter_invalid', 'customer.email'],
  ['customer.email "jane@"', 'customer.email', 'jane@', 'parameter_invalid', 'customer.email'],
  ['customer.email "@example.com"', 'customer.email', '@example.com', 'parameter_invalid', 'customer.email'],
  ['customer.email with a space', 'customer.email', 'jane doe@example.com', 'parameter_invalid', 'customer.email'],
  ['customer.email 42', 'customer.email', 42, 'parameter_invalid', 'customer.email'],
  ['customer.name 42', 'customer.name', 42, 'parameter_invalid', 'customer.name'],
  ['customer.name null', 'customer.name', null, 'parameter_invalid', 'customer.name'],
  ['customer.name {}', 'customer.name', {}, 'parameter_invalid', 'customer.name'],
  // description: at most 1000
  ['description of 1001 characters', 'description', 'd'.repeat(1001), 'parameter_invalid', 'description'],
  ['description 42', 'description', 42, 'parameter_invalid', 'description'],
  // metadata: ≤ 50 keys, key 1..40, value ≤ 500, string values only
  ['metadata with 51 keys', 'metadata', metadata(51), 'parameter_invalid', 'metadata'],
  ['metadata key of 41 characters', 'metadata', { ['k'.repeat(41)]: 'v' }, 'parameter_invalid', 'metadata'],
  ['metadata empty key', 'metadata', { '': 'v' }, 'parameter_invalid', 'metadata'],
  ['metadata value of 501 characters', 'metadata', { note: 'v'.repeat(501) }, 'parameter_invalid', 'metadata.note'],
  ['metadata number value', 'metadata', { count: 3 }, 'parameter_invalid', 'metadata.count'],
  ['metadata null value', 'metadata', { gone: null }, 'parameter_invalid', 'metadata.gone'],
  ['metadata nested object value', 'metadata', { nested: { a: 'b' } }, 'parameter_invalid', 'metadata.nested'],
  ['metadata an array', 'metadata', ['a'], 'parameter_invalid', 'metadata'],
  // Keys holding a line break get the same value rules as any other key.
  ['metadata number value under a key with a line break', 'metadata', { 'line\nbreak': 3 }, 'parameter_invalid', 'metadata.line\nbreak'],
  ['metadata value of 501 characters under a key with \\r', 'metadata', { 'cr\r': 'v'.repeat(501) }, 'parameter_invalid', 'metadata.cr\r'],
  ['metadata object value under a key with U+2028', 'metadata', { 'ls\u2028': {} }, 'parameter_invalid', 'metadata.ls\u2028'],
  // expires_at: a date-time, in the future, at most 30 days ahead
  ['expires_at in the past', 'expires_at', inMs(-HOUR), 'parameter_invalid', 'expires_at'],
  ['expires_at more than 30 days ahead', 'expires_at', inMs(30 * DAY + HOUR), 'parameter_invalid', 'expires_at'],
  ['expires_at not a date', 'expires_at', 'tomorrow', 'parameter_invalid', 'expires_at'],
  ['expires_at a date without time', 'expires_at', '2030-01-01', 'parameter_invalid', 'expires_at'],
  ['expires_at without time zone', 'expires_at', inMs(DAY).replace('Z', ''), 'parameter_invalid', 'expires_at'],
  ['expires_at a leap second', 'expires_at', `${inMs(2 * DAY).slice(0, 10)}T23:59:60Z`, 'parameter_invalid', 'expires_at'],
  ['expires_at unix seconds', 'expires_at', Math.floor(Date.now() / 1000) + 3600, 'parameter_invalid', 'expires_at'],
];

describe('payment orders: validation', () => {
  it.each(INVALID)('%s → 400 %s', async (_label, field, value, code, param) => {
    const res = await api.post('/v1/payment-orders', bodyWith(field, value));
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'validation', code, param });
    expect(res.body.error.message).toContain(param.split('.')[0]);
  });

  it('a metadata key that is too long is named in the message', async () => {
    const key = 'k'.repeat(41);
    const res = await api.post('/v1/payment-orders', bodyWith('metadata', { [key]: 'v' }));
    expect(res.body.error.message).toContain(key);
  });

  const VALID: [label: string, field: string, value: unknown][] = [
    ['amount 1', 'amount', 1],
    ['amount 99999999999', 'amount', 99_999_999_999],
    ['currency JPY', 'currency', 'JPY'],
    ['currency KWD', 'currency', 'KWD'],
    ['reference of 1 character', 'reference', 'r'],
    ['reference of 128 characters', 'reference', 'r'.repeat(128)],
    ['customer without name', 'customer', { email: 'jane@example.com' }],
    ['description of 1000 characters', 'description', 'd'.repeat(1000)],
    ['description empty', 'description', ''],
    ['metadata with 50 keys', 'metadata', metadata(50)],
    ['metadata key of 40 characters, value of 500', 'metadata', { ['k'.repeat(40)]: 'v'.repeat(500) }],
    ['metadata empty', 'metadata', {}],
    ['metadata keys with line breaks', 'metadata', { 'a\n': 'x', 'b\r\n': 'y', 'c\u2028\u2029': 'z' }],
    ['expires_at in one minute', 'expires_at', inMs(60_000)],
    ['expires_at in 30 days less a minute', 'expires_at', inMs(30 * DAY - 60_000)],
  ];

  it.each(VALID)('%s → 201', async (_label, field, value) => {
    const body = bodyWith(field, value);
    const res = await api.post('/v1/payment-orders', body);
    expect(res.status, res.text).toBe(201);
    const path = field.split('.');
    let stored: any = res.body;
    for (const key of path) stored = stored[key];
    if (field === 'expires_at') expect(Date.parse(stored)).toBe(Date.parse(value as string));
    else if (field === 'customer') expect(stored).toEqual({ id: null, name: null, ...(value as object) });
    else expect(stored).toEqual(value);
    // Read back, the order is the same as the one answered at creation.
    const fetched = await api.get(`/v1/payment-orders/${res.body.id}`);
    expect(fetched.body).toEqual(res.body);
  });
});

describe('payment orders: Idempotency-Key', () => {
  it('missing → 400 idempotency_key_missing, and nothing is created', async () => {
    const body = orderBody();
    const res = await api.post('/v1/payment-orders', body, { idempotencyKey: undefined });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'validation', code: 'idempotency_key_missing' });
    const list = await api.get(`/v1/payment-orders?reference=${encodeURIComponent(body.reference)}`);
    expect(list.body.data).toEqual([]);
  });

  it.each([
    ['of 256 characters', 'k'.repeat(256)],
    ['empty', ''],
    ['with a space', 'my key'],
    ['with a tab', 'my\tkey'],
    ['with a non-ASCII character', 'clé-42'],
    ['of only a space (arrives empty)', ' '],
  ])('%s → 400 idempotency_key_invalid', async (_label, key) => {
    const res = await api.post('/v1/payment-orders', orderBody(), { headers: { 'idempotency-key': key }, idempotencyKey: undefined });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'validation', code: 'idempotency_key_invalid' });
  });

  it.each([
    ['of 1 character', 'k'],
    ['of 255 characters', 'k'.repeat(255)],
    ['of every visible ASCII character', Array.from({ length: 94 }, (_, i) => String.fromCharCode(0x21 + i)).join('')],
  ])('%s → accepted', async (_label, key) => {
    const res = await api.post('/v1/payment-orders', orderBody(), { idempotencyKey: key });
    expect(res.status, res.text).toBe(201);
  });
});
