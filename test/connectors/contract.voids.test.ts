// The capture contract's voids and expiry through the service (docs/authorise-and-capture.md),
// over every card processor harness that reads its authorisations (test/connectors/contract/
// harnesses.ts: the simulator, Stripe and Adyen against their fakes); test/connectors/
// contract.captures.test.ts covers the connectors' captures themselves. POST /v1/payments/{id}/cancel
// releases the authorisation at the processor; the worker, under a test clock, voids one past
// capture_before (cancellation_reason expired) and a capture then answers 422
// authorization_expired. Where the processor confirms voids by notification (Adyen), the payment
// holds nothing capturable until it comes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { testClock } from '../support/helpers.js';
import { availableOf, eventTypesOf, newOrder, pay } from '../support/payments.js';
import type { Connected, PaymentLike } from './contract/harness.js';
import { HARNESSES } from './contract/harnesses.js';
import { connectRouted } from './contract/scenarios.js';

for (const make of HARNESSES) {
  const harness = make();
  const held = harness.books?.authorisation;
  const confirm = harness.confirmAuthorisationChange?.bind(harness);
  describe.skipIf(!held)(`voids and expiry through the service: ${harness.name}`, () => {
    beforeAll(() => harness.start());
    afterAll(() => harness.close());
    const clock = testClock();
    const h = useService({
      clock,
      late: () => {
        const own = harness.service();
        return { settings: { circuitBreaker: { failureThreshold: 1000 }, connectorTimeoutMs: 5000, ...own.settings }, runtime: own.runtime };
      },
    });
    let processor: Connected;
    beforeAll(async () => {
      processor = await connectRouted(harness, h.api, h.url);
    });

    let keys = 0;
    const key = (what: string) => `${harness.name}-${what}-${keys++}`;
    const paymentOf = async (id: string) => (await h.api.get(`/v1/payments/${id}`)).body;

    async function authorised(amount: number) {
      const order = await newOrder(h.api, { amount, currency: 'EUR', capture_method: 'manual' });
      const res = await pay(h.api, order.id, harness.cards.success);
      expect(res.body, res.text).toMatchObject({ status: 'requires_capture', connector: processor.connector, amount_capturable: amount });
      return { order, payment: res.body };
    }

    /** The void's outcome: at once, or once the processor's notification confirms it. */
    async function confirmed(payment: PaymentLike, answer: { status: string; amount_capturable: number }) {
      if (!confirm) return;
      expect(answer).toMatchObject({ status: 'requires_capture', amount_capturable: 0 });
      await confirm(processor, { voidOf: payment });
    }

    it('a void releases the authorisation at the processor: canceled, the order open, nothing booked, nothing capturable', async () => {
      clock.reset();
      const { order, payment } = await authorised(1500);
      const before = await availableOf(h.api);
      const res = await h.api.post(`/v1/payments/${payment.id}/cancel`, { cancellation_reason: 'duplicate' }, { idempotencyKey: key('void') });
      expect(res.status, res.text).toBe(200);
      await confirmed(payment, res.body);
      expect(await paymentOf(payment.id)).toMatchObject({ status: 'canceled', cancellation_reason: 'duplicate', amount_capturable: 0, amount_captured: 0 });
      expect(await held!(payment.id)).toEqual({ captured: 0, voided: true });
      expect((await h.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
      expect(await eventTypesOf(h.api, payment.id)).toEqual(['payment.created', 'payment.authorized', 'payment.canceled']);
      expect(await availableOf(h.api)).toBe(before);
      const capture = await h.api.post(`/v1/payments/${payment.id}/capture`, {}, { idempotencyKey: key('after-void') });
      expect(capture.status).toBe(422);
      expect(capture.body.error.code).toBe('invalid_state');
      expect(await held!(payment.id)).toEqual({ captured: 0, voided: true });
    });

    it('the worker voids an authorisation past capture_before (expired); a capture then answers authorization_expired', async () => {
      clock.set(Date.now());
      const { order, payment } = await authorised(2200);
      const lapse = Date.parse(payment.capture_before);
      clock.set(lapse - 1000);
      await h.service.runWorker();
      expect((await paymentOf(payment.id)).status).toBe('requires_capture');
      expect(await held!(payment.id)).toEqual({ captured: 0, voided: false });

      clock.set(lapse + 1000);
      expect((await h.service.runWorker()).voids?.expired).toBeGreaterThanOrEqual(1);
      await confirmed(payment, await paymentOf(payment.id));
      expect(await paymentOf(payment.id)).toMatchObject({ status: 'canceled', cancellation_reason: 'expired', amount_capturable: 0 });
      expect(await held!(payment.id)).toEqual({ captured: 0, voided: true });
      expect((await h.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
      const late = await h.api.post(`/v1/payments/${payment.id}/capture`, {}, { idempotencyKey: key('late') });
      expect(late.status, late.text).toBe(422);
      expect(late.body.error.code).toBe('authorization_expired');
      expect(await held!(payment.id)).toEqual({ captured: 0, voided: true });
      clock.reset();
    });
  });
}
