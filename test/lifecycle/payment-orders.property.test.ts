// Property tests for POST /v1/payment-orders: whatever JSON arrives, the answer is 201 or a typed
// 4xx validation error — never a 5xx — and a created order holds exactly what was sent.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { CURRENCY_CODES, MAX_AMOUNT } from '../../src/kernel/currencies.js';
import { ERROR_CATALOGUE } from '../../src/kernel/errors.js';
import { isPostgres, orderBody, type ApiResponse } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';

const h = useService();
const { api } = h;

/**
 * Bodies naming a customer by id are built before any customer exists: they carry these tokens,
 * replaced by a real customer's id (ours) or another account's just before sending.
 */
const OWN_CUSTOMER = '{own customer}';
const FOREIGN_CUSTOMER = '{foreign customer}';
const OWN_CUSTOMER_FIELDS = { email: 'named@example.com', name: 'Named Customer' };
const customers: Record<string, string> = {};
beforeAll(async () => {
  customers[OWN_CUSTOMER] = (await api.post('/v1/customers', OWN_CUSTOMER_FIELDS)).body.id;
  customers[FOREIGN_CUSTOMER] = (await (await h.newTenant()).api.post('/v1/customers', { email: 'x@example.com' })).body.id;
});
/** `body` as sent: a customer token replaced by its id. */
function withCustomers<T>(body: T): T {
  const customer = (body as { customer?: { id?: unknown } } | null)?.customer;
  if (customer && typeof customer === 'object' && typeof customer.id === 'string' && customers[customer.id]) {
    return { ...body, customer: { ...customer, id: customers[customer.id] } };
  }
  return body;
}

const RUNS = 150;
const DAY = 24 * 3600 * 1000;
const VALIDATION_CODES = Object.entries(ERROR_CATALOGUE)
  .filter(([, entry]) => entry.type === 'validation')
  .map(([code]) => code);

/** The answer is a 201, or a 4xx with the typed validation body; returns true for a 201. */
function expectCreatedOrTyped4xx(res: ApiResponse, sent: string): boolean {
  const context = `sent ${sent}\ngot ${res.status} ${res.text}`;
  expect(res.status, context).toBeLessThan(500);
  expect(res.headers.get('content-type'), context).toMatch(/^application\/json\b/);
  if (res.status === 201) return true;
  expect(res.status, context).toBeGreaterThanOrEqual(400);
  expect(res.body?.error, context).toBeDefined();
  expect(res.body.error.type, context).toBe('validation');
  expect(VALIDATION_CODES, context).toContain(res.body.error.code);
  expect(res.body.error.request_id, context).toBe(res.headers.get('request-id'));
  return false;
}

/** A 201's order, read back, equals what was sent (and the defaults where nothing was). */
async function expectStoredAsSent(created: ApiResponse, sent: Record<string, any>) {
  const fetched = await api.get(`/v1/payment-orders/${created.body.id}`);
  expect(fetched.status).toBe(200);
  expect(fetched.body).toEqual(created.body);
  const order = fetched.body;
  expect(order).toMatchObject({ object: 'payment_order', livemode: false, status: 'open', amount_paid: 0, version: 1 });
  expect({
    amount: order.amount,
    currency: order.currency,
    reference: order.reference,
    customer: order.customer,
    description: order.description,
    metadata: order.metadata,
  }).toEqual({
    amount: sent.amount,
    currency: sent.currency,
    reference: sent.reference,
    customer: sent.customer.id === undefined ? { id: null, email: sent.customer.email, name: sent.customer.name ?? null } : { id: sent.customer.id, ...OWN_CUSTOMER_FIELDS },
    description: sent.description ?? null,
    metadata: sent.metadata ?? {},
  });
  if (sent.expires_at === undefined) expect(Date.parse(order.expires_at) - Date.parse(order.created_at)).toBe(DAY);
  else expect(Date.parse(order.expires_at)).toBe(Date.parse(sent.expires_at));
}

// ---- arbitraries -------------------------------------------------------------------------------

const ABSENT = Symbol('absent');
type Field = fc.Arbitrary<unknown>;

/** Mostly valid, sometimes invalid, sometimes any JSON at all, sometimes left out. */
function mixed(valid: Field, invalid: Field, absentWeight: number): Field {
  return fc.oneof(
    { weight: 10, arbitrary: valid },
    { weight: 1, arbitrary: invalid },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2, stringUnit: 'binary' }) },
    { weight: absentWeight, arbitrary: fc.constant(ABSENT) },
  );
}

