// Where a read goes (src/storage/read-replica.ts), decided against a fake primary and replica and
// a fake clock: what the replica has replayed against what the reader wrote, its lag, its
// failures (the breaker), and how many position queries finished writes cost.
import { request } from 'node:http';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { openReads, parseLsn, replicaReads, type ReadReason, type ReadRouting } from '../../src/storage/read-replica.js';
import { registerReadRouting } from '../../src/http/read-routing.js';
import type { App } from '../../src/http/types.js';
import { ApiError } from '../../src/kernel/errors.js';
import { openPostgres, type Db } from '../../src/storage/db.js';
import { ADMIN_URL, isPostgres } from '../support/helpers.js';
import { sql } from 'drizzle-orm';

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function setUp(maxLagMs = 1000) {
  let nowMs = 0;
  const state = { primaryLsn: '0/100', replayed: '0/100', lagMs: 0 as number | null, replicaDown: false, positionQueries: 0, asked: '' };
  const primary = {
    name: 'primary',
    execute: async (query: unknown) => {
      state.positionQueries += 1;
      state.asked = JSON.stringify(query);
      await tick();
      return { rows: [{ position: state.primaryLsn }] };
    },
  };
  const replica = {
    name: 'replica',
    execute: async () => {
      if (state.replicaDown) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      return { rows: [{ replayed: state.replayed, lag_ms: state.lagMs }] };
    },
  };
  const served: string[] = [];
  const reads = replicaReads({
    primary: primary as unknown as Db,
    replica: replica as unknown as Db,
    maxLagMs,
    served: (pool: string, reason: ReadReason) => served.push(`${pool}/${reason}`),
    closeReplica: async () => {},
    now: () => nowMs,
  });
  /** Which pool answered a read of `writer` (the read itself fails on the replica while it is down). */
  const read = (writer?: string) =>
    reads.read(writer, async (db) => {
      const name = (db as unknown as { name: string }).name;
      if (name === 'replica' && state.replicaDown) throw new Error('Connection terminated unexpectedly');
      return name;
    });
  /** Lets time pass past the probe interval and the probe it starts finish. */
  const later = async (ms = 200) => {
    nowMs += ms;
    await read('nobody');
    await tick();
    served.pop();
  };
  return { reads, read, state, served, later, advance: (ms: number) => (nowMs += ms) };
}

