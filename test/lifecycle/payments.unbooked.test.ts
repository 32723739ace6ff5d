// A charge request that timed out and that the processor never booked: the payment waits while
// the charge may still be on its way, then the worker fails it (nothing was charged) and the
// order opens again for another attempt — instead of both staying pending and processing forever.
import { describe, expect, it } from 'vitest';
import { CARDS, eventTypesOf, orderAndPay } from '../support/payments.js';
import { abandonAfterMs } from '../../src/movement/saga.js';
import { connectorError, type Connector } from '../../src/connectors/types.js';
import { useService } from '../support/fixtures.js';
import { testClock } from '../support/helpers.js';

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
  const clock = testClock();
  const h = useService({ clock, runtime: { connectors: [lostRequests('simulator_a'), lostRequests('simulator_b')] } });
  const { api } = h;
  const pass = () => h.service.runWorker();

  it('stays pending while it may still arrive, then fails and reopens the order', async () => {
    const { order, payment } = await orderAndPay(api, CARDS.success);
    expect(payment).toMatchObject({ status: 'pending', connector: 'simulator_a' });
    expect(payment.attempts.map((a: any) => a.connector)).toEqual(['simulator_a']); // a timeout never falls back

    clock.advance(h.service.config.payments.statusCheckIntervalMs + 1);
    await pass();
    expect((await api.get(`/v1/payments/${payment.id}`)).body.status).toBe('pending');
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('processing');

    clock.advance(abandonAfterMs(h.service.payments, 2));
    await pass();
    const failed = (await api.get(`/v1/payments/${payment.id}`)).body;
    expect(failed).toMatchObject({ status: 'failed', failure_code: 'processing_error', connector: 'simulator_a' });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.failed']);
    const balance = (await api.get('/v1/balance')).body;
    expect(balance.available.every((a: any) => a.amount === 0)).toBe(true);
  });

  it('is not failed as soon as the resume deadline plus one route time has passed (a margin for skew and late booking)', async () => {
    const createdAt = clock.now().getTime();
    const { order, payment } = await orderAndPay(api, CARDS.success);
    const { idempotencyLockTimeoutS } = h.service.payments;
    const { connectorTimeoutMs, statusCheckIntervalMs } = h.service.config.payments;
    // A worker clock a few seconds ahead of the API's, right past the old abandonment time.
    clock.set(createdAt + idempotencyLockTimeoutS * 1000 + statusCheckIntervalMs + 2 * connectorTimeoutMs + 5_000);
    expect(clock.now().getTime() - createdAt).toBeLessThan(abandonAfterMs(h.service.payments, 2));
    await pass();
    expect((await api.get(`/v1/payments/${payment.id}`)).body.status).toBe('pending');
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('processing');

    // The next status check is one interval after that pass.
    clock.set(Math.max(createdAt + abandonAfterMs(h.service.payments, 2), clock.now().getTime() + statusCheckIntervalMs + 1));
    await pass();
    expect((await api.get(`/v1/payments/${payment.id}`)).body.status).toBe('failed');
  });
});
