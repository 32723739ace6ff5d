// Idempotency as API.md §4: scope account + mode + key, fingerprint = method + path + canonical
// body, byte-for-byte replay, 422 on reuse, 409 while in flight, nothing stored for 5xx/409/429,
// retention with a sweeper, and the record committing with the business rows.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../src/domain/accounts/service.js';
import { createPaymentOrder } from '../src/domain/payment-orders/service.js';
import { ApiError } from '../src/kernel/errors.js';
import { claimKey, fingerprint, releaseKey, setRecoveryPoint, storeFailure } from '../src/idempotency/store.js';
import type { RequestContext } from '../src/kernel/context.js';
import { newId, parseId } from '../src/kernel/ids.js';
import { runWorkerOnce } from '../src/worker/worker.js';
import {
  call,
  client,
  createTenant,
  createTestDatabase,
  orderBody,
  startTestService,
  type Tenant,
  type TestDatabase,
  type TestService,
} from './helpers.js';

let testDb: TestDatabase;
let service: TestService;
let tenant: Tenant;
let accountUuid: string;
let api: ReturnType<typeof client>;

const silent = pino({ level: 'silent' });
const SETTINGS = { retentionS: 24 * 3600, lockTimeoutS: 60 };

beforeAll(async () => {
  testDb = await createTestDatabase();
  service = await startTestService(testDb);
  tenant = await createTenant(testDb.database);
  accountUuid = parseId('acct', tenant.accountId)!;
  api = client(service.url, tenant.testKey);
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
});

type Row = Record<string, unknown>;
async function query(q: ReturnType<typeof sql>): Promise<Row[]> {
  return ((await testDb.database.db.execute(q)) as unknown as { rows: Row[] }).rows;
}
async function ordersWithReference(reference: string): Promise<Row[]> {
  return query(sql`SELECT id, livemode, account_id FROM payment_orders WHERE reference = ${reference}`);
}
async function eventCount(type: string, objectId: string): Promise<number> {
  const [row] = await query(sql`SELECT count(*)::int AS n FROM events WHERE type = ${type} AND object_id = ${objectId}`);
  return Number(row!.n);
}
async function keyRow(key: string, livemode = false, account = accountUuid): Promise<Row | undefined> {
  const [row] = await query(
    sql`SELECT *, extract(epoch FROM expires_at - created_at)::int AS retention_s
        FROM idempotency_keys WHERE account_id = ${account} AND livemode = ${livemode} AND key = ${key}`,
  );
  return row;
}
const newKey = () => `idem-${crypto.randomUUID()}`;
const create = (body: unknown, key: string, secret = tenant.testKey) =>
  call(service.url, 'POST', '/v1/payment-orders', { key: secret, body, idempotencyKey: key });

describe('idempotency: the header', () => {
  it('is required on money-moving POSTs and validated', async () => {
    const missing = await api.post('/v1/payment-orders', orderBody(), { idempotencyKey: undefined });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ type: 'validation', code: 'idempotency_key_missing' });

    for (const bad of ['x'.repeat(256), 'café']) {
      const res = await api.post('/v1/payment-orders', orderBody(), { headers: { 'idempotency-key': bad }, idempotencyKey: undefined });
      expect(res.status, bad).toBe(400);
      expect(res.body.error.code).toBe('idempotency_key_invalid');
    }
    const longest = await create(orderBody(), 'k'.repeat(255));
    expect(longest.status).toBe(201);
  });

  it('is optional on the other POSTs (cancel works without it)', async () => {
    const { body: order } = await create(orderBody(), newKey());
    const cancelled = await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: undefined });
    expect(cancelled.status).toBe(200);
  });
});

