// Concurrent order creates share one statement (src/storage/coalesce.ts, used by
// src/domain/payment-orders/one-statement.ts): what each request gets back and what is stored must
// be exactly what it would be alone — one order per key, replays byte for byte, a bad row failing
// only its own request — while many orders really do commit together.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import crypto from 'node:crypto';
import { coalesce } from '../../src/storage/coalesce.js';
import { tryCreatePaymentOrderAtOnce } from '../../src/domain/payment-orders/service.js';
import { orderBody } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';
import { parseId } from '../../src/kernel/ids.js';
import type { RequestContext } from '../../src/kernel/context.js';
import { isDatabaseUnavailable } from '../../src/kernel/outage.js';

const h = useService();
const { api } = h;

describe('the batching queue', () => {
  const deferred = () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    return { gate, release };
  };

  it('keeps at most maxInFlight batches running, batches what waits, and answers each call its own output', async () => {
    const batches: number[][] = [];
    const gates: Array<() => void> = [];
    let running = 0;
    let mostRunning = 0;
    const call = coalesce<number, number>({
      async run(batch) {
        batches.push(batch);
        running++;
        mostRunning = Math.max(mostRunning, running);
        const { gate, release } = deferred();
        gates.push(release);
        await gate;
        running--;
        return batch.map((x) => x * 10);
      },
      key: String,
      group: () => 'one',
      maxInFlight: 2,
      maxBatch: 5,
    });
    const first = [call(1), call(2)];
    await new Promise((r) => setImmediate(r));
    // Both went at once, together; the next calls wait for a free slot.
    expect(batches).toEqual([[1, 2]]);
    const second = [call(3)];
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[1, 2], [3]]);
    const rest = [4, 5, 6, 7, 8, 9, 10].map(call);
    await new Promise((r) => setImmediate(r));
    expect(batches).toHaveLength(2);
    gates[0]!();
    expect(await Promise.all(first)).toEqual([10, 20]);
    await new Promise((r) => setImmediate(r));
    expect(batches[2]).toEqual([4, 5, 6, 7, 8]);
    gates[1]!();
    gates[2]!();
    await new Promise((r) => setImmediate(r));
    gates[3]!();
    expect(await Promise.all([...second, ...rest])).toEqual([30, 40, 50, 60, 70, 80, 90, 100]);
    expect(batches[3]).toEqual([9, 10]);
    expect(mostRunning).toBe(2);
  });

  it('never puts two calls with one key in a batch: the later waits for the earlier\'s answer', async () => {
    const batches: string[][] = [];
    const seen: string[] = [];
    const call = coalesce<string, string>({
      async run(batch) {
        batches.push(batch);
        seen.push(`start ${batch.join(' ')}`);
        await new Promise((r) => setTimeout(r, 5));
        seen.push(`end ${batch.join(' ')}`);
        return batch;
      },
      key: (x) => x.split('#')[0]!,
      group: () => 'one',
      // Slots to spare: only the key holds a#2 back.
      maxInFlight: 4,
      maxBatch: 10,
    });
    expect(await Promise.all(['a#1', 'b#1', 'a#2', 'c#1', 'a#3'].map(call))).toEqual(['a#1', 'b#1', 'a#2', 'c#1', 'a#3']);
    expect(batches).toEqual([['a#1', 'b#1', 'c#1'], ['a#2'], ['a#3']]);
    expect(seen).toEqual(['start a#1 b#1 c#1', 'end a#1 b#1 c#1', 'start a#2', 'end a#2', 'start a#3', 'end a#3']);
  });

  it('puts only calls of one group in a batch', async () => {
    const batches: string[][] = [];
    const call = coalesce<string, string>({
      run: async (batch) => (batches.push(batch), batch),
      key: String,
      group: (x) => x[0]!,
      maxInFlight: 1,
      maxBatch: 10,
    });
    await Promise.all(['a1', 'b1', 'a2', 'b2', 'a3'].map(call));
    expect(batches).toEqual([['a1', 'a2', 'a3'], ['b1', 'b2']]);
  });

  it('a failed batch runs each call alone, within the limit of batches in flight: each gets its own answer or its own error', async () => {
    const batches: number[][] = [];
    let running = 0;
    let mostRunning = 0;
    const call = coalesce<number, number>({
      async run(batch) {
        batches.push(batch);
        mostRunning = Math.max(mostRunning, ++running);
        await new Promise((r) => setTimeout(r, 1));
        running--;
        if (batch.includes(13)) throw new Error(`unlucky ${batch.join(',')}`);
        return batch;
      },
      key: String,
      group: () => 'one',
      maxInFlight: 1,
      maxBatch: 10,
    });
    const results = await Promise.allSettled([12, 13, 14].map(call));
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([12, 'unlucky 13', 14]);
    expect(batches).toEqual([[12, 13, 14], [12], [13], [14]]);
    expect(mostRunning).toBe(1);
  });

  it('an error that is not one call\'s own (the database is away) goes to every call at once, without running each alone', async () => {
    const batches: number[][] = [];
    const call = coalesce<number, number>({
      run: async (batch) => {
        batches.push(batch);
        throw Object.assign(new Error('away'), { code: 'ECONNREFUSED' });
      },
      key: String,
      group: () => 'one',
      maxInFlight: 1,
      maxBatch: 10,
      everyones: isDatabaseUnavailable,
    });
    const results = await Promise.allSettled([1, 2, 3].map(call));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(batches).toEqual([[1, 2, 3]]);
  });
});