const text = (min: number, max: number) => fc.string({ minLength: min, maxLength: max, unit: 'grapheme' });
/**
 * Text salted with what databases and JSON encoders trip on: NUL, lone surrogates, separators,
 * quotes. On PGlite a leading U+FEFF is left out: its driver drops it when reading a text column
 * (see the known-limitation test below).
 */
const hostileText = (min: number, max: number) =>
  fc
    .string({
    minLength: min,
    maxLength: max,
    unit: fc.oneof(
      fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '\u2028', '\u2029', '\ufeff', '\uffff', '"', '\\', "'", '%', '_', '\n'),
      fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }),
      fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme' }),
    ),
  })
    .filter((value) => isPostgres || !value.startsWith('\ufeff'));
const validEmail = fc.oneof(
  fc.constantFrom('jane@example.com', 'j.doe+orders@mail.example.co.uk', 'X_Y-Z@sub-domain.example.org', "o'brien@example.ie"),
  fc
    .tuple(fc.stringMatching(/^[a-z0-9]{1,8}(?:[._+-][a-z0-9]{1,8}){0,2}$/), fc.stringMatching(/^[a-z](?:[a-z0-9-]{0,10}[a-z0-9])?$/))
    .map(([local, host]) => `${local}@${host}.com`),
);
// `__proto__` is refused as a key anywhere in a body (prototype-pollution guard, see test/api/errors.test.ts).
const validMetadata = fc.dictionary(text(1, 40).filter((key) => key !== '__proto__'), text(0, 500), { maxKeys: 8 });
const futureTimestamp = fc.integer({ min: 60_000, max: 30 * DAY - 60_000 }).map((ms) => new Date(Date.now() + ms).toISOString());

const fields: Record<string, Field> = {
  amount: mixed(
    fc.oneof(fc.integer({ min: 1, max: MAX_AMOUNT }), fc.constantFrom(1, MAX_AMOUNT)),
    fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: MAX_AMOUNT + 1, max: Number.MAX_SAFE_INTEGER }), fc.double({ noInteger: true }), fc.string().map(String), fc.constant(null)),
    1,
  ),
  currency: mixed(
    fc.constantFrom(...CURRENCY_CODES),
    fc.oneof(fc.constantFrom('eur', 'XXX', 'EURO', '', 'EU', 'XAU'), fc.string({ maxLength: 4 }), fc.integer()),
    1,
  ),
  reference: mixed(text(1, 128), fc.oneof(fc.constant(''), fc.string({ minLength: 129, maxLength: 200 }), hostileText(1, 20), fc.integer()), 1),
  customer: mixed(
    fc.oneof(
      { weight: 4, arbitrary: fc.record({ email: validEmail, name: text(1, 256) }, { requiredKeys: ['email'] }) },
      { weight: 1, arbitrary: fc.constant({ id: OWN_CUSTOMER }) },
    ),
    fc.oneof(
      fc.record({ email: fc.string(), name: fc.jsonValue() }, { requiredKeys: [] }),
      fc.constantFrom({ id: FOREIGN_CUSTOMER }, { id: 'cus_01h455vb4pex5vsknk084sn02q' }, { id: 'ord_01h455vb4pex5vsknk084sn02q' }, { id: OWN_CUSTOMER, email: 'a@example.com' }, { id: '' }),
      fc.record({ id: fc.jsonValue(), name: text(1, 20) }, { requiredKeys: [] }),
      fc.record({ email: validEmail, name: hostileText(1, 20) }),
      fc.record({ email: validEmail, extra: fc.string() }),
      fc.string(),
    ),
    1,
  ),
  description: mixed(text(0, 1000), fc.oneof(fc.string({ minLength: 1001, maxLength: 1100 }), hostileText(0, 20), fc.integer(), fc.constant(null)), 8),
  metadata: mixed(
    validMetadata,
    fc.oneof(
      fc.dictionary(fc.string({ maxLength: 50, unit: 'binary' }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 55 }),
      fc.dictionary(hostileText(1, 10), hostileText(0, 10), { minKeys: 1, maxKeys: 3 }),
      fc.array(fc.string(), { maxLength: 3 }),
    ),
    8,
  ),
  expires_at: mixed(
    futureTimestamp,
    fc.oneof(
      fc.integer({ min: -365 * DAY, max: 365 * DAY }).map((ms) => new Date(Date.now() + ms).toISOString()),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      fc.string(),
      fc.integer(),
    ),
    8,
  ),
};

/** A body built field by field, with now and then a few unknown keys thrown in. */
const mixedBody = fc
  .tuple(
    fc.record(fields),
    fc.oneof({ weight: 5, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 1 }), { minKeys: 1, maxKeys: 2 }) }),
  )
  .map(([record, extra]) => {
    const body: Record<string, unknown> = { ...extra };
    for (const [key, value] of Object.entries(record)) if (value !== ABSENT) body[key] = value;
    return body;
  });

