// The simulated processors' new objects, inserted on the pool, share one statement and its commit
// with whatever else is inserted at the same time (src/connectors/simulator/sql-store.ts): each call
// must still get exactly what it would alone — its own row, the held one for a key already there,
// its own error for an object id another reference holds — and a transaction's inserts stay its own.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useDatabase } from '../support/fixtures.js';
import { connectionOf } from '../../src/storage/prepared.js';
import { sqlStore } from '../../src/connectors/simulator/sql-store.js';
import type { SimEntry } from '../../src/connectors/simulator/store.js';

const h = useDatabase();

const entry = (processor: string, reference: string, objectId = `ch_${reference}`): SimEntry => ({
  processor,
  kind: 'charge',
  reference,
  objectId,
  body: { id: objectId, amount: 1000, nested: { status: 'pending' } },
  dueAt: new Date(Date.UTC(2030, 0, 1, 12, 0, 0, 123)),
  dueState: 'succeeded',
});

/** Runs `fn` and counts the INSERTs into simulator_objects it sends through the database's connection. */
async function countingInserts<R>(fn: () => Promise<R>): Promise<{ result: R; inserts: number }> {
  const connection = connectionOf(h.db) as { query: (...args: unknown[]) => unknown };
  const query = connection.query;
  let inserts = 0;
  connection.query = function (this: unknown, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
    if (/insert into "?simulator_objects/i.test(text ?? '')) inserts++;
    return query.apply(this, args);
  };
  try {
    return { result: await fn(), inserts };
  } finally {
    connection.query = query;
  }
}

const newProcessor = () => `sim-${crypto.randomUUID()}`;
const errorOf = (e: SimEntry) => `simulator ${e.processor}: ${e.kind} id ${e.objectId} is taken by another reference`;

describe('the simulator books on the pool', () => {
  it('insert the calls of one turn in one statement, one transaction, each getting its own row back', async () => {
    const store = sqlStore(h.db);
    const processor = newProcessor();
    const sent = Array.from({ length: 20 }, (_, i) => ({ ...entry(processor, `ref${i}`), dueAt: i % 2 ? null : new Date(1_900_000_000_000 + i) }));
    const { result, inserts } = await countingInserts(() => Promise.all(sent.map((e) => store.insert(e))));
    expect(result).toEqual(sent.map((e) => ({ entry: e, created: true })));
    expect(result[0]!.entry.dueAt).toBeInstanceOf(Date);
    // Nothing else was in flight: all twenty went at once, together.
    expect(inserts).toBe(1);
    const stored = await h.query(sql`SELECT reference, xmin::text AS tx FROM simulator_objects WHERE processor = ${processor}`);
    expect(stored).toHaveLength(20);
    expect(new Set(stored.map((r) => r.tx)).size).toBe(1);
    expect(await store.get(sent[3]!)).toEqual(sent[3]);
  });

  it('answer a key already held with the held row, in a batch and between twins of one turn', async () => {
    const store = sqlStore(h.db);
    const processor = newProcessor();
    const first = entry(processor, 'held');
    expect(await store.insert(first)).toEqual({ entry: first, created: true });
    const again = { ...entry(processor, 'held', 'ch_other'), body: { id: 'ch_other' } };
    const twins = [entry(processor, 'twin', 'ch_twin1'), entry(processor, 'twin', 'ch_twin2')];
    const fresh = entry(processor, 'fresh');
    const { result, inserts } = await countingInserts(() => Promise.all([again, ...twins, fresh].map((e) => store.insert(e))));
    // The second twin waits for the first's answer, then goes alone.
    expect(inserts).toBe(2);
    expect(result).toEqual([
      { entry: first, created: false },
      { entry: twins[0], created: true },
      { entry: twins[0], created: false },
      { entry: fresh, created: true },
    ]);
  });

  it('fail only the call whose object id another reference holds; the rest of its batch is stored', async () => {
    const store = sqlStore(h.db);
    const processor = newProcessor();
    await store.insert(entry(processor, 'owner', 'ch_taken'));
    // One taken before the batch, one pair that takes the same new id within it.
    const taken = entry(processor, 'thief', 'ch_taken');
    const pair = [entry(processor, 'pairA', 'ch_pair'), entry(processor, 'pairB', 'ch_pair')];
    const others = [entry(processor, 'ok1'), entry(processor, 'ok2')];
    const calls = [others[0]!, taken, ...pair, others[1]!];
    const { result, inserts } = await countingInserts(() => Promise.allSettled(calls.map((e) => store.insert(e))));
    expect(inserts).toBe(1);
    expect(result[0]).toEqual({ status: 'fulfilled', value: { entry: others[0], created: true } });
    expect(result[1]).toMatchObject({ status: 'rejected', reason: { message: errorOf(taken) } });
    expect(result[4]).toEqual({ status: 'fulfilled', value: { entry: others[1], created: true } });
    const pairOutcomes = result.slice(2, 4);
    const won = pairOutcomes.findIndex((r) => r.status === 'fulfilled');
    expect(pairOutcomes[won]).toEqual({ status: 'fulfilled', value: { entry: pair[won], created: true } });
    expect(pairOutcomes[1 - won]).toMatchObject({ status: 'rejected', reason: { message: errorOf(pair[1 - won]!) } });
    const stored = await h.query(sql`SELECT reference FROM simulator_objects WHERE processor = ${processor} ORDER BY reference`);
    expect(stored.map((r) => r.reference)).toEqual(['ok1', 'ok2', 'owner', pair[won]!.reference].sort());
  });

  it('keep a transaction\'s inserts in the transaction: rolled back with it, and held keys answered as before', async () => {
    const store = sqlStore(h.db);
    const processor = newProcessor();
    const held = entry(processor, 'held');
    await store.insert(held);
    const gone = entry(processor, 'gone');
    const seen: unknown[] = [];
    await expect(
      store.transaction(async (books) => {
        seen.push(await books.insert(gone), await books.insert({ ...held, objectId: 'ch_new' }));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(seen).toEqual([
      { entry: gone, created: true },
      { entry: held, created: false },
    ]);
    expect(await store.get(gone)).toBeUndefined();
  });
});
