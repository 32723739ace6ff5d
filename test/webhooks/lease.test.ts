// Deliveries leased at dispatch: a dispatch hands the worker's sender as many of the new deliveries
// as it has room for, already leased, and leaves the rest due for a claim. A worker that stops hands
// back what it holds unsent; one whose delivery waited too long for a slot (its endpoint was read
// when it was leased, and its lease is running down) hands it back rather than send it. (A worker killed before sending: retries.test.ts.)
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { startDeliveryEngine } from '../../src/domain/webhooks/delivery/engine.js';
import { claimDeliveries, dispatchEvents } from '../../src/domain/webhooks/delivery/queue.js';
import { createSender } from '../../src/domain/webhooks/sender.js';
import { deliverAt, newOrderEvent, subscribedTenant, webhookOptions } from '../support/webhooks.js';
import { useService, type ServiceFixture } from '../support/fixtures.js';

const h = useService();
const options = webhookOptions();

/** A tenant subscribed to order creation, with nothing else waiting in the queue. */
async function quietTenant(fixture: ServiceFixture) {
  const tenant = await subscribedTenant(fixture, ['payment_order.created']);
  await deliverAt(fixture.database, options);
  return tenant;
}

async function deliveriesOf(endpointId: string) {
  return h.query(sql`
    SELECT event_id, status, attempts, lease_id, next_attempt_at <= now() AS due
    FROM webhook_deliveries WHERE endpoint_id = ${parseId('we', endpointId)!}::uuid
    ORDER BY created_at, event_id`) as Promise<{ event_id: string; status: string; attempts: number; lease_id: string | null; due: boolean }[]>;
}

/** A worker's delivery engine with `concurrency` slots, on the test's database; its log kept. */
function engineWith(concurrency: number, now: () => Date = () => new Date(), timeoutMs = options.config.timeoutMs) {
  const logged: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => void logged.push({ level, fields, msg });
  const sender = createSender();
  const engine = startDeliveryEngine({
    db: h.db,
    log: { info: at('info'), warn: at('warn'), error: at('error') } as never,
    config: { ...options.config, concurrency, timeoutMs, leaseMs: timeoutMs + 3000, pollIntervalMs: 10 },
    encryptor: options.encryptor,
    sender,
    now,
    random: () => 0.5,
  });
  return { engine, logged, close: () => sender.close() };
}

describe('deliveries leased at dispatch', () => {
  it('leases up to the limit, in the events order, and leaves the rest due for a claim', async () => {
    const { api, endpoint, receiver, tenant } = await quietTenant(h);
    const events = [await newOrderEvent(api), await newOrderEvent(api), await newOrderEvent(api)].map((e) => e.event);
    const t0 = new Date();
    const leaseId = crypto.randomUUID();
    const dispatched = await dispatchEvents(h.db, t0, 1000, { id: leaseId, ms: options.config.leaseMs, limit: 2 });
    expect(dispatched).toMatchObject({ events: 3, deliveries: 3 });
    expect(dispatched.leased.map((l) => l.eventId)).toEqual(events.slice(0, 2).map((e) => parseId('evt', e.id)));
    expect(dispatched.leased[0]).toMatchObject({
      accountId: parseId('acct', tenant.accountId),
      endpointId: parseId('we', endpoint.id),
      trigger: 'event',
      attempts: 0,
      leaseId,
      leasedUntilMs: t0.getTime() + options.config.leaseMs,
      event: { type: 'payment_order.created' },
      endpoint: { url: receiver.url, enabled: true },
    });
    const rows = await deliveriesOf(endpoint.id);
    expect(rows.map((r) => [r.lease_id, r.due])).toEqual([
      [leaseId, false],
      [leaseId, false],
      [null, true],
    ]);
    // a claim finds only the delivery left due
    const claimed = (await claimDeliveries(h.db, t0, options.config.leaseMs, 1000)).filter((c) => c.endpointId === parseId('we', endpoint.id));
    expect(claimed.map((c) => c.eventId)).toEqual([parseId('evt', events[2].id)]);
  });

  it('stopping hands back at once the leases held unsent, and at the deadline the attempt in flight', async () => {
    const { api, receiver, endpoint } = await quietTenant(h);
    // the first answers at once, which lets the worker lease one delivery ahead of its one slot
    receiver.answer = (_r, i) => (i === 0 ? { status: 200 } : { status: 200, delayMs: 5000 });
    for (let i = 0; i < 3; i++) await newOrderEvent(api);
    const { engine, logged, close } = engineWith(1);
    try {
      await receiver.waitFor(() => receiver.requests.length === 2);
      // one delivery in flight, one waiting for the slot: both leased
      const held = await deliveriesOf(endpoint.id);
      expect(held.slice(1).map((r) => [r.status, r.lease_id !== null, r.due])).toEqual([
        ['pending', true, false],
        ['pending', true, false],
      ]);
      await engine.stop(Date.now() + 300);
    } finally {
      close();
      receiver.answer = () => ({ status: 200 });
    }
    expect(logged).toContainEqual(expect.objectContaining({ msg: 'shutdown: webhook delivery stopped claiming', fields: { in_flight: 1, not_sent: 1 } }));
    expect((await deliveriesOf(endpoint.id)).map((r) => [r.status, r.attempts, r.lease_id, r.due])).toEqual([
      ['succeeded', 1, null, true],
      ['pending', 0, null, true],
      ['pending', 0, null, true],
    ]);
  });

  it('a delivery that waited too long for a slot is handed back and sent under a new lease', async () => {
    const { api, receiver } = await quietTenant(h);
    receiver.answer = (_r, i) => (i === 1 ? { status: 200, delayMs: 500 } : { status: 200 });
    const events = [];
    for (let i = 0; i < 3; i++) events.push((await newOrderEvent(api)).event);
    let skewMs = 0;
    const { engine, logged, close } = engineWith(1, () => new Date(Date.now() + skewMs));
    try {
      await receiver.waitFor(() => receiver.requests.length === 2);
      // while the second attempt is in flight, the clock jumps: the third has waited longer than it may
      skewMs = options.config.leaseMs - options.config.timeoutMs;
      await receiver.waitFor(() => receiver.requests.length === 3);
      await engine.stop();
    } finally {
      close();
    }
    expect(logged).toContainEqual(expect.objectContaining({ level: 'warn', fields: { deliveries: 1 } }));
    expect(events.map((e) => receiver.forEvent(e.id).length)).toEqual([1, 1, 1]);
    const attempts = (await api.get(`/v1/events/${events[2].id}/deliveries`)).body.data;
    expect(attempts.map((a: any) => [a.attempt, a.outcome])).toEqual([[1, 'succeeded']]);
  });

  it('fills a free slot at once while slow receivers hold the others, however few are free', async () => {
    const { api, receiver } = await quietTenant(h);
    receiver.answer = (_r, i) => (i < 7 ? { status: 200, delayMs: 10_000 } : { status: 200 });
    for (let i = 0; i < 7; i++) await newOrderEvent(api);
    const { engine, close } = engineWith(8, undefined, 15_000);
    try {
      await receiver.waitFor(() => receiver.requests.length === 7);
      const { event } = await newOrderEvent(api);
      await receiver.waitFor(() => receiver.forEvent(event.id).length === 1, 5000);
    } finally {
      receiver.answer = () => ({ status: 200 });
      await engine.stop(Date.now() + 100);
      close();
    }
  });
});
