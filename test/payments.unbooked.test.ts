// A charge request that timed out and that the processor never booked: the payment waits while
// the charge may still be on its way, then the worker fails it (nothing was charged) and the
// order opens again for another attempt — instead of both staying pending and processing forever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTenant, createTestDatabase, type TestDatabase } from './helpers.js';
import { CARDS, eventTypesOf, orderAndPay, startPaymentsService, type Api, type PaymentsTestService } from './payments.helpers.js';
import { runWorkerOnce } from '../src/worker/worker.js';
import { abandonAfterMs } from '../src/movement/saga.js';
import { connectorError, type Connector } from '../src/connectors/types.js';

/** A processor that swallows every charge request: no answer, no booking. */
function lostRequests(name: string): Connector {
  const notFound = async () => ({ kind: 'not_found' as const });
  return {
    name,
    modes: ['test'],
    paymentMethodTypes: ['card'],
    charge: async () => connectorError('timeout', 'no answer within the timeout'),
    chargeStatus: notFound,
    refund: async () => connectorError('processor_error', 'unused'),
    refundStatus: notFound,
    parseWebhook: () => {
      throw new Error('unused');
    },
  } as unknown as Connector;
}

describe('a timed-out charge the processor never booked', () => {
  let testDb: TestDatabase;
  let service: PaymentsTestService;
  let api: Api;
  let clockMs = Date.now();
  const log = { info: () => {}, error: () => {} };

  beforeAll(async () => {
    testDb = await createTestDatabase();
    service = await startPaymentsService(testDb, {
      runtime: { connectors: [lostRequests('simulator_a'), lostRequests('simulator_b')], now: () => new Date(clockMs) },
    });
    api = client(service.url, (await createTenant(testDb.database)).testKey);
  });
  afterAll(async () => {
    await service?.close();
    await testDb?.drop();
  });

  it('stays pending while it may still arrive, then fails and reopens the order', async () => {
    const { order, payment } = await orderAndPay(api, CARDS.success);
    expect(payment).toMatchObject({ status: 'pending', connector: 'simulator_a' });
    expect(payment.attempts.map((a: any) => a.connector)).toEqual(['simulator_a']); // a timeout never falls back

    clockMs += service.config.payments.statusCheckIntervalMs + 1;
    await runWorkerOnce({ db: testDb.database.db, log, payments: service.payments, now: () => new Date(clockMs) });
    expect((await api.get(`/v1/payments/${payment.id}`)).body.status).toBe('pending');
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('processing');

    clockMs += abandonAfterMs(service.payments, 2);
    await runWorkerOnce({ db: testDb.database.db, log, payments: service.payments, now: () => new Date(clockMs) });
    const failed = (await api.get(`/v1/payments/${payment.id}`)).body;
    expect(failed).toMatchObject({ status: 'failed', failure_code: 'processing_error', connector: 'simulator_a' });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.failed']);
    const balance = (await api.get('/v1/balance')).body;
    expect(balance.available.every((a: any) => a.amount === 0)).toBe(true);
  });

  it('is not failed as soon as the resume deadline plus one route time has passed (a margin for skew and late booking)', async () => {
    const createdAt = clockMs;
    const { order, payment } = await orderAndPay(api, CARDS.success);
    const { idempotencyLockTimeoutS } = service.payments;
    const { connectorTimeoutMs, statusCheckIntervalMs } = service.config.payments;
    // A worker clock a few seconds ahead of the API's, right past the old abandonment time.
    clockMs = createdAt + idempotencyLockTimeoutS * 1000 + statusCheckIntervalMs + 2 * connectorTimeoutMs + 5_000;
    expect(clockMs - createdAt).toBeLessThan(abandonAfterMs(service.payments, 2));
    await runWorkerOnce({ db: testDb.database.db, log, payments: service.payments, now: () => new Date(clockMs) });
    expect((await api.get(`/v1/payments/${payment.id}`)).body.status).toBe('pending');
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('processing');

    // The next status check is one interval after that pass.
    clockMs = Math.max(createdAt + abandonAfterMs(service.payments, 2), clockMs + statusCheckIntervalMs + 1);
    await runWorkerOnce({ db: testDb.database.db, log, payments: service.payments, now: () => new Date(clockMs) });
    expect((await api.get(`/v1/payments/${payment.id}`)).body.status).toBe('failed');
  });
});
