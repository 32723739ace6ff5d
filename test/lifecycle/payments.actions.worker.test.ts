// Customer actions the worker settles: a payment in requires_action is checked with its processor
// like a pending one (the challenge answered but the customer never back and no webhook), and one
// left waiting past ACTION_TIMEOUT_MS fails authentication_failed after a last status check —
// unless that check finds the outcome.
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { eventTypesOf } from '../support/payments.js';
import { answerChallenge, payWithChallenge } from '../support/payments.actions.js';

const ACTION_TIMEOUT_MS = 120_000;
const INTERVAL_MS = 1000;
// The simulator's webhooks go nowhere: only the worker can learn the outcome.
const s = useService({ settings: { actionTimeoutMs: ACTION_TIMEOUT_MS, statusCheckIntervalMs: INTERVAL_MS, simulator: { webhookUrl: 'http://127.0.0.1:9' } } });
/** One worker pass `ms` after now, on the runtime's clock (which the claims read); the clock then goes back. */
async function workerIn(ms: number) {
  s.service.clock.advance(ms);
  try {
    await s.service.runWorker();
  } finally {
    s.service.clock.reset();
  }
}

describe('worker: payments waiting for a customer action', () => {
  it('a status check learns the outcome of a challenge answered without the customer coming back', async () => {
    const { order, payment } = await payWithChallenge(s.api);
    await workerIn((INTERVAL_MS * 2));
    expect((await s.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'requires_action', version: payment.version });

    await answerChallenge(payment.next_action.url, 'completed');
    expect((await s.api.get(`/v1/payments/${payment.id}`)).body.status).toBe('requires_action');
    await workerIn((INTERVAL_MS * 4));
    expect((await s.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'succeeded', next_action: null });
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
    expect(await eventTypesOf(s.api, payment.id)).toEqual(['payment.created', 'payment.requires_action', 'payment.succeeded']);
  });

  it('abandoned past ACTION_TIMEOUT_MS: failed authentication_failed, the order open again', async () => {
    const { order, payment } = await payWithChallenge(s.api);
    // Before the deadline the check finds it still waiting and leaves it.
    await workerIn((ACTION_TIMEOUT_MS - 10_000));
    expect((await s.api.get(`/v1/payments/${payment.id}`)).body.status).toBe('requires_action');

    await workerIn((ACTION_TIMEOUT_MS + 10_000));
    const after = (await s.api.get(`/v1/payments/${payment.id}`)).body;
    expect(after).toMatchObject({ status: 'failed', failure_code: 'authentication_failed', next_action: null, connector: 'simulator_a' });
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    expect(await eventTypesOf(s.api, payment.id)).toEqual(['payment.created', 'payment.requires_action', 'payment.failed']);
  });

  it('past the deadline, the last check still applies an outcome the processor has', async () => {
    const { payment } = await payWithChallenge(s.api);
    await answerChallenge(payment.next_action.url, 'completed');
    await workerIn((ACTION_TIMEOUT_MS + 10_000));
    expect((await s.api.get(`/v1/payments/${payment.id}`)).body.status).toBe('succeeded');
  });
});
