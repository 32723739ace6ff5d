// The retry of a payment request whose first phase committed resumes that payment, even when the
// card's expiry month ended in between: the expiry check ran when the payment was created, and
// the charge may already exist, so it must not turn the retry into a permanent 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/connectors/simulator/processor.js';
import { client, createTenant, createTestDatabase, type TestDatabase } from './helpers.js';
import { CARDS, cardMethod, newOrder, startPaymentsService, type Api, type PaymentsTestService } from './payments.helpers.js';

describe('resuming a payment across the end of its card expiry month', () => {
  let testDb: TestDatabase;
  let service: PaymentsTestService;
  let api: Api;
  // Last seconds of the previous month (UTC): the order, created on the real clock, is not yet expired.
  const real = new Date();
  const monthStart = Date.UTC(real.getUTCFullYear(), real.getUTCMonth(), 1);
  let clockMs = Date.now();

  beforeAll(async () => {
    testDb = await createTestDatabase();
    const now = () => new Date(clockMs);
    service = await startPaymentsService(testDb, { runtime: { now, simulatorClock: { ...systemClock, now } } });
    api = client(service.url, (await createTenant(testDb.database)).testKey);
  });
  afterAll(async () => {
    await service?.close();
    await testDb?.drop();
  });

  const cases = [
    // The charge was booked before midnight: the retry finds it at the processor and adopts it.
    { crashAfter: 'payment_connector_answered', outcome: { status: 'succeeded' } },
    // Nothing was sent yet: the retry charges, and the processor is the one to decline the expired card.
    { crashAfter: 'payment_created', outcome: { status: 'failed', failure_code: 'expired_card' } },
  ] as const;

  it.each(cases)('a retry after a crash at $crashAfter resumes past midnight instead of answering card expired', async ({ crashAfter, outcome }) => {
    clockMs = monthStart - 10_000;
    const order = await newOrder(api);
    const expiring = new Date(clockMs);
    const body = { payment_order: order.id, payment_method: cardMethod(CARDS.success, { exp_month: expiring.getUTCMonth() + 1, exp_year: expiring.getUTCFullYear() }) };
    const idempotencyKey = `resume-expiry-${order.id}`;

    const original = service.payments.crashPoint;
    service.payments.crashPoint = (point) => {
      if (point === crashAfter) throw new Error(`simulated crash at ${point}`);
    };
    try {
      const crashed = await api.post('/v1/payments', body, { idempotencyKey });
      expect(crashed.status, crashed.text).toBe(500);
    } finally {
      service.payments.crashPoint = original;
    }

    clockMs = monthStart + 5_000; // the card has expired now
    const fresh = await newOrder(api);
    const refused = await api.post('/v1/payments', { ...body, payment_order: fresh.id });
    expect(refused.status, refused.text).toBe(400); // a new payment still checks the expiry

    const retried = await api.post('/v1/payments', body, { idempotencyKey });
    expect(retried.status, retried.text).toBe(201);
    expect(retried.body).toMatchObject({ ...outcome, connector: 'simulator_a', payment_order: order.id });
    const listed = (await api.get(`/v1/payments?payment_order=${order.id}`)).body.data;
    expect(listed.map((p: { id: string }) => p.id)).toEqual([retried.body.id]);
    const sim = service.payments.connectors.simulator!.processors.get('simulator_a')!;
    expect(sim.chargeRequests.get(retried.body.id)).toBe(1);
  });
});