describe('idempotency: replay', () => {
  it('replays the stored answer byte-for-byte with Idempotent-Replayed: true and no second side effect', async () => {
    const key = newKey();
    const body = orderBody({ metadata: { cart: '7' } });
    const first = await create(body, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    // Keys in another order are the same canonical body, hence the same fingerprint.
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    for (const again of [body, reordered]) {
      const replay = await create(again, key);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(first.text);
      expect(replay.body.id).toBe(first.body.id);
      expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'));
      // A replay is a new request: its own request id, but the stored body.
      expect(replay.headers.get('request-id')).not.toBe(first.headers.get('request-id'));
    }

    const rows = await ordersWithReference(body.reference);
    expect(rows).toHaveLength(1);
    expect(await eventCount('payment_order.created', first.body.id)).toBe(1);

    const record = await keyRow(key);
    expect(record).toMatchObject({ response_status: 201, response_body: first.text, recovery_point: 'finished', locked_at: null });
    expect(record!.retention_s).toBe(24 * 3600);
  });

  it('is scoped by account and mode, not by API key', async () => {
    const key = newKey();
    const body = orderBody();
    const first = await create(body, key);
    expect(first.status).toBe(201);

    // Another test key of the same account shares the scope: replay.
    const second = await issueKey(testDb.database.db, tenant.accountId, { livemode: false });
    const sameScope = await create(body, key, second.secret);
    expect(sameScope.status).toBe(201);
    expect(sameScope.headers.get('idempotent-replayed')).toBe('true');
    expect(sameScope.text).toBe(first.text);

    // The other mode of the same account: a new order.
    const live = await create(body, key, tenant.liveKey);
    expect(live.status).toBe(201);
    expect(live.headers.get('idempotent-replayed')).toBeNull();
    expect(live.body).toMatchObject({ livemode: true });
    expect(live.body.id).not.toBe(first.body.id);

    // Another account: a new order too, even with a different body (nothing is shared).
    const other = await createTenant(testDb.database, 'Other tenant');
    const foreign = await create({ ...body, amount: 5 }, key, other.testKey);
    expect(foreign.status).toBe(201);
    expect(foreign.headers.get('idempotent-replayed')).toBeNull();
    expect(foreign.body.id).not.toBe(first.body.id);

    const rows = await ordersWithReference(body.reference);
    expect(rows).toHaveLength(3);
    // Each scope replays its own answer.
    expect((await create(body, key, tenant.liveKey)).text).toBe(live.text);
    expect((await create({ ...body, amount: 5 }, key, other.testKey)).text).toBe(foreign.text);
    expect((await create(body, key)).text).toBe(first.text);
  });

  it('answers 422 idempotency_key_reused for another body or another path, and keeps the original', async () => {
    const key = newKey();
    const body = orderBody();
    const first = await create(body, key);
    expect(first.status).toBe(201);

    const otherBody = await create({ ...body, amount: body.amount + 1 }, key);
    expect(otherBody.status).toBe(422);
    expect(otherBody.headers.get('idempotent-replayed')).toBeNull();
    expect(otherBody.body.error).toMatchObject({ type: 'validation', code: 'idempotency_key_reused' });
    expect(otherBody.body.error.request_id).toBe(otherBody.headers.get('request-id'));

    const otherPath = await api.post(`/v1/payment-orders/${first.body.id}/cancel`, undefined, { idempotencyKey: key });
    expect(otherPath.status).toBe(422);
    expect(otherPath.body.error.code).toBe('idempotency_key_reused');

    // Neither refusal touched the order or the stored answer.
    const order = await api.get(`/v1/payment-orders/${first.body.id}`);
    expect(order.body).toMatchObject({ status: 'open', version: 1 });
    const replay = await create(body, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(await ordersWithReference(body.reference)).toHaveLength(1);
  });

  it('honours a key on an optional POST: a cancel replays without a second transition or event', async () => {
    const { body: order } = await create(orderBody(), newKey());
    const key = newKey();
    const cancelled = await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', version: 2 });
    const again = await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: key });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(cancelled.text);
    expect(await eventCount('payment_order.cancelled', order.id)).toBe(1);
  });

  it('stores and replays a 4xx outcome of the work (cancel of a cancelled order, unknown order)', async () => {
    const { body: order } = await create(orderBody(), newKey());
    expect((await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: undefined })).status).toBe(200);

    const key = newKey();
    const refused = await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: key });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('invalid_state');
    expect(refused.headers.get('idempotent-replayed')).toBeNull();
    const replay = await api.post(`/v1/payment-orders/${order.id}/cancel`, undefined, { idempotencyKey: key });
    expect(replay.status).toBe(422);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(refused.text);
    expect(await keyRow(key)).toMatchObject({ response_status: 422, response_body: refused.text, locked_at: null });

    const missingKey = newKey();
    const unknownId = newId('ord').id;
    const notFound = await api.post(`/v1/payment-orders/${unknownId}/cancel`, undefined, { idempotencyKey: missingKey });
    expect(notFound.status).toBe(404);
    const notFoundAgain = await api.post(`/v1/payment-orders/${unknownId}/cancel`, undefined, { idempotencyKey: missingKey });
    expect(notFoundAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(notFoundAgain.text).toBe(notFound.text);
  });

  it('stores a refusal found while creating (expires_at in the past) and replays it; the one-statement create stores its answer', async () => {
    const key = newKey();
    const past = orderBody({ expires_at: new Date(Date.now() - 60_000).toISOString() });
    const refused = await create(past, key);
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe('expires_at');
    const replay = await create(past, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(refused.text);

    const okKey = newKey();
    const created = await create(orderBody(), okKey);
    expect(created.status).toBe(201);
    expect(await keyRow(okKey)).toMatchObject({ response_status: 201, response_body: created.text, locked_at: null, recovery_point: 'finished' });
    expect(await eventCount('payment_order.created', created.body.id)).toBe(1);
  });

  it('does not claim the key for a request refused before the work (validation error)', async () => {
    const key = newKey();
    const invalid = await create({ ...orderBody(), amount: -1 }, key);
    expect(invalid.status).toBe(400);
    expect(await keyRow(key)).toBeUndefined();
    const fixed = await create(orderBody(), key);
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('idempotency: concurrency and locks', () => {
  it('25 concurrent requests with one key create exactly one order; the others replay or get 409 with Retry-After', async () => {
    const key = newKey();
    const body = orderBody();
    const answers = await Promise.all(Array.from({ length: 25 }, () => create(body, key)));

    const created = answers.filter((a) => a.status === 201);
    const inUse = answers.filter((a) => a.status === 409);
    expect(created.length + inUse.length).toBe(25);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
    expect(new Set(created.map((a) => a.text)).size).toBe(1);
    expect(created.filter((a) => a.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    for (const a of inUse) {
      expect(a.body.error).toMatchObject({ type: 'processing', code: 'idempotency_key_in_use' });
      expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }

    const rows = await ordersWithReference(body.reference);
    expect(rows).toHaveLength(1);
    const orderId = created[0]!.body.id as string;
    expect(await eventCount('payment_order.created', orderId)).toBe(1);
    // The 409s stored nothing: the key holds the 201.
    const after = await create(body, key);
    expect(after.status).toBe(201);
    expect(after.body.id).toBe(orderId);
    expect(await keyRow(key)).toMatchObject({ response_status: 201 });
  });

  it('answers 409 idempotency_key_in_use while another request holds the key, and 422 for another body', async () => {
    const key = newKey();
    const body = orderBody();
    await query(sql`
      INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, locked_at, request_id, expires_at)
      VALUES (${accountUuid}, false, ${key}, ${fingerprint('POST', '/v1/payment-orders', body)}, now(), 'req_in_flight', now() + interval '1 day')`);
    const busy = await create(body, key);
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('idempotency_key_in_use');
    expect(busy.headers.get('retry-after')).toBe('1');
    const other = await create({ ...body, amount: 1 }, key);
    expect(other.status).toBe(422);
    expect(await ordersWithReference(body.reference)).toHaveLength(0);
    // Nothing was stored for the 409: the holder still owns the key.
    expect(await keyRow(key)).toMatchObject({ request_id: 'req_in_flight', response_status: null });
  });

  it('takes over a key whose holder stalled past the lock timeout', async () => {
    const key = newKey();
    const body = orderBody();
    await query(sql`
      INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, locked_at, request_id, expires_at)
      VALUES (${accountUuid}, false, ${key}, ${fingerprint('POST', '/v1/payment-orders', body)},
              now() - interval '1 hour', 'req_dead', now() + interval '1 day')`);
    const taken = await create(body, key);
    expect(taken.status).toBe(201);
    expect(taken.headers.get('idempotent-replayed')).toBeNull();
    expect(await ordersWithReference(body.reference)).toHaveLength(1);
    expect(await keyRow(key)).toMatchObject({ response_status: 201, request_id: taken.headers.get('request-id') });

    const replay = await create(body, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(taken.text);
  });

  it('commits the record with the business rows: a holder whose key was taken over rolls back', async () => {
    const key = newKey();
    const body = orderBody();
    const print = fingerprint('POST', '/v1/payment-orders', body);
    const db = testDb.database.db;
    const stalled: RequestContext = { accountId: accountUuid, livemode: false, requestId: newId('req').id };
    const claimA = await claimKey(db, stalled, key, print, SETTINGS);
    expect(claimA).toMatchObject({ kind: 'owner', claim: { key, recoveryPoint: 'started' } });
    stalled.idempotency = claimA.kind === 'owner' ? claimA.claim : undefined;

    // While the first holder stalls, a second request arrives: 409 until the lock times out.
    const retry: RequestContext = { accountId: accountUuid, livemode: false, requestId: newId('req').id };
    await expect(claimKey(db, retry, key, print, SETTINGS)).rejects.toMatchObject({ code: 'idempotency_key_in_use' });
    await query(sql`UPDATE idempotency_keys SET locked_at = now() - interval '2 minutes' WHERE key = ${key}`);
    const claimB = await claimKey(db, retry, key, print, SETTINGS);
    expect(claimB.kind).toBe('owner');
    retry.idempotency = claimB.kind === 'owner' ? claimB.claim : undefined;

    // The stalled holder wakes up and tries to finish: its whole transaction rolls back.
    const late = createPaymentOrder(db, stalled, body);
    await expect(late).rejects.toBeInstanceOf(ApiError);
    await expect(late).rejects.toMatchObject({ code: 'idempotency_key_in_use' });
    expect(await ordersWithReference(body.reference)).toHaveLength(0);
    const [events] = await query(sql`SELECT count(*)::int AS n FROM events WHERE data->'object'->>'reference' = ${body.reference}`);
    expect(events!.n).toBe(0);

    const outcome = await createPaymentOrder(db, retry, body);
    expect(outcome.status).toBe(201);
    expect(await ordersWithReference(body.reference)).toHaveLength(1);
    const replay = await create(body, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(outcome.body);
  });
});

describe('idempotency: what is not stored', () => {
  it('forgets the key after a 5xx, and the failed work left no rows behind', async () => {
    const key = newKey();
    const body = orderBody();
    // A database failure after the order row was written: the event insert fails for this reference.
    await query(sql.raw(`
      CREATE OR REPLACE FUNCTION idem_test_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'simulated database failure'; END $$`));
    await query(
      sql.raw(`CREATE TRIGGER idem_test_boom BEFORE INSERT ON events FOR EACH ROW
               WHEN (NEW.data->'object'->>'reference' = '${body.reference}') EXECUTE FUNCTION idem_test_boom()`),
    );
    try {
      const failed = await create(body, key);
      expect(failed.status).toBe(500);
      expect(failed.body.error).toMatchObject({ type: 'processing', code: 'internal_error' });
      expect(failed.text).not.toContain('simulated');
      expect(failed.text).not.toContain('INSERT');
      expect(await keyRow(key)).toBeUndefined();
      expect(await ordersWithReference(body.reference)).toHaveLength(0);

      const stillFailing = await create(body, key);
      expect(stillFailing.status).toBe(500);
      expect(stillFailing.headers.get('idempotent-replayed')).toBeNull();
    } finally {
      await query(sql`DROP TRIGGER idem_test_boom ON events`);
    }

    const retried = await create(body, key);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(await ordersWithReference(body.reference)).toHaveLength(1);
    // After a 5xx the key is free for any request, even another body.
    const key2 = newKey();
    await query(sql.raw(`CREATE TRIGGER idem_test_boom BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION idem_test_boom()`));
    try {
      expect((await create(orderBody(), key2)).status).toBe(500);
    } finally {
      await query(sql`DROP TRIGGER idem_test_boom ON events`);
    }
    expect((await create(orderBody({ amount: 1 }), key2)).status).toBe(201);
  });

  it('store level: releaseKey forgets an unstarted key, unlocks a started one at its recovery point; storeFailure replays', async () => {
    const db = testDb.database.db;
    const print = fingerprint('POST', '/v1/things', { a: 1 });
    const ctx = (): RequestContext => ({ accountId: accountUuid, livemode: false, requestId: newId('req').id });

    const fresh = newKey();
    const a = ctx();
    const claimA = await claimKey(db, a, fresh, print, SETTINGS);
    a.idempotency = claimA.kind === 'owner' ? claimA.claim : undefined;
    await releaseKey(db, a);
    expect(await keyRow(fresh)).toBeUndefined();

    const phased = newKey();
    const b = ctx();
    const claimB = await claimKey(db, b, phased, print, SETTINGS);
    b.idempotency = claimB.kind === 'owner' ? claimB.claim : undefined;
    await db.transaction((tx) => setRecoveryPoint(tx, b, 'local_record_created'));
    await releaseKey(db, b);
    expect(await keyRow(phased)).toMatchObject({ locked_at: null, response_status: null, recovery_point: 'local_record_created' });
    const resumed = await claimKey(db, ctx(), phased, print, SETTINGS);
    expect(resumed).toEqual({ kind: 'owner', claim: { key: phased, recoveryPoint: 'local_record_created' } });

    const refused = newKey();
    const c = ctx();
    const claimC = await claimKey(db, c, refused, print, SETTINGS);
    c.idempotency = claimC.kind === 'owner' ? claimC.claim : undefined;
    await storeFailure(db, c, { status: 422, body: '{"error":{"code":"x"}}' });
    expect(await claimKey(db, ctx(), refused, print, SETTINGS)).toEqual({
      kind: 'replay',
      outcome: { status: 422, body: '{"error":{"code":"x"}}' },
    });
  });
});

describe('idempotency: retention', () => {
  it('sweeps expired keys with the worker; a key past retention acts anew', async () => {
    const swept = newKey();
    const body = orderBody();
    const first = await create(body, swept);
    expect(first.status).toBe(201);
    const kept = newKey();
    expect((await create(orderBody(), kept)).status).toBe(201);

    await query(sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = ${swept}`);
    const done = await runWorkerOnce({ db: testDb.database.db, log: silent });
    expect(done.sweptKeys).toBeGreaterThanOrEqual(1);
    expect(await keyRow(swept)).toBeUndefined();
    expect(await keyRow(kept)).toMatchObject({ response_status: 201 });

    // Past retention the key is new: another body is accepted, and the same body acts again.
    const reused = await create({ ...body, amount: 42 }, swept);
    expect(reused.status).toBe(201);
    expect(reused.headers.get('idempotent-replayed')).toBeNull();
    expect(reused.body.id).not.toBe(first.body.id);
  });

  it('treats an expired key that was not swept yet as new', async () => {
    const key = newKey();
    const body = orderBody();
    const first = await create(body, key);
    await query(sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = ${key}`);
    const again = await create(body, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.id).not.toBe(first.body.id);
    expect(await ordersWithReference(body.reference)).toHaveLength(2);
    const row = await keyRow(key);
    expect(row).toMatchObject({ response_status: 201 });
    expect(row!.retention_s).toBe(24 * 3600);
  });

  it('uses the configured retention', async () => {
    const short = await startTestService(testDb, { idempotencyRetentionS: 60 });
    try {
      const key = newKey();
      const res = await call(short.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, body: orderBody(), idempotencyKey: key });
      expect(res.status).toBe(201);
      expect((await keyRow(key))!.retention_s).toBe(60);
    } finally {
      await short.close();
    }
  });
});
