// The retry of a payment request whose first phase committed resumes that payment, even when the
// card's expiry month ended in between: the expiry check ran when the payment was created, and
// the charge may already exist, so it must not turn the retry into a permanent 400.
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/connectors/simulator/processor.js';
import { CARDS, cardMethod, newOrder } from '../support/payments.js';
import { useService } from '../support/fixtures.js';
import { testClock } from '../support/helpers.js';

describe('resuming a payment across the end of its card expiry month', () => {
  // Last seconds of the previous month (UTC): the order, created on the real clock, is not yet expired.
  const real = new Date();
  const monthStart = Date.UTC(real.getUTCFullYear(), real.getUTCMonth(), 1);
  const clock = testClock();
  const h = useService({ clock, runtime: { simulatorClock: { ...systemClock, now: clock.now } } });
  const { api } = h;

  const cases = [
    // The charge was booked before midnight: the retry finds it at the processor and adopts it.
    { crashAfter: 'payment_connector_answered', outcome: { status: 'succeeded' } },
    // Nothing was sent yet: the retry charges, and the processor is the one to decline the expired card.
    { crashAfter: 'payment_created', outcome: { status: 'failed', failure_code: 'expired_card' } },
  ] as const;

  it.each(cases)('a retry after a crash at $crashAfter resumes past midnight instead of answering card expired', async ({ crashAfter, outcome }) => {
    clock.set(monthStart - 10_000);
    const order = await newOrder(api);
    const expiring = clock.now();
    const body = { payment_order: order.id, payment_method: cardMethod(CARDS.success, { exp_month: expiring.getUTCMonth() + 1, exp_year: expiring.getUTCFullYear() }) };
    const idempotencyKey = `resume-expiry-${order.id}`;

    const crashed = await h.service.crashingAt(crashAfter, () => api.post('/v1/payments', body, { idempotencyKey }));
    expect(crashed.status, crashed.text).toBe(500);

    clock.set(monthStart + 5_000); // the card has expired now
    const fresh = await newOrder(api);
    const refused = await api.post('/v1/payments', { ...body, payment_order: fresh.id });
    expect(refused.status, refused.text).toBe(400); // a new payment still checks the expiry

    const retried = await api.post('/v1/payments', body, { idempotencyKey });
    expect(retried.status, retried.text).toBe(201);
    expect(retried.body).toMatchObject({ ...outcome, connector: 'simulator_a', payment_order: order.id });
    const listed = (await api.get(`/v1/payments?payment_order=${order.id}`)).body.data;
    expect(listed.map((p: { id: string }) => p.id)).toEqual([retried.body.id]);
    expect(h.service.simulator().chargeRequests.get(retried.body.id)).toBe(1);
  });
});
