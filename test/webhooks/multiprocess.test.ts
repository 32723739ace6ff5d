// Worker processes as deployed (`node --import tsx src/main.ts` with ROLES=worker) sharing one
// PostgreSQL queue: two of them deliver every event exactly once to a receiver that always answers
// 200, and a worker killed with SIGKILL in the middle of a batch loses nothing.
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { isPostgres } from '../support/helpers.js';
import { verifies, subscribedTenant } from '../support/webhooks.js';
import { events } from '../../src/storage/schema.js';
import { newId, parseId } from '../../src/kernel/ids.js';
import { killChild, stopChild, type Child, startChild } from '../support/processes.js';
import { useService } from '../support/fixtures.js';

const h = useService({ postgresOnly: true });

/** Worker processes as deployed (ROLES=worker), their delivery settings compressed; stopped after each test. */
const workers: Child[] = [];
afterEach(() => Promise.all(workers.splice(0).map(stopChild)));
const startWorkerProcess = async (env: Record<string, string> = {}) => {
  const child = await startChild({
    DATABASE_URL: h.databaseUrl!,
    ROLES: 'worker',
    DATABASE_POOL_SIZE: '5',
    WEBHOOK_POLL_INTERVAL_MS: '10',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_LEASE_MS: '4000',
    WEBHOOK_RETRY_JITTER_PERCENT: '0',
    ...env,
  });
  workers.push(child);
  return child;
};

/** Commits `n` events at once, as many state changes would. */
async function commitEvents(accountId: string, n: number): Promise<string[]> {
  const account = parseId('acct', accountId)!;
  const ids: string[] = [];
  const rows = Array.from({ length: n }, (_, i) => {
    const id = newId('evt');
    ids.push(id.id);
    return {
      accountId: account,
      id: id.uuid,
      livemode: false,
      type: 'payment_order.created',
      objectId: `ord_${i}`,
      data: { object: { id: `ord_${i}`, object: 'payment_order', version: 1 } },
      createdAt: new Date(),
    };
  });
  for (let i = 0; i < rows.length; i += 500) await h.db.insert(events).values(rows.slice(i, i + 500));
  return ids;
}

async function queueState(accountId: string) {
  const account = parseId('acct', accountId)!;
  const [state] = await h.query(sql`
    SELECT
      (SELECT count(*) FROM events WHERE account_id = ${account}::uuid AND dispatched_at IS NULL)::int AS undispatched,
      (SELECT count(*) FROM webhook_deliveries WHERE account_id = ${account}::uuid AND status = 'succeeded')::int AS succeeded,
      (SELECT count(*) FROM webhook_deliveries WHERE account_id = ${account}::uuid AND status <> 'succeeded')::int AS other,
      (SELECT count(*) FROM webhook_attempts WHERE account_id = ${account}::uuid)::int AS attempts,
      (SELECT max(attempt_number) FROM webhook_attempts WHERE account_id = ${account}::uuid)::int AS max_attempt`);
  return state!;
}

describe.skipIf(!isPostgres)('webhook workers in several processes', () => {
  it('two workers sharing the queue deliver each event exactly once', async () => {
    const { tenant, receiver, endpoint } = await subscribedTenant(h);
    // A lease far longer than any attempt: on a loaded machine a starved worker's short lease would
    // run out and the other would rightly deliver again (at least once), which is not this test's point.
    const env = { WEBHOOK_LEASE_MS: '60000' };
    await Promise.all([startWorkerProcess(env), startWorkerProcess(env)]);
    const ids = await commitEvents(tenant.accountId, 600);
    await receiver.waitFor(() => new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size >= ids.length, 60_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.requests).toHaveLength(ids.length);
    expect(new Set(receiver.requests.map((r) => String(r.headers['webhook-id'])))).toEqual(new Set(ids));
    expect(receiver.requests.every((r) => verifies(endpoint.secret, r))).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(await queueState(tenant.accountId)).toEqual({ undispatched: 0, succeeded: ids.length, other: 0, attempts: ids.length, max_attempt: 1 });
  }, 120_000);

  it('a worker killed with SIGKILL mid-batch loses nothing, and its lost attempts do not use up retries', async () => {
    const { tenant, receiver, endpoint } = await subscribedTenant(h);
    // slow answers keep a batch in flight when the kill comes
    receiver.answer = () => ({ status: 200, delayMs: 150 });
    const env = { WEBHOOK_BATCH_SIZE: '40', WEBHOOK_CONCURRENCY: '40', WEBHOOK_LEASE_MS: '2500', WEBHOOK_TIMEOUT_MS: '2000' };
    const first = await startWorkerProcess(env);
    const ids = await commitEvents(tenant.accountId, 400);
    await receiver.waitFor(() => receiver.requests.length >= 100, 60_000);
    await killChild(first);
    const atKill = new Set(receiver.requests.map((r) => String(r.headers['webhook-id'])));
    expect(atKill.size).toBeLessThan(ids.length);

    await startWorkerProcess(env);
    await receiver.waitFor(() => new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size >= ids.length, 90_000);
    expect(new Set(receiver.requests.map((r) => String(r.headers['webhook-id'])))).toEqual(new Set(ids));
    expect(receiver.requests.every((r) => verifies(endpoint.secret, r))).toBe(true);
    // settle: every delivery recorded as succeeded at its first recorded attempt
    for (let i = 0; i < 50; i++) {
      const state = await queueState(tenant.accountId);
      if (state.succeeded === ids.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await queueState(tenant.accountId)).toEqual({ undispatched: 0, succeeded: ids.length, other: 0, attempts: ids.length, max_attempt: 1 });
    // at-least-once: requests in flight when the worker died were sent again (same webhook-id)
    expect(receiver.requests.length).toBeGreaterThan(ids.length);
  }, 180_000);
});
