// The Stripe connector against a fake Stripe (test/support/fakes/stripe.ts), at the connector level: what
// is Stripe's own — charges under our payment id as Idempotency-Key, card errors and decline codes
// mapped onto our failure codes, a connection dropped after acting, search lag, refunds located by
// search, Stripe's units, webhooks verified with the current and the previous secret. What every
// processor must do through the service (fallback on 429 or a refused connection, a 500 or a
// timeout after acting left unknown and verified, signatures refused, webhooks applied once) is
// the connector contract suite, test/connectors/contract.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStripeConnector } from '../../src/connectors/stripe/connector.js';
import { toStripeAmount } from '../../src/connectors/stripe/money.js';
import { chargeStateOf } from '../../src/connectors/stripe/mapping.js';
import { isRetryable, WebhookVerificationError, type Connector } from '../../src/connectors/types.js';
import { FakeStripe, STRIPE_CARDS } from '../support/fakes/stripe.js';

let fake: FakeStripe;
let stripe: Connector;
const CURRENT = 'whsec_current_0123456789';
const PREVIOUS = 'whsec_previous_0123456789';
const signal = () => AbortSignal.timeout(5000);
let n = 0;
const ref = (prefix = 'pay') => `${prefix}_${Date.now().toString(36)}${(n++).toString(36)}`;
const card = (number: string) => ({ number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123' });
const charge = (number: string, reference = ref(), amount = 1000, currency = 'EUR') => stripe.charge({ reference, amount, currency, card: card(number) }, signal());

beforeAll(async () => {
  fake = await new FakeStripe().start();
  stripe = createStripeConnector({ secretKey: 'sk_test_connector', webhookSecrets: [CURRENT, PREVIOUS], livemode: false, apiBaseUrl: fake.url });
});
afterAll(() => fake.close());

describe('Stripe connector: charges', () => {
  it('a payment is one PaymentIntent, confirmed and captured at once, under our id; a replay charges nothing more', async () => {
    const reference = ref();
    const first = await charge(STRIPE_CARDS.success, reference);
    expect(first).toMatchObject({ kind: 'succeeded', connectorReference: expect.stringMatching(/^pi_/) });
    const intent = fake.intents.get((first as any).connectorReference)!;
    expect(intent).toMatchObject({ amount: 1000, currency: 'eur', capture_method: 'automatic', metadata: { payment_id: reference }, status: 'succeeded' });
    expect(await charge(STRIPE_CARDS.success, reference)).toEqual(first);
    expect(fake.requests.get(reference)).toBe(2);
    expect([...fake.intents.values()].filter((pi) => pi.metadata.payment_id === reference)).toHaveLength(1);
    // The same key with other parameters: Stripe holds something else under it, so it is verified, not retried elsewhere.
    const other = await charge(STRIPE_CARDS.success, reference, 999);
    expect(other).toMatchObject({ kind: 'error', code: 'invalid_response', message: expect.stringMatching(/same parameters/) });
  });

  it.each([
    [STRIPE_CARDS.declined, 'card_declined', 'generic'],
    [STRIPE_CARDS.doNotHonor, 'card_declined', 'generic'],
    [STRIPE_CARDS.insufficientFunds, 'insufficient_funds', 'retry_later'],
    [STRIPE_CARDS.expired, 'expired_card', 'fix_data'],
    [STRIPE_CARDS.incorrectCvc, 'incorrect_cvc', 'fix_data'],
    [STRIPE_CARDS.stolen, 'card_declined', 'do_not_retry'],
    [STRIPE_CARDS.lost, 'card_declined', 'do_not_retry'],
  ])('card %s is declined as %s (%s), with the PaymentIntent as reference', async (number, failureCode, declineType) => {
    expect(await charge(number)).toMatchObject({ kind: 'declined', failureCode, declineType, connectorReference: expect.stringMatching(/^pi_/) });
  });

  it.each([STRIPE_CARDS.threeDSecureRequired, STRIPE_CARDS.requiresAction])(
    '3-D Secure (%s) with our return URL: requires_action, redirect to Stripe; the outcome comes by status',
    async (number) => {
      const reference = ref();
      const returnUrl = `https://pay.example.com/v1/payments/${reference}/return/token`;
      const answer = await stripe.charge({ reference, amount: 1000, currency: 'EUR', card: card(number), returnUrl }, signal());
      expect(answer).toMatchObject({ kind: 'requires_action', action: { method: 'GET', url: expect.stringMatching(/^https:\/\/hooks\.stripe\.com\/3d_secure_2\//) } });
      const id = (answer as any).connectorReference;
      expect(fake.intents.get(id)).toMatchObject({ status: 'requires_action', next_action: { redirect_to_url: { return_url: returnUrl } } });
      expect(await stripe.chargeStatus({ reference, connectorReference: id }, signal())).toEqual(answer);
      fake.settle(id, 'succeeded');
      expect(await stripe.chargeStatus({ reference, connectorReference: id }, signal())).toEqual({ kind: 'succeeded', connectorReference: id });
    },
  );

  it('3-D Secure failed by the cardholder: authentication_failed', async () => {
    const reference = ref();
    const answer = (await stripe.charge({ reference, amount: 1000, currency: 'EUR', card: card(STRIPE_CARDS.threeDSecureRequired), returnUrl: 'https://pay.example.com/r' }, signal())) as any;
    fake.settle(answer.connectorReference, 'failed');
    expect(await stripe.chargeStatus({ reference, connectorReference: answer.connectorReference }, signal())).toMatchObject({ kind: 'declined', failureCode: 'authentication_failed' });
  });

  it('3-D Secure without a return URL: Stripe is told not to start it; declined authentication_required, the PaymentIntent cancelled', async () => {
    const reference = ref();
    const answer = await charge(STRIPE_CARDS.threeDSecureRequired, reference);
    expect(answer).toMatchObject({ kind: 'declined', failureCode: 'authentication_required', connectorReference: expect.stringMatching(/^pi_/) });
    expect(fake.intents.get((answer as any).connectorReference)).toMatchObject({ status: 'canceled', next_action: null });
  });

  it('use_stripe_sdk (an action for Stripe.js) cannot be performed here: authentication_required', async () => {
    const intent = { id: 'pi_sdk', status: 'requires_action', last_payment_error: null, next_action: { type: 'use_stripe_sdk', use_stripe_sdk: {} } };
    expect(chargeStateOf(intent as any)).toMatchObject({ kind: 'declined', failureCode: 'authentication_required', connectorReference: 'pi_sdk' });
  });

  // The SDK re-sends once, with the same key, a request whose connection closed (even with
  // retries off): the replay gets the answer Stripe kept, so only a second drop loses it. (A 500
  // after acting, a timeout and a refused connection are scenarios of the contract suite.)
  it('a connection dropped twice after acting: connection_lost (unknown); the status finds the charge by our id, a same-key retry charges nothing more', async () => {
    fake.inject('drop_after', 'drop_after');
    const reference = ref();
    const answer = await charge(STRIPE_CARDS.success, reference);
    expect(answer).toMatchObject({ kind: 'error', code: 'connection_lost' });
    expect(isRetryable(answer)).toBe(false);
    const status = await stripe.chargeStatus({ reference, connectorReference: null }, signal());
    expect(status).toMatchObject({ kind: 'succeeded', connectorReference: expect.stringMatching(/^pi_/) });
    expect(await charge(STRIPE_CARDS.success, reference)).toEqual(status);
    expect([...fake.intents.values()].filter((pi) => pi.metadata.payment_id === reference)).toHaveLength(1);
  });

  it('an unknown PaymentIntent is not found', async () => {
    expect(await stripe.chargeStatus({ reference: ref(), connectorReference: null }, signal())).toEqual({ kind: 'not_found' });
    expect(await stripe.chargeStatus({ reference: ref(), connectorReference: 'pi_missing' }, signal())).toEqual({ kind: 'not_found' });
  });

  it('search lags behind creation: not found until Stripe indexes it, found by id at once', async () => {
    fake.searchLagMs = 60_000;
    try {
      const reference = ref();
      const made = (await charge(STRIPE_CARDS.success, reference)) as any;
      expect(await stripe.chargeStatus({ reference, connectorReference: null }, signal())).toEqual({ kind: 'not_found' });
      expect(await stripe.chargeStatus({ reference, connectorReference: made.connectorReference }, signal())).toMatchObject({ kind: 'succeeded' });
    } finally {
      fake.searchLagMs = 0;
    }
  });
});

describe('Stripe connector: refunds', () => {
  it('full and partial refunds under our refund id; above what remains is refused as such', async () => {
    const payment = ref();
    const made = (await charge(STRIPE_CARDS.success, payment, 1000)) as any;
    const refund = (reference: string, amount: number, id: string | null = made.connectorReference) =>
      stripe.refund({ reference, paymentReference: payment, connectorPaymentReference: id, amount, currency: 'EUR' }, signal());
    const first = ref('ref');
    const partial = await refund(first, 400);
    expect(partial).toMatchObject({ kind: 'succeeded', connectorReference: expect.stringMatching(/^re_/) });
    expect(await refund(first, 400)).toEqual(partial);
    // Located by search when we hold no PaymentIntent id.
    expect(await refund(ref('ref'), 600, null)).toMatchObject({ kind: 'succeeded' });
    expect(await refund(ref('ref'), 1)).toMatchObject({ kind: 'failed', failureCode: 'charge_not_refundable' });
    expect(await stripe.refundStatus({ reference: first, connectorReference: (partial as any).connectorReference }, signal())).toEqual(partial);
    expect(await stripe.refundStatus({ reference: first, connectorReference: 're_missing' }, signal())).toEqual({ kind: 'not_found' });
    // Without Stripe's id there is nothing to look up: the core re-sends under the same key instead.
    expect(await stripe.refundStatus({ reference: first, connectorReference: null }, signal())).toEqual({ kind: 'not_found' });
  });

  it('a refund above the captured amount is amount_above_refundable', async () => {
    const payment = ref();
    const made = (await charge(STRIPE_CARDS.success, payment, 500)) as any;
    const answer = await stripe.refund({ reference: ref('ref'), paymentReference: payment, connectorPaymentReference: made.connectorReference, amount: 501, currency: 'EUR' }, signal());
    expect(answer).toMatchObject({ kind: 'failed', failureCode: 'amount_above_refundable' });
  });
});

describe("Stripe connector: Stripe's units", () => {
  it.each([
    [1000, 'EUR', 1000],
    [500, 'JPY', 500],
    [5, 'UGX', 5],
    [1050, 'HUF', 1050],
    [5, 'ISK', 500],
    [1200, 'MGA', 12],
    [1230, 'KWD', 1230],
  ])('%i %s is %i for Stripe', (amount, currency, expected) => {
    expect(toStripeAmount(amount, currency)).toEqual({ ok: true, amount: expected });
  });

  it.each([
    [1250, 'MGA', /whole units/],
    [1234, 'KWD', /ending in 0/],
    [100_000_000, 'EUR', /8 digits/],
    [1_000_000, 'ISK', /8 digits/],
  ])('%i %s is refused before anything is sent', async (amount, currency, problem) => {
    expect(toStripeAmount(amount, currency)).toMatchObject({ ok: false, problem: expect.stringMatching(problem) });
    const reference = ref();
    expect(await charge(STRIPE_CARDS.success, reference, amount, currency)).toMatchObject({ kind: 'error', code: 'request_rejected' });
    expect(fake.requests.has(reference)).toBe(false);
  });
});

describe('Stripe connector: webhooks', () => {
  const parse = (body: string, signature: string, now = new Date()) => stripe.parseWebhook({ headers: { 'stripe-signature': signature }, rawBody: body, now });

  it('verifies with the current or the previous signing secret and reads payments and refunds', async () => {
    const reference = ref();
    const made = (await stripe.charge({ reference, amount: 1000, currency: 'EUR', card: card(STRIPE_CARDS.requiresAction), returnUrl: 'https://pay.example.com/r' }, signal())) as any;
    const intent = fake.settle(made.connectorReference, 'failed');
    for (const secret of [CURRENT, PREVIOUS]) {
      const { body, signature } = fake.event('payment_intent.payment_failed', intent, secret);
      expect(parse(body, signature)).toMatchObject({
        eventId: expect.stringMatching(/^evt_/),
        object: 'payment',
        reference,
        state: { kind: 'declined', failureCode: 'authentication_failed', connectorReference: made.connectorReference },
      });
    }
    const refund = { ...fake.refunds.values().next().value, metadata: { refund_id: 'ref_x' }, status: 'failed', failure_reason: 'expired_or_canceled_card' };
    const { body, signature } = fake.event('refund.updated', refund, CURRENT);
    expect(parse(body, signature)).toMatchObject({ object: 'refund', reference: 'ref_x', state: { kind: 'failed', failureCode: 'processing_error' } });
  });

  // Other secrets and stale timestamps are refused through the service in the contract suite.
  it('refuses missing headers; events about nothing of ours name no reference', () => {
    const object = { object: 'payment_intent', id: 'pi_1', status: 'succeeded', metadata: {} };
    const signed = fake.event('payment_intent.succeeded', object, CURRENT);
    expect(() => stripe.parseWebhook({ headers: {}, rawBody: signed.body, now: new Date() })).toThrow(WebhookVerificationError);
    const fine = fake.event('payment_intent.succeeded', object, CURRENT);
    expect(parse(fine.body, fine.signature)).toMatchObject({ object: 'payment', reference: '' });
    const other = fake.event('customer.created', { object: 'customer', id: 'cus_1' }, CURRENT);
    expect(parse(other.body, other.signature)).toMatchObject({ reference: '' });
  });
});