/** Always valid: every field within its rules. */
const validBody = fc.record(
  {
    amount: fc.integer({ min: 1, max: MAX_AMOUNT }),
    currency: fc.constantFrom(...CURRENCY_CODES),
    reference: text(1, 128),
    customer: fc.record({ email: validEmail, name: text(1, 256) }, { requiredKeys: ['email'] }),
    description: text(0, 1000),
    metadata: validMetadata,
    expires_at: futureTimestamp,
  },
  { requiredKeys: ['amount', 'currency', 'reference', 'customer'] },
);

// ---- properties --------------------------------------------------------------------------------

describe('payment orders: properties of POST /v1/payment-orders', () => {
  it('any JSON value as the body → 201 or a typed 4xx, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue({ stringUnit: 'binary' }),
          fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 8 }),
        ),
        async (body) => {
          const rawBody = JSON.stringify(body);
          const res = await api.post('/v1/payment-orders', undefined, { rawBody });
          if (expectCreatedOrTyped4xx(res, rawBody)) await expectStoredAsSent(res, body as Record<string, any>);
        },
      ),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('bodies mixing valid, invalid and unknown fields → 201 holding what was sent, or a typed 4xx', async () => {
    let created = 0;
    await fc.assert(
      fc.asyncProperty(mixedBody, async (drawn) => {
        const body = withCustomers(drawn);
        const rawBody = JSON.stringify(body);
        const res = await api.post('/v1/payment-orders', undefined, { rawBody });
        if (expectCreatedOrTyped4xx(res, rawBody)) {
          created++;
          await expectStoredAsSent(res, body);
        } else if (res.body.error.param !== undefined) {
          // A param always names a field of the body (or one the body lacks).
          // (Unknown keys are named as sent, dots and all.)
          const param: string = res.body.error.param;
          const top = param.split('.')[0]!;
          expect(param in body || top in body || Object.keys(fields).includes(top), `param ${param} for ${rawBody}`).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
    // The success path was exercised, not just rejections.
    expect(created).toBeGreaterThan(5);
  }, 120_000);

  it('any text in a text field → 201 stored exactly, or 400 parameter_invalid naming that field', async () => {
    const TEXT_FIELDS = ['reference', 'description', 'customer.name', 'metadata.note', 'metadata.key'] as const;
    await fc.assert(
      fc.asyncProperty(validBody, fc.constantFrom(...TEXT_FIELDS), hostileText(1, 24), async (base, field, value) => {
        const body: Record<string, any> = { ...base, customer: { ...base.customer }, metadata: { ...base.metadata } };
        if (field === 'reference' || field === 'description') body[field] = value;
        else if (field === 'customer.name') body.customer.name = value;
        else if (field === 'metadata.note') body.metadata = { note: value };
        else body.metadata = { [value]: 'v' };
        const rawBody = JSON.stringify(body);
        const res = await api.post('/v1/payment-orders', undefined, { rawBody });
        if (expectCreatedOrTyped4xx(res, rawBody)) {
          await expectStoredAsSent(res, body);
        } else {
          expect(res.status, res.text).toBe(400);
          // A key may be refused by the JSON parser (`__proto__`) or named through its parent.
          if (res.body.error.code !== 'body_invalid_json') {
            expect(res.body.error.code, res.text).toBe('parameter_invalid');
            expect(field.startsWith(res.body.error.param), res.text).toBe(true);
          }
        }
      }),
      { numRuns: RUNS },
    );
  }, 120_000);

  // PGlite's driver decodes each text field with a default TextDecoder, which drops a leading
  // U+FEFF as if it were a byte-order mark. PostgreSQL keeps it. Expected to fail on PGlite until
  // the driver is fixed (then this test reports the surprise, and the filter above can go).
  (isPostgres ? it : it.fails)('a leading U+FEFF in a text field survives the round trip', async () => {
    const body = orderBody({ reference: '\ufeffref', description: '\ufeff', customer: { email: 'jane@example.com', name: '\ufeffJane' } });
    const res = await api.post('/v1/payment-orders', body);
    expect(res.status).toBe(201);
    await expectStoredAsSent(res, body);
  });

  it('valid bodies → always 201, stored exactly as sent', async () => {
    await fc.assert(
      fc.asyncProperty(validBody, async (body) => {
        const rawBody = JSON.stringify(body);
        const res = await api.post('/v1/payment-orders', undefined, { rawBody });
        expect(res.status, `sent ${rawBody}\ngot ${res.text}`).toBe(201);
        await expectStoredAsSent(res, body);
      }),
      { numRuns: 100 },
    );
  }, 120_000);
});
