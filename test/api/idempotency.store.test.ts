// Idempotency as docs/api-conventions.md describes it, under stress: 409 while in flight and concurrent twins, a stalled
// holder taken over (its transaction rolled back with the record), nothing stored for 5xx, the
// store's own release and failure records, and retention with the worker's sweeper.
import { sql, type SQL } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createPaymentOrder } from '../../src/domain/payment-orders/service.js';
import { ApiError } from '../../src/kernel/errors.js';
import { claimKey, fingerprint, releaseKey, setRecoveryPoint, storeFailure } from '../../src/idempotency/store.js';
import type { RequestContext } from '../../src/kernel/context.js';
import { newId } from '../../src/kernel/ids.js';
import { call, orderBody } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';
import { SETTINGS, newKey, idempotencyKit } from '../support/idempotency.js';


const h = useService();
const { accountUuid, ordersWithReference, eventCount, keyRow, create } = idempotencyKit(h);
const query = (q: SQL) => h.query(q);

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
      VALUES (${accountUuid()}, false, ${key}, ${fingerprint('POST', '/v1/payment-orders', body)}, now(), 'req_in_flight', now() + interval '1 day')`);
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
      VALUES (${accountUuid()}, false, ${key}, ${fingerprint('POST', '/v1/payment-orders', body)},
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
    const db = h.db;
    const stalled: RequestContext = { accountId: accountUuid(), livemode: false, requestId: newId('req').id };
    const claimA = await claimKey(db, stalled, key, print, SETTINGS);
    expect(claimA).toMatchObject({ kind: 'owner', claim: { key, recoveryPoint: 'started' } });
    stalled.idempotency = claimA.kind === 'owner' ? claimA.claim : undefined;

    // While the first holder stalls, a second request arrives: 409 until the lock times out.
    const retry: RequestContext = { accountId: accountUuid(), livemode: false, requestId: newId('req').id };
    await expect(claimKey(db, retry, key, print, SETTINGS)).rejects.toMatchObject({ code: 'idempotency_key_in_use' });
    await query(sql`UPDATE idempotency_keys SET locked_at = now() - interval '2 minutes' WHERE key = ${key}`);
    const claimB = await claimKey(db, retry, key, print, SETTINGS);
    expect(claimB.kind).toBe('owner');
    retry.idempotency = claimB.kind === 'owner' ? claimB.claim : undefined;

    // The stalled holder wakes up and tries to finish: its whole transaction rolls back.
    const late = createPaymentOrder(db, stalled, body, 'http://127.0.0.1');
    await expect(late).rejects.toBeInstanceOf(ApiError);
    await expect(late).rejects.toMatchObject({ code: 'idempotency_key_in_use' });
    expect(await ordersWithReference(body.reference)).toHaveLength(0);
    const [events] = await query(sql`SELECT count(*)::int AS n FROM events WHERE data->'object'->>'reference' = ${body.reference}`);
    expect(events!.n).toBe(0);

    const outcome = await createPaymentOrder(db, retry, body, 'http://127.0.0.1');
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
    const db = h.db;
    const print = fingerprint('POST', '/v1/things', { a: 1 });
    const ctx = (): RequestContext => ({ accountId: accountUuid(), livemode: false, requestId: newId('req').id });

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
    const done = await h.service.runWorker();
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
    const short = await h.startService({ overrides: { idempotencyRetentionS: 60 } });
    try {
      const key = newKey();
      const res = await call(short.url, 'POST', '/v1/payment-orders', { key: h.tenant.testKey, body: orderBody(), idempotencyKey: key });
      expect(res.status).toBe(201);
      expect((await keyRow(key))!.retention_s).toBe(60);
    } finally {
      await short.close();
    }
  });
});