describe('orders created concurrently', () => {
  /** The one-statement create, called directly (as the route does, with a body already checked). */
  const create = (prefix: string, i: number, amount: number) => {
    const ctx: RequestContext = { accountId: parseId('acct', h.tenant.accountId)!, livemode: false, requestId: `req_${prefix}${i}` };
    const claim = { key: `${prefix}${i}`, fingerprint: 'print', retentionS: 3600 };
    return tryCreatePaymentOrderAtOnce(h.db, ctx, claim, { ...orderBody({ reference: `${prefix}${i}` }), amount } as never, 'http://127.0.0.1');
  };
  const ours = (prefix: string) => h.query(sql`SELECT id, reference, xmin::text AS tx FROM payment_orders WHERE reference LIKE ${prefix + '%'}`);

  it('one order per key, and every twin gets the same bytes', async () => {
    const keys = Array.from({ length: 24 }, () => crypto.randomUUID());
    const prefix = `batch-${keys[0]}-`;
    const bodies = keys.map((_, i) => orderBody({ reference: `${prefix}${i}` }));
    // Each key three times, all at once: twins land in different batches and replay the first.
    const sent = keys.flatMap((key, i) => [0, 1, 2].map(() => ({ key, i })));
    const responses = await Promise.all(sent.map(({ key, i }) => api.post('/v1/payment-orders', bodies[i], { idempotencyKey: key })));
    for (const res of responses) expect(res.status, res.text).toBe(201);
    for (const [i] of keys.entries()) {
      const answers = responses.filter((_, n) => sent[n]!.i === i);
      expect(new Set(answers.map((r) => r.text)).size, `key ${i}`).toBe(1);
    }
    const stored = await ours(prefix);
    expect(stored).toHaveLength(keys.length);
    const ids = [...new Set(responses.map((r) => r.body.id as string))];
    expect(ids).toHaveLength(keys.length);
    const events = await h.query(sql`
      SELECT object_id FROM events WHERE type = 'payment_order.created' AND object_id IN (${sql.join(ids.map((id) => sql`${id}`), sql`, `)})`);
    expect(events).toHaveLength(keys.length);
  });

  it('orders asked for in one turn of the event loop commit in one transaction', async () => {
    const prefix = `together-${crypto.randomUUID()}-`;
    const results = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((i) => create(prefix, i, 100 + i)));
    expect(results.map((r) => r?.status)).toEqual(Array(8).fill(201));
    const stored = await ours(prefix);
    expect(stored).toHaveLength(8);
    expect(new Set(stored.map((r) => r.tx)).size).toBe(1);
  });

  it('a row the database refuses fails its own request only; the others in its batch are stored', async () => {
    const accountId = parseId('acct', h.tenant.accountId)!;
    const prefix = `refused-${crypto.randomUUID()}-`;
    // 2^63 passes the schema's place in this call (it is given a checked body) but not bigint.
    const results = await Promise.allSettled([create(prefix, 0, 100), create(prefix, 1, 2 ** 63), create(prefix, 2, 300)]);
    expect(results[0]).toMatchObject({ status: 'fulfilled', value: { status: 201 } });
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/out of range/) } });
    expect(results[2]).toMatchObject({ status: 'fulfilled', value: { status: 201 } });
    expect((await ours(prefix)).map((r) => r.reference).sort()).toEqual([`${prefix}0`, `${prefix}2`]);
    const keys = await h.query(sql`SELECT key FROM idempotency_keys WHERE account_id = ${accountId} AND key LIKE ${prefix + '%'} ORDER BY key`);
    expect(keys.map((k) => k.key)).toEqual([`${prefix}0`, `${prefix}2`]);
  });
});
