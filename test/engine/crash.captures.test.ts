// Crash safety of captures and voids (docs/authorise-and-capture.md) over the processor harnesses
// whose captures settle in the answer (the simulator, Stripe): a service process is killed with
// SIGKILL between the phases of a capture or a void (CRASH_AFTER), and the same request is retried
// with the same Idempotency-Key on another process on the same database. It must resume without
// a second capture at the processor: captured once, booked once, the ledger clean; a void resumed
// leaves the authorisation released and the payment canceled. Adyen's captures and voids settle by
// notification and are not covered here. PostgreSQL only (several processes on one database).
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { call, client, isPostgres, orderBody, type Api, type Tenant } from '../support/helpers.js';
import { cardMethod } from '../support/payments.js';
import { startChild, sendWhileLocked, type Child } from '../support/processes.js';
import { useDatabase } from '../support/fixtures.js';
import { expectLedgerClean } from '../support/payouts.js';
import { HARNESSES } from '../connectors/contract/harnesses.js';
import { routeThrough } from '../connectors/contract/scenarios.js';

for (const make of HARNESSES) {
  const harness = make();
  const held = harness.books?.authorisation;
  describe.skipIf(!isPostgres || !harness.capabilities.has('processes') || !held)(`a capture or a void killed between its phases, over ${harness.name}`, () => {
    beforeAll(() => harness.start());
    afterAll(() => harness.close());
    const h = useDatabase({ postgresOnly: true });
    let tenant: Tenant;
    let survivor: Child;
    let api: Api;
    const env = () => ({ DATABASE_URL: h.databaseUrl!, IDEMPOTENCY_LOCK_TIMEOUT_S: '3', CONNECTOR_TIMEOUT_MS: '700', ...harness.processEnv() });
    beforeAll(async () => {
      tenant = await h.createTenant('Capture crash tenant');
      survivor = h.track(await startChild(env()));
      api = client(survivor.url, tenant.testKey);
      await routeThrough(api, await harness.connect(api, survivor.url));
    }, 120_000);

    const post = (path: string, body: unknown, idempotencyKey: string = crypto.randomUUID()) => call(survivor.url, 'POST', path, { key: tenant.testKey, idempotencyKey, body });

    async function authorised(amount: number) {
      const order = await post('/v1/payment-orders', orderBody({ amount, capture_method: 'manual' }));
      const payment = await post('/v1/payments', { payment_order: order.body.id, payment_method: cardMethod(harness.cards.success) });
      expect(payment.body, payment.text).toMatchObject({ status: 'requires_capture', amount_capturable: amount });
      return { order: order.body, payment: payment.body };
    }

    /** Sends `path` to a process that dies at `crashAfter`, then retries it on the survivor with the same key. */
    async function crashThenRetry(crashAfter: string, path: string, body: unknown) {
      const idempotencyKey = `crash-${crashAfter}-${crypto.randomUUID()}`;
      const child = h.track(await startChild({ ...env(), CRASH_AFTER: crashAfter }));
      const attempt = await call(child.url, 'POST', path, { key: tenant.testKey, idempotencyKey, body }).catch((err: Error) => err);
      expect(attempt).toBeInstanceOf(Error);
      expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
      const res = await sendWhileLocked(() => call(survivor.url, 'POST', path, { key: tenant.testKey, idempotencyKey, body }));
      const replay = await post(path, body, idempotencyKey);
      expect(replay.text).toBe(res.text);
      return res;
    }

    for (const point of ['capture_created', 'capture_connector_answered']) {
      it(`a capture killed at ${point} resumes and captures once`, async () => {
        const { order, payment } = await authorised(2500);
        const res = await crashThenRetry(point, `/v1/payments/${payment.id}/capture`, { amount: 2500 });
        expect(res.status, res.text).toBe(201);
        expect(res.body).toMatchObject({ status: 'succeeded', amount: 2500 });
        expect(await h.query(sql`SELECT status FROM captures WHERE payment_id = ${parseId('pay', payment.id)!}`)).toEqual([{ status: 'succeeded' }]);
        expect(await held!(payment.id)).toEqual({ captured: 2500, voided: false });
        expect((await api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'succeeded', amount_captured: 2500 });
        expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 2500 });
        expect(await h.query(sql`SELECT type FROM journal_entries WHERE source_id = ${parseId('pay', payment.id)!}`)).toEqual([{ type: 'payment' }]);
        await expectLedgerClean(h.db, tenant.accountId);
      }, 120_000);
    }

    for (const point of ['void_created', 'void_connector_answered']) {
      it(`a void killed at ${point} resumes: released at the processor, the payment canceled`, async () => {
        const { order, payment } = await authorised(1700);
        const res = await crashThenRetry(point, `/v1/payments/${payment.id}/cancel`, {});
        expect(res.status, res.text).toBe(200);
        expect(res.body).toMatchObject({ id: payment.id, status: 'canceled', cancellation_reason: 'requested_by_customer' });
        expect(await h.query(sql`SELECT status FROM voids WHERE payment_id = ${parseId('pay', payment.id)!}`)).toEqual([{ status: 'succeeded' }]);
        expect(await held!(payment.id)).toEqual({ captured: 0, voided: true });
        expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
        await expectLedgerClean(h.db, tenant.accountId);
      }, 120_000);
    }
  });
}
