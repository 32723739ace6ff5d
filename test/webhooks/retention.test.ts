// Delivery history is kept for WEBHOOK_HISTORY_RETENTION_DAYS: the worker deletes older attempt
// records and finished deliveries, never a delivery still pending, and nothing younger.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { orderBody } from '../support/helpers.js';
import { deliverAt, Receiver, webhookOptions } from '../support/webhooks.js';
import { useService } from '../support/fixtures.js';

const h = useService();
const options = webhookOptions();
const DAY = 86_400_000;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await h.receiver();
});

async function count(table: 'webhook_attempts' | 'webhook_deliveries', where = sql`true`): Promise<number> {
  return Number((await h.query(sql`SELECT count(*)::int AS n FROM ${sql.raw(table)} WHERE ${where}`))[0]!.n);
}

describe('webhook delivery history retention', () => {
  it('deletes attempts and finished deliveries past the retention, keeps pending ones and recent history', async () => {
    const api = (await h.newTenant()).api;
    expect((await api.post('/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['*'] })).status).toBe(201);
    const start = new Date();

    // One event delivered at once; one whose delivery keeps failing, so it stays pending.
    receiver.answer = () => ({ status: 200 });
    const delivered = (await api.post('/v1/payment-orders', orderBody())).body;
    await deliverAt(h.database, options, start);
    receiver.answer = () => ({ status: 500 });
    const failing = (await api.post('/v1/payment-orders', orderBody())).body;
    await deliverAt(h.database, options, start);
    expect(await count('webhook_attempts')).toBe(2);
    expect(await count('webhook_deliveries', sql`status = 'pending'`)).toBe(1);

    // 29 days on, nothing is old enough yet.
    const early = await h.service.runWorker(start.getTime() + 29 * DAY, { webhookHistoryRetentionDays: 30 });
    expect(early.sweptWebhookHistory).toEqual({ attempts: 0, deliveries: 0 });

    // 31 days on, a new event is delivered; then the sweep.
    receiver.answer = () => ({ status: 200 });
    const later = new Date(start.getTime() + 31 * DAY);
    const recent = (await api.post('/v1/payment-orders', orderBody())).body;
    await deliverAt(h.database, options, later);
    const pass = await h.service.runWorker(later, { webhookHistoryRetentionDays: 30 });
    // Both attempts made at `start` go, and the delivery that finished at `start`; the failing
    // one was retried (successfully) at `later`, so its record is recent and stays.
    expect(pass.sweptWebhookHistory!.attempts).toBe(2);
    expect(pass.sweptWebhookHistory!.deliveries).toBe(1);

    const eventOf = async (orderId: string) =>
      (await api.get('/v1/events?type=payment_order.created&limit=100')).body.data.find((e: any) => e.data.object.id === orderId);
    expect((await api.get(`/v1/events/${(await eventOf(delivered.id)).id}/deliveries`)).body.data).toEqual([]);
    expect((await api.get(`/v1/events/${(await eventOf(failing.id)).id}/deliveries`)).body.data).toHaveLength(1); // the recent retry
    expect((await api.get(`/v1/events/${(await eventOf(recent.id)).id}/deliveries`)).body.data).toHaveLength(1);
    // The events themselves are kept.
    expect(await eventOf(delivered.id)).toBeDefined();
  });

  it('never deletes a pending delivery, however old', async () => {
    const api = (await h.newTenant('Pending')).api;
    expect((await api.post('/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['*'] })).status).toBe(201);
    receiver.answer = () => ({ status: 500 });
    const start = new Date();
    await api.post('/v1/payment-orders', orderBody());
    await deliverAt(h.database, options, start);
    const pendingBefore = await count('webhook_deliveries', sql`status = 'pending'`);
    expect(pendingBefore).toBeGreaterThanOrEqual(1);
    await h.service.runWorker(start.getTime() + 400 * DAY, { webhookHistoryRetentionDays: 30 });
    expect(await count('webhook_deliveries', sql`status = 'pending'`)).toBe(pendingBefore);
  });
});
