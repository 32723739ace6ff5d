// The in-process simulated processors keep their books in the service's database: a service
// process killed with SIGKILL and started again on the same PostgreSQL database meets the same
// simulated processors. A pending payment, payout and mandate stay pending (the worker's status
// checks and ?refresh=true ask the processor, which still holds them, long past the time a
// processor that forgot them would have them failed or sent again) and resolve through their test
// helpers; an outcome a killed process had scheduled is still reported, by another process.
// PostgreSQL only: several processes on one database.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { client, isPostgres, orderBody, type Tenant, eventually, type Api } from '../support/helpers.js';
import { CARDS, cardMethod } from '../support/payments.js';
import { bankAccount } from '../support/payouts.js';
import { mandateBody, ENDINGS } from '../support/mandates.js';
import { useDatabase } from '../support/fixtures.js';
import { killChild, stopChild, startChild } from '../support/processes.js';

describe.skipIf(!isPostgres)('the simulated processors outlive a SIGKILL of the service process', () => {
  const h = useDatabase({ postgresOnly: true });
  // Short windows, so that a processor that had forgotten its objects would be found out well
  // within the test: payments and mandates no connector holds are failed after the lock timeout,
  // route time and check interval (4 s here), and the worker checks every 200 ms.
  const env = (extra: Record<string, string> = {}) => ({
    DATABASE_URL: h.databaseUrl!,
    ROLES: 'api,worker',
    IDEMPOTENCY_LOCK_TIMEOUT_S: '2',
    CONNECTOR_TIMEOUT_MS: '400',
    STATUS_CHECK_INTERVAL_MS: '200',
    WORKER_INTERVAL_MS: '100',
    SIMULATOR_PENDING_DELAY_MS: '600000',
    ...extra,
  });
  const start = async (extra?: Record<string, string>) => {
    const child = h.track(await startChild(env(extra)));
    return { child, api: client(child.url, tenant.testKey) };
  };

  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await h.createTenant('Restart tenant');
  });

  async function pendingObjects(api: Api) {
    const order = await api.post('/v1/payment-orders', orderBody({ amount: 2500 }));
    const payment = await api.post('/v1/payments', { payment_order: order.body.id, payment_method: cardMethod(CARDS.pending) });
    expect(payment.body).toMatchObject({ status: 'pending', connector: 'simulator_a' });

    expect((await api.post('/v1/test-helpers/balance/fund', { amount: 10_000, currency: 'EUR' })).status).toBe(201);
    const beneficiary = await api.post('/v1/beneficiaries', { name: 'Ada Lovelace', type: 'individual', bank_account: bankAccount('0003') });
    const created = await api.post('/v1/payouts', { beneficiary: beneficiary.body.id, amount: 700, currency: 'EUR', reference: `po-${crypto.randomUUID()}` });
    expect(created.status, created.text).toBe(201);
    // Submitted right after create: wait until the simulated bank holds it in transit.
    const payout = await eventually(() => api.get(`/v1/payouts/${created.body.id}`), (res) => res.body.connector_reference !== null);
    expect(payout.body).toMatchObject({ status: 'processing', connector: 'simulator_a' });

    const mandate = await api.post('/v1/mandates', mandateBody('sepa_core', ENDINGS.pending));
    expect(mandate.body).toMatchObject({ status: 'pending', connector: 'simulator_a' });
    return { payment: payment.body, payout: payout.body, mandate: mandate.body };
  }

  it('pending payment, payout and mandate are still pending after the restart and resolve through their helpers', async () => {
    const first = await start();
    const held = await pendingObjects(first.api);
    await killChild(first.child);

    const restarted = await start();
    // Past every window in which a forgetful processor would show (the objects are ~4 s old by
    // then), with the restarted worker checking all three all along.
    const createdAt = Date.parse(held.payment.created_at);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, createdAt + 6000 - Date.now())));
    const api = restarted.api;
    const same = (now: { status: string; connector_reference: string | null }, before: { connector_reference: string | null }, status: string) =>
      expect(now).toMatchObject({ status, connector_reference: before.connector_reference });
    same((await api.get(`/v1/payments/${held.payment.id}`)).body, held.payment, 'pending');
    same((await api.get(`/v1/payments/${held.payment.id}?refresh=true`)).body, held.payment, 'pending');
    same((await api.get(`/v1/payouts/${held.payout.id}`)).body, held.payout, 'processing');
    same((await api.get(`/v1/mandates/${held.mandate.id}`)).body, held.mandate, 'pending');

    const payment = await api.post(`/v1/test-helpers/payments/${held.payment.id}/resolve`, { outcome: 'succeeded' });
    expect(payment.status, payment.text).toBe(200);
    same(payment.body, held.payment, 'succeeded');
    const payout = await api.post(`/v1/test-helpers/payouts/${held.payout.id}/resolve`, { outcome: 'paid' });
    expect(payout.status, payout.text).toBe(200);
    same(payout.body, held.payout, 'paid');
    const mandate = await api.post(`/v1/test-helpers/mandates/${held.mandate.id}/resolve`, { outcome: 'active' });
    expect(mandate.status, mandate.text).toBe(200);
    same(mandate.body, held.mandate, 'active');

    // One object each at the simulated processor: none was sent again after the restart.
    const books = await h.query(sql`SELECT kind, count(*)::int AS n FROM simulator_objects WHERE reference IN (${held.payment.id}, ${held.payout.id}, ${held.mandate.id}) GROUP BY kind ORDER BY kind`);
    expect(books).toEqual([
      { kind: 'charge', n: 1 },
      { kind: 'mandate', n: 1 },
      { kind: 'payout', n: 1 },
    ]);
    await stopChild(restarted.child);
  }, 120_000);

  it('an outcome the killed process had scheduled is reported by the process still running', async () => {
    const survivor = await start();
    // This process's processors settle pending charges after 1.5 s; it dies before that.
    const doomed = await start({ SIMULATOR_PENDING_DELAY_MS: '1500' });
    const order = await doomed.api.post('/v1/payment-orders', orderBody({ amount: 1500 }));
    const created = await doomed.api.post('/v1/payments', { payment_order: order.body.id, payment_method: cardMethod(CARDS.pending) });
    expect(created.body).toMatchObject({ status: 'pending', connector: 'simulator_a' });
    await killChild(doomed.child);

    const settled = await eventually(() => survivor.api.get(`/v1/payments/${created.body.id}`), (res) => res.body.status !== 'pending', 15_000);
    expect(settled.body).toMatchObject({ status: 'succeeded', connector_reference: created.body.connector_reference });
    // The processor's report was delivered, by the survivor: the process that scheduled it is dead.
    const received = await h.query(sql`SELECT connector FROM connector_webhook_events WHERE object_id = ${created.body.id}`);
    expect(received).toEqual([{ connector: 'simulator_a' }]);
    expect((await survivor.api.get(`/v1/payment-orders/${order.body.id}`)).body.status).toBe('paid');
    await stopChild(survivor.child);
  }, 120_000);
});
