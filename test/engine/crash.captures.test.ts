// Crash safety of captures and voids (docs/authorise-and-capture.md) over every processor harness
// that reads its authorisations (the simulator, Stripe and Adyen against their fakes): a service
// process is killed with SIGKILL between the phases of a capture or a void (CRASH_AFTER), and the
// same request is retried with the same Idempotency-Key on another process on the same database.
// It must resume without a second capture at the processor: captured once, booked once, the
// ledger clean; a void resumed leaves the authorisation released and the payment canceled. Where
// the processor confirms captures and voids by notification (Adyen), the resumed one is pending
// until its notification is delivered, and the processor holds one capture object for it.
// PostgreSQL only (several processes on one database).
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { call, isPostgres, orderBody } from '../support/helpers.js';
import { cardMethod } from '../support/payments.js';
import { useCrashedService } from '../support/processes.js';
import { expectLedgerClean } from '../support/payouts.js';
import { HARNESSES } from '../connectors/contract/harnesses.js';
import { connectRouted } from '../connectors/contract/scenarios.js';

for (const make of HARNESSES) {
  const harness = make();
  const held = harness.books?.authorisation;
  const confirm = harness.confirmAuthorisationChange?.bind(harness);
  describe.skipIf(!isPostgres || !harness.capabilities.has('processes') || !held)(`a capture or a void killed between its phases, over ${harness.name}`, () => {
    beforeAll(() => harness.start());
    afterAll(() => harness.close());
    const crash = useCrashedService({ tenantName: 'Capture crash tenant', env: () => harness.processEnv(), prepare: (api, url) => connectRouted(harness, api, url) });
    const { h } = crash;

    const post = (path: string, body: unknown, idempotencyKey: string = crypto.randomUUID()) =>
      call(crash.survivor().url, 'POST', path, { key: crash.tenant().testKey, idempotencyKey, body });

    async function authorised(amount: number) {
      const order = await post('/v1/payment-orders', orderBody({ amount, capture_method: 'manual' }));
      const payment = await post('/v1/payments', { payment_order: order.body.id, payment_method: cardMethod(harness.cards.success) });
      expect(payment.body, payment.text).toMatchObject({ status: 'requires_capture', amount_capturable: amount });
      return { order: order.body, payment: payment.body };
    }

    /** Sends `path` to a process that dies at `crashAfter`, then retries it on the survivor with the same key. */
    async function crashThenRetry(crashAfter: string, path: string, body: unknown) {
      const idempotencyKey = `crash-${crashAfter}-${crypto.randomUUID()}`;
      await crash.crashing(crashAfter, path, body, idempotencyKey);
      const res = await crash.retry(path, body, idempotencyKey);
      const replay = await post(path, body, idempotencyKey);
      expect(replay.text).toBe(res.text);
      return res;
    }

    for (const point of ['capture_created', 'capture_connector_answered']) {
      it(`a capture killed at ${point} resumes and captures once`, async () => {
        const { order, payment } = await authorised(2500);
        const res = await crashThenRetry(point, `/v1/payments/${payment.id}/capture`, { amount: 2500 });
        expect(res.status, res.text).toBe(201);
        if (confirm) {
          // Taken again under the same Idempotency-Key: Adyen answers its first answer, holding one capture.
          expect(res.body).toMatchObject({ status: 'pending', amount: 2500 });
          expect(await harness.books!.capturesHeld!(res.body.id)).toBe(1);
          expect(await h.query(sql`SELECT type FROM journal_entries WHERE source_id = ${parseId('pay', payment.id)!}`)).toEqual([]);
          await confirm(crash.prepared(), { capture: res.body.id });
          expect(await harness.books!.capturesHeld!(res.body.id)).toBe(1);
          expect((await crash.api().get(`/v1/captures/${res.body.id}`)).body).toMatchObject({ status: 'succeeded', amount: 2500 });
        } else expect(res.body).toMatchObject({ status: 'succeeded', amount: 2500 });
        expect(await h.query(sql`SELECT status FROM captures WHERE payment_id = ${parseId('pay', payment.id)!}`)).toEqual([{ status: 'succeeded' }]);
        expect(await held!(payment.id)).toEqual({ captured: 2500, voided: false });
        expect((await crash.api().get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'succeeded', amount_captured: 2500 });
        expect((await crash.api().get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 2500 });
        expect(await h.query(sql`SELECT type FROM journal_entries WHERE source_id = ${parseId('pay', payment.id)!}`)).toEqual([{ type: 'payment' }]);
        await expectLedgerClean(h.db, crash.tenant().accountId);
      }, 120_000);
    }

    for (const point of ['void_created', 'void_connector_answered']) {
      it(`a void killed at ${point} resumes: released at the processor, the payment canceled`, async () => {
        const { order, payment } = await authorised(1700);
        const res = await crashThenRetry(point, `/v1/payments/${payment.id}/cancel`, {});
        expect(res.status, res.text).toBe(200);
        if (confirm) {
          // Held at 0 until Adyen's CANCELLATION notification says it was released.
          expect(res.body).toMatchObject({ id: payment.id, status: 'requires_capture', amount_capturable: 0 });
          await confirm(crash.prepared(), { voidOf: res.body });
        } else expect(res.body).toMatchObject({ id: payment.id, status: 'canceled' });
        expect((await crash.api().get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'canceled', cancellation_reason: 'requested_by_customer' });
        expect(await h.query(sql`SELECT status FROM voids WHERE payment_id = ${parseId('pay', payment.id)!}`)).toEqual([{ status: 'succeeded' }]);
        expect(await held!(payment.id)).toEqual({ captured: 0, voided: true });
        expect((await crash.api().get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
        await expectLedgerClean(h.db, crash.tenant().accountId);
      }, 120_000);
    }
  });
}
