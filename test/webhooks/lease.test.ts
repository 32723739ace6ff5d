// Deliveries leased at dispatch: a dispatch hands the worker as many of the new deliveries as it
// asks for, already leased, and leaves the rest due for a claim. (A worker killed before sending:
// retries.test.ts.)
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { claimDeliveries, dispatchEvents } from '../../src/domain/webhooks/delivery/queue.js';
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
});
