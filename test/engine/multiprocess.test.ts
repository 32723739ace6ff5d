// Idempotency across real service processes sharing one PostgreSQL database (docs/api-conventions.md), and one
// rate-limit budget shared through Redis (§8). PostgreSQL only: PGlite is single-process.
import crypto from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { setRateLimit } from '../../src/domain/accounts/service.js';
import { call, isPostgres, orderBody, type ApiResponse, REDIS_URL } from '../support/helpers.js';
import { type Child, useServiceProcesses } from '../support/processes.js';

describe.skipIf(!isPostgres)('several service processes on one PostgreSQL', () => {
  const { h, tenant, children } = useServiceProcesses(2, { tenantName: 'Multiprocess tenant' });
  const query = (q: SQL) => h.query(q);

  it('one key fired at both processes at once creates exactly one order, round after round', async () => {
    const [a, b] = children() as [Child, Child];
    const rounds = Array.from({ length: 20 }, () => ({ key: `mp-${crypto.randomUUID()}`, body: orderBody() }));
    const answers = await Promise.all(
      rounds.map(({ key, body }, r) =>
        Promise.all(
          // Alternate which process hears the key first, so both win some rounds.
          Array.from({ length: 10 }, (_, i) =>
            call(((i + r) % 2 ? b : a).url, 'POST', '/v1/payment-orders', { key: tenant().testKey, idempotencyKey: key, body }),
          ),
        ),
      ),
    );

    const ids: string[] = [];
    rounds.forEach((round, r) => {
      const mine = answers[r]!;
      const statuses = mine.map((x) => x.status);
      expect(statuses.every((s) => s === 201 || s === 409), `round ${r}: ${statuses.join(',')} ${a.output()}${b.output()}`).toBe(true);
      const created = mine.filter((x) => x.status === 201);
      expect(created.length, `round ${r}`).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((x) => x.body.id)).size, `round ${r}`).toBe(1);
      expect(new Set(created.map((x) => x.text)).size, `round ${r}`).toBe(1);
      expect(created.filter((x) => x.headers.get('idempotent-replayed') !== 'true'), `round ${r}`).toHaveLength(1);
      for (const busy of mine.filter((x) => x.status === 409)) {
        expect(busy.body.error.code).toBe('idempotency_key_in_use');
        expect(Number(busy.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      ids.push(created[0]!.body.id);
    });

    // Exactly one order and one created event per key in the shared database.
    const refs = rounds.map((r) => r.body.reference);
    const perReference = await query(sql`
      SELECT reference, count(*)::int AS n FROM payment_orders
      WHERE reference IN (${sql.join(refs.map((ref) => sql`${ref}`), sql`, `)}) GROUP BY reference`);
    expect(perReference).toHaveLength(rounds.length);
    for (const row of perReference) expect(row.n).toBe(1);
    const perEvent = await query(sql`
      SELECT object_id, count(*)::int AS n FROM events
      WHERE type = 'payment_order.created' AND object_id IN (${sql.join(ids.map((id) => sql`${id}`), sql`, `)}) GROUP BY object_id`);
    expect(perEvent).toHaveLength(rounds.length);
    for (const row of perEvent) expect(row.n).toBe(1);

    // Afterwards both processes replay the same bytes for every key.
    for (const [r, round] of rounds.entries()) {
      const replays: ApiResponse[] = [];
      for (const p of [a, b]) {
        replays.push(await call(p.url, 'POST', '/v1/payment-orders', { key: tenant().testKey, idempotencyKey: round.key, body: round.body }));
      }
      for (const replay of replays) {
        expect(replay.status).toBe(201);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.body.id).toBe(ids[r]);
      }
      expect(replays[0]!.text).toBe(replays[1]!.text);
    }
  });

  it('a key used in one process is reused with another body in the other: 422', async () => {
    const [a, b] = children() as [Child, Child];
    const key = `mp-${crypto.randomUUID()}`;
    const body = orderBody();
    expect((await call(a.url, 'POST', '/v1/payment-orders', { key: tenant().testKey, idempotencyKey: key, body })).status).toBe(201);
    const reused = await call(b.url, 'POST', '/v1/payment-orders', { key: tenant().testKey, idempotencyKey: key, body: { ...body, amount: 1 } });
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
  });

  it('cancels once across processes: concurrent cancels with one key make one transition', async () => {
    const [a, b] = children() as [Child, Child];
    const created = await call(a.url, 'POST', '/v1/payment-orders', { key: tenant().testKey, idempotencyKey: crypto.randomUUID(), body: orderBody() });
    const key = `mp-${crypto.randomUUID()}`;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call((i % 2 ? b : a).url, 'POST', `/v1/payment-orders/${created.body.id}/cancel`, { key: tenant().testKey, idempotencyKey: key }),
      ),
    );
    for (const x of answers) expect([200, 409]).toContain(x.status);
    const ok = answers.filter((x) => x.status === 200);
    expect(new Set(ok.map((x) => x.text)).size).toBe(1);
    const [events] = await query(
      sql`SELECT count(*)::int AS n FROM events WHERE type = 'payment_order.cancelled' AND object_id = ${created.body.id}`,
    );
    expect(events!.n).toBe(1);
  });
});

describe.skipIf(!isPostgres)('several service processes sharing a Redis rate limit', () => {
  const { tenant, children } = useServiceProcesses(2, {
    tenantName: 'Rate-limited tenant',
    env: { REDIS_URL },
    // Hardly any refill during the test: the budget is the burst.
    prepare: (h, t) => setRateLimit(h.db, t.accountId, { perSecond: 1, burst: 6 }),
  });

  it('the two processes count one budget for the key', async () => {
    const [a, b] = children() as [Child, Child];
    const answers: ApiResponse[] = [];
    for (let i = 0; i < 10; i++) answers.push(await call((i % 2 ? b : a).url, 'GET', '/v1/payment-orders', { key: tenant().testKey }));
    const allowed = answers.filter((x) => x.status === 200).length;
    // 6 from the burst, plus at most one refilled token if the ten requests took over a second.
    expect(allowed).toBeGreaterThanOrEqual(6);
    expect(allowed).toBeLessThanOrEqual(7);
    expect(answers.slice(0, 6).map((x) => x.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers.slice(0, 6).map((x) => x.headers.get('ratelimit-remaining'))).toEqual(['5', '4', '3', '2', '1', '0']);
    const refused = answers.find((x) => x.status === 429)!;
    expect(refused.body.error).toMatchObject({ type: 'rate-limit', code: 'rate_limited' });
    expect(refused.headers.get('retry-after')).toBe('1');
    for (const x of answers) expect(x.headers.get('ratelimit-limit')).toBe('6');
  });
});