describe('read routing', () => {
  it('orders WAL positions as PostgreSQL does', () => {
    expect(parseLsn('0/FFFFFFFF') < parseLsn('1/0')).toBe(true);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
  });

  it('reads the primary until the replica is probed, then the replica', async () => {
    const t = setUp();
    expect(await t.read('key:a')).toBe('primary');
    expect(t.served).toEqual(['primary/not_probed']);
    await tick();
    expect(await t.read('key:a')).toBe('replica');
    expect(t.served.at(-1)).toBe('replica/caught_up');
  });

  it("a writer reads the primary from its write's start until the replica has replayed the position after it", async () => {
    const t = setUp();
    await t.later();
    t.reads.writeStarted('key:a');
    expect(await t.read('key:a')).toBe('primary');
    expect(await t.read('key:b')).toBe('replica');
    t.state.primaryLsn = '0/200';
    t.reads.writeEnded('key:a');
    await tick();
    await tick();
    await t.later();
    expect(await t.read('key:a')).toBe('primary');
    expect(t.served.at(-1)).toBe('primary/own_write');
    t.state.replayed = '0/200';
    await t.later();
    expect(await t.read('key:a')).toBe('replica');
  });

  it('writes finishing together share the position queries', async () => {
    const t = setUp();
    const writers = Array.from({ length: 50 }, (_, i) => `key:${i}`);
    for (const w of writers) t.reads.writeStarted(w);
    for (const w of writers) t.reads.writeEnded(w);
    for (let i = 0; i < 5; i++) await tick();
    expect(t.state.positionQueries).toBeLessThanOrEqual(2);
    await t.later();
    expect(await t.read('key:49')).toBe('replica');
  });

  it('skips a replica lagging past the bound, or whose last probe is older than it', async () => {
    const t = setUp(1000);
    t.state.lagMs = 1500;
    await t.later();
    expect(await t.read()).toBe('primary');
    expect(t.served.at(-1)).toBe('primary/lagging');
    t.state.lagMs = null; // nothing replayed to age against while WAL waits: not usable
    await t.later();
    expect(await t.read()).toBe('primary');
    t.state.lagMs = 0;
    await t.later();
    expect(await t.read()).toBe('replica');
    t.advance(1001);
    t.state.replicaDown = true; // the probe this read starts fails; the read is judged on the old probe
    expect(await t.read()).toBe('primary');
    expect(t.served.at(-1)).toBe('primary/lagging');
  });

  it("the primary's position is its flushed WAL (what a replica can replay), not its insert position", async () => {
    const t = setUp();
    t.reads.writeStarted('key:a');
    t.reads.writeEnded('key:a');
    await tick();
    expect(t.state.asked).toContain('pg_current_wal_flush_lsn()');
  });

  it('a replica that stopped receiving WAL (current by its own reckoning) is lagging once it has trailed the primary past the bound', async () => {
    const t = setUp(1000);
    await t.later();
    expect(await t.read()).toBe('replica');
    t.state.primaryLsn = '0/300'; // written through another process; the replica never receives it
    await t.later();
    expect(await t.read()).toBe('replica'); // within the bound: it may only be slow
    await t.later(600);
    await t.later(600);
    expect(await t.read()).toBe('primary');
    expect(t.served.at(-1)).toBe('primary/lagging');
    t.state.replayed = '0/300';
    await t.later();
    expect(await t.read()).toBe('replica');
  });

  it('a read failing on the replica is answered by the primary, and the replica is left alone until a probe succeeds', async () => {
    const t = setUp();
    await t.later();
    t.state.replicaDown = true;
    expect(await t.read()).toBe('primary');
    expect(t.served.at(-1)).toBe('primary/replica_failed');
    expect(await t.read()).toBe('primary');
    expect(t.served.at(-1)).toBe('primary/replica_down');
    t.state.replicaDown = false;
    await t.later(1000);
    expect(await t.read()).toBe('primary');
    await t.later(5000);
    expect(await t.read()).toBe('replica');
  });

  it('a refusal on the replica (a missing object it may not have yet) is asked of the primary without blaming the replica', async () => {
    const t = setUp();
    await t.later();
    const answer = await t.reads.read(undefined, async (db) => {
      if ((db as unknown as { name: string }).name === 'replica') throw new ApiError('resource_missing');
      return 'found';
    });
    expect(answer).toBe('found');
    expect(await t.read()).toBe('replica');
  });

  it('a read the replica does not answer in time is given up and answered by the primary', async () => {
    if (!isPostgres) return;
    const database = await openPostgres(ADMIN_URL);
    const served: string[] = [];
    const reads = await openReads(database, { readUrl: ADMIN_URL, maxLagMs: 5000, queryTimeoutMs: 300 }, (pool, reason) => served.push(`${pool}/${reason}`));
    try {
      await reads.read(undefined, async () => null);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the first probe
      const startedMs = Date.now();
      const answer = await reads.read(undefined, async (db) => {
        if (db === database.db) return 'primary';
        await db.execute(sql`SELECT pg_sleep(5)`); // a replica gone silent
        return 'replica';
      });
      expect(answer).toBe('primary');
      expect(served.at(-1)).toBe('primary/replica_failed');
      expect(Date.now() - startedMs).toBeLessThan(2000);
    } finally {
      await reads.close();
      await database.close();
    }
  }, 20_000);

  it('the embedded database has no replica: DATABASE_READ_URL is ignored and every read is its own', async () => {
    const database = { kind: 'pglite' as const, db: { name: 'embedded' } as unknown as Db, close: async () => {} };
    const served: string[] = [];
    const reads = await openReads(database, { readUrl: 'postgres://postgres@127.0.0.1:1/none', maxLagMs: 5000 }, (pool) => served.push(pool));
    reads.writeStarted('key:a');
    reads.writeEnded('key:a');
    expect(await reads.read('key:a', async (db) => db === database.db)).toBe(true);
    expect(served).toEqual([]);
    await reads.close();
  });
});

describe('which requests pin their writer to the primary, and until when', () => {
  async function serve() {
    const calls: string[] = [];
    const routing: ReadRouting = {
      followsWrites: true,
      writeStarted: (w) => calls.push(`started ${w}`),
      writeEnded: (w) => calls.push(`ended ${w}`),
      read: (_w, run) => run(undefined as unknown as Db),
      close: async () => {},
    };
    const app = Fastify() as unknown as App;
    registerReadRouting(app, routing, undefined as unknown as Db);
    app.addHook('onRequest', async (req) => req.identifyWriter('key:a'));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    app.post('/slow', async () => {
      entered();
      await gate; // a processor call, then the commit
      calls.push('committed');
      return { ok: true };
    });
    app.get('/payments/:id', { config: { writes: (req) => String((req.query as { refresh?: unknown }).refresh) === 'true' } }, async () => ({}));
    app.get('/list', async () => []);
    return { app, calls, release, inHandler };
  }

  it("a write whose client went away keeps its writer on the primary until its handler has finished", async () => {
    const t = await serve();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = t.app.server.address() as { port: number };
      const client = request({ port, method: 'POST', path: '/slow', headers: { 'content-type': 'application/json' } });
      client.on('error', () => {});
      client.end('{}');
      await t.inHandler;
      client.destroy();
      await new Promise((resolve) => setTimeout(resolve, 50)); // the abort reaches the server
      expect(t.calls).toEqual(['started key:a']);
      t.release();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(t.calls).toEqual(['started key:a', 'committed', 'ended key:a']);
    } finally {
      await t.app.close();
    }
  });

  it('a GET whose route says it writes (a retrieve with refresh=true) pins its writer; other GETs do not', async () => {
    const t = await serve();
    try {
      expect((await t.app.inject({ method: 'GET', url: '/payments/pay_1' })).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'GET', url: '/list' })).statusCode).toBe(200);
      expect(t.calls).toEqual([]);
      expect((await t.app.inject({ method: 'GET', url: '/payments/pay_1?refresh=true' })).statusCode).toBe(200);
      expect(t.calls).toEqual(['started key:a', 'ended key:a']);
    } finally {
      await t.app.close();
    }
  });
});
