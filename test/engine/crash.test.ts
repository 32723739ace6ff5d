// Crash safety over every processor harness (docs/processors.md, crash recovery): a service runs as a real OS process, is
// killed with SIGKILL between the phases of a payment or a refund (the CRASH_AFTER fault-injection
// switch), and the same request is retried with the same Idempotency-Key on another service
// process on the same database, as after a restart. It must resume and never charge twice: one
// payment, what the processor's own books hold under our id counted, the order paid, the balance
// credited once. PostgreSQL only (several processes on one database).
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseId, toPublicId } from '../../src/kernel/ids.js';
import { call, isPostgres, orderBody } from '../support/helpers.js';
import { cardMethod } from '../support/payments.js';
import { useCrashedService } from '../support/processes.js';
import { expectLedgerClean } from '../support/payouts.js';
import { HARNESSES } from '../connectors/contract/harnesses.js';
import { BACKUP, connectRouted } from '../connectors/contract/scenarios.js';

for (const make of HARNESSES) {
  const harness = make();
  const { books } = harness;
  describe.skipIf(!isPostgres || !harness.capabilities.has('processes') || !books)(`a service killed between the phases, over ${harness.name}`, () => {
    beforeAll(() => harness.start());
    afterAll(() => harness.close());
    const crash = useCrashedService({ tenantName: 'Crash tenant', env: () => harness.processEnv(), prepare: (api, url) => connectRouted(harness, api, url) });
    const { h, crashing, retry } = crash;

    async function crashDuringPayment(crashAfter: string) {
      const order = await call(crash.survivor().url, 'POST', '/v1/payment-orders', { key: crash.tenant().testKey, idempotencyKey: crypto.randomUUID(), body: orderBody({ amount: 4321 }) });
      expect(order.status, order.text).toBe(201);
      const idempotencyKey = `crash-${crashAfter}-${order.body.id}`;
      const body = { payment_order: order.body.id, payment_method: cardMethod(harness.cards.success) };
      await crashing(crashAfter, '/v1/payments', body, idempotencyKey);
      // What the first phase left behind: a pending payment, the order processing, the recovery point.
      const [payment] = await h.query(sql`SELECT id, status, connector FROM payments WHERE payment_order_id = ${parseId('ord', order.body.id)!}`);
      expect(payment).toMatchObject({ status: 'pending', connector: null });
      const [key] = await h.query(sql`SELECT recovery_point, response_status FROM idempotency_keys WHERE key = ${idempotencyKey}`);
      expect(key).toEqual({ recovery_point: `payment_created:${payment!.id}`, response_status: null });
      const [orderRow] = await h.query(sql`SELECT status FROM payment_orders WHERE id = ${parseId('ord', order.body.id)!}`);
      expect(orderRow!.status).toBe('processing');
      const res = await retry('/v1/payments', body, idempotencyKey);
      expect(res.status, res.text).toBe(201);
      expect(res.headers.get('idempotent-replayed')).toBeNull();
      expect(parseId('pay', res.body.id)).toBe(String(payment!.id));
      const replay = await call(crash.survivor().url, 'POST', '/v1/payments', { key: crash.tenant().testKey, idempotencyKey, body });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(res.text);
      return { order: order.body, payment: res.body };
    }

    async function expectPaidOnce(orderId: string, paymentId: string, amount: number) {
      const rows = await h.query(sql`SELECT id FROM payments WHERE payment_order_id = ${parseId('ord', orderId)!}`);
      expect(rows).toHaveLength(1);
      const [order] = await h.query(sql`SELECT status, amount_paid FROM payment_orders WHERE id = ${parseId('ord', orderId)!}`);
      expect(order).toEqual({ status: 'paid', amount_paid: amount });
      const entries = await h.query(sql`SELECT type FROM journal_entries WHERE source_id = ${parseId('pay', paymentId)!}`);
      expect(entries).toEqual([{ type: 'payment' }]);
      const events = await h.query(sql`SELECT type FROM events WHERE object_id = ${paymentId} ORDER BY id`);
      expect(events.map((e) => e.type)).toEqual(['payment.created', 'payment.succeeded']);
      await expectLedgerClean(h.db, crash.tenant().accountId);
    }

    it('killed after the payment was committed, before the processor was called: charged once on retry', async () => {
      const { order, payment } = await crashDuringPayment('payment_created');
      expect(payment).toMatchObject({ status: 'succeeded', connector: crash.prepared().connector, amount: 4321 });
      expect(await books!.chargeRequests(payment.id)).toBe(1);
      expect(await books!.chargesHeld(payment.id)).toBe(1);
      await expectPaidOnce(order.id, payment.id, 4321);
    }, 120_000);

    it('killed after the processor charged, before the outcome was committed: found, not charged again', async () => {
      const { order, payment } = await crashDuringPayment('payment_connector_answered');
      expect(payment).toMatchObject({ status: 'succeeded', connector: crash.prepared().connector });
      expect(await books!.chargesHeld(payment.id)).toBe(1);
      expect(payment.attempts).toEqual([expect.objectContaining({ connector: crash.prepared().connector, outcome: 'succeeded' })]);
      // Resumed by asking the route's connectors: the processor holds the charge, so nobody sends it
      // again — except to a processor that cannot be asked (Adyen): the same request, under the same
      // Idempotency-Key, to it alone, which answers its first outcome instead of charging again.
      expect(await books!.chargeRequests(payment.id)).toBe(harness.capabilities.has('status_lookup') ? 1 : 2);
      await expectPaidOnce(order.id, payment.id, 4321);
    }, 120_000);

    it.skipIf(!harness.faults)('the processor refused, the next connector charged, then killed: adopted there, charged nowhere else', async () => {
      harness.faults!.refuseNext();
      const { order, payment } = await crashDuringPayment('payment_connector_answered');
      // The backup holds the charge: the processor, which would now be asked first, is not charged.
      expect(payment).toMatchObject({ status: 'succeeded', connector: BACKUP });
      expect(payment.attempts).toEqual([expect.objectContaining({ connector: BACKUP, outcome: 'succeeded' })]);
      expect(await books!.chargesHeld(payment.id)).toBe(0);
      await expectPaidOnce(order.id, payment.id, 4321);
    }, 120_000);

    it('a refund killed between its phases resumes and refunds once', async () => {
      const order = await call(crash.survivor().url, 'POST', '/v1/payment-orders', { key: crash.tenant().testKey, idempotencyKey: crypto.randomUUID(), body: orderBody({ amount: 900 }) });
      const body = { payment_order: order.body.id, payment_method: cardMethod(harness.cards.success) };
      const payment = await call(crash.survivor().url, 'POST', '/v1/payments', { key: crash.tenant().testKey, idempotencyKey: crypto.randomUUID(), body });
      expect(payment.body).toMatchObject({ status: 'succeeded', connector: crash.prepared().connector });

      const idempotencyKey = `refund-crash-${payment.body.id}`;
      const refund = { payment: payment.body.id, amount: 400 };
      await crashing('refund_created', '/v1/refunds', refund, idempotencyKey);
      const res = await retry('/v1/refunds', refund, idempotencyKey);
      expect(res.status, res.text).toBe(201);
      // Taken pending where the processor settles refunds later (Adyen: its REFUND notification).
      if (harness.settleRefund) {
        expect(res.body).toMatchObject({ status: 'pending', amount: 400 });
        await harness.settleRefund(crash.prepared(), res.body.id);
      } else expect(res.body).toMatchObject({ status: 'succeeded', amount: 400 });
      const refunds = await h.query(sql`SELECT status FROM refunds WHERE payment_id = ${parseId('pay', payment.body.id)!}`);
      expect(refunds).toEqual([{ status: 'succeeded' }]);
      expect(await books!.refunded(payment.body.id)).toBe(400);
      await expectLedgerClean(h.db, crash.tenant().accountId);
    }, 120_000);
  });
}
