// The Adyen connector against a fake Adyen (test/support/fakes/adyen.ts) that validates every request
// against Adyen's published Checkout v71 schema: payments under our id as reference and
// Idempotency-Key, every resultCode and the mapped refusal reasons, 3-D Secure by redirect ended by
// /payments/details, refunds, and faults as the core classifies them (429 and a refused connection:
// nothing done, another connector may be tried; 500 or a dropped answer after acting: unknown,
// never tried elsewhere, and a same-key retry gets Adyen's first answer without a second charge).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { adyenCheckoutBase, createAdyenConnector } from '../../src/connectors/adyen/connector.js';
import { createHttpClient } from '../../src/connectors/http.js';
import { callConnector } from '../../src/connectors/router.js';
import { isRetryable, type ChargeRequest, type Connector } from '../../src/connectors/types.js';
import { ADYEN_CARDS, FakeAdyen, ISSUER_COUNTRY } from '../support/fakes/adyen.js';
import { callDepsFor } from '../support/connectors.js';
import { closedPort } from '../support/sockets.js';

const HMAC_KEY = '44782def547aaa06c910c43932b1eb0c71fc68d9d0c057550c48ec2acf6ba056';
const MERCHANT = 'PaymentOrchestratorECOM';
const RETURN_URL = 'https://pay.example.com/v1/payments/pay_x/return';
const http = createHttpClient();
let fake: FakeAdyen;
let adyen: Connector;

let n = 0;
const ref = (prefix = 'pay') => `${prefix}_${Date.now().toString(36)}${(n++).toString(36)}`;
const card = (number: string) => ({ number, expMonth: 3, expYear: new Date().getUTCFullYear() + 2, cvc: '737' });
const make = (over: Partial<Parameters<typeof createAdyenConnector>[0]> = {}) =>
  createAdyenConnector({ apiKey: 'AQE_test_key', merchantAccount: MERCHANT, hmacKeys: [HMAC_KEY], livemode: false, liveUrlPrefix: undefined, checkoutBaseUrl: fake.url, publicUrl: () => 'http://127.0.0.1:3000', http, ...over });
/** One call under the core's rules (transport failures in our words), as the router makes it. */
async function viaCore<T extends { kind: string }>(call: (c: Connector, s: AbortSignal) => Promise<T>, connector = adyen, timeoutMs = 2000) {
  const guarded = await callConnector(callDepsFor(connector, timeoutMs), 'adyen', call);
  if ('skipped' in guarded) throw new Error('skipped');
  return guarded.result;
}
const charge = (number: string, over: Partial<ChargeRequest> = {}) =>
  viaCore((c, s) => c.charge({ reference: ref(), amount: 1000, currency: 'EUR', card: card(number), ...over }, s));

beforeAll(async () => {
  fake = await new FakeAdyen().start();
  adyen = make();
});
afterEach(() => expect(fake.invalid).toEqual([]));
afterAll(async () => {
  http.close();
  await fake.close();
});

describe('Adyen connector: payments', () => {
  it('a payment is one /payments under our id as reference and Idempotency-Key; a replay charges nothing more', async () => {
    const reference = ref();
    const first = await charge(ADYEN_CARDS.success, { reference, amount: 2500, currency: 'USD' });
    // Adyen names the card's issuing country (additionalData.issuerCountry): the routing segment of a saved card.
    expect(first).toEqual({ kind: 'succeeded', connectorReference: expect.stringMatching(/^[0-9A-F]{16}$/), issuingCountry: ISSUER_COUNTRY });
    const sent = fake.requests.find((r) => r.key === reference)!;
    expect(sent).toMatchObject({ path: '/v71/payments', body: { reference, merchantAccount: MERCHANT, amount: { currency: 'USD', value: 2500 }, paymentMethod: { type: 'scheme', expiryMonth: '03' } } });
    expect(await charge(ADYEN_CARDS.success, { reference, amount: 2500, currency: 'USD' })).toEqual(first);
    expect(fake.sent(reference)).toBe(2);
    expect([...fake.payments.values()].filter((p) => p.reference === reference)).toHaveLength(1);
  });

  it.each([
    [ADYEN_CARDS.refused(2), 'card_declined', 'generic'],
    [ADYEN_CARDS.refused(4), 'processing_error', 'retry_later'],
    [ADYEN_CARDS.refused(5), 'card_declined', 'do_not_retry'],
    [ADYEN_CARDS.refused(6), 'expired_card', 'fix_data'],
    [ADYEN_CARDS.refused(11), 'authentication_failed', 'authentication_required'],
    [ADYEN_CARDS.refused(12), 'insufficient_funds', 'retry_later'],
    [ADYEN_CARDS.refused(24), 'incorrect_cvc', 'fix_data'],
    [ADYEN_CARDS.refused(26), 'card_declined', 'do_not_retry'],
    [ADYEN_CARDS.refused(38), 'authentication_required', 'authentication_required'],
    [ADYEN_CARDS.error, 'processing_error', 'processor'],
    [ADYEN_CARDS.cancelled, 'processing_error', 'processor'],
    // A Mastercard merchant advice code outranks the reason (2 Refused alone is generic).
    [ADYEN_CARDS.adviceDoNotRetry, 'card_declined', 'do_not_retry'],
    [ADYEN_CARDS.adviceRetryLater, 'card_declined', 'retry_later'],
  ])('card %s is declined as %s (%s), with the pspReference', async (number, failureCode, declineType) => {
    expect(await charge(number)).toMatchObject({ kind: 'declined', failureCode, declineType, connectorReference: expect.stringMatching(/^[0-9A-F]{16}$/) });
  });

  it('Received is pending: there is no status lookup, the check reports it still pending; the webhook settles it', async () => {
    const reference = ref();
    const answer = (await charge(ADYEN_CARDS.received, { reference })) as { kind: string; connectorReference: string };
    expect(answer).toMatchObject({ kind: 'pending' });
    const status = await viaCore((c, s) => c.chargeStatus({ reference, connectorReference: answer.connectorReference }, s));
    expect(status).toEqual({ kind: 'pending', connectorReference: answer.connectorReference });
    const event = adyen.parseWebhook({ headers: {}, rawBody: fake.authorisation(answer.connectorReference, true, HMAC_KEY), now: new Date() });
    expect(event).toEqual({ eventId: `${answer.connectorReference}:AUTHORISATION:true`, object: 'payment', reference, state: { kind: 'succeeded', connectorReference: answer.connectorReference } });
  });
});

describe('Adyen connector: 3-D Secure', () => {
  it('with a return URL: requires_action at the redirect, then /payments/details with the redirectResult settles it', async () => {
    for (const outcome of ['authorised', 'refused'] as const) {
      const reference = ref();
      const answer = await charge(ADYEN_CARDS.threeDS, { reference, returnUrl: RETURN_URL });
      expect(answer).toEqual({ kind: 'requires_action', connectorReference: expect.any(String), action: { method: 'GET', url: expect.stringMatching(/^https:\/\/checkoutshopper-test\.adyen\.com\//) } });
      const sent = fake.requests.find((r) => r.key === reference)!.body;
      expect(sent).toMatchObject({ returnUrl: RETURN_URL, authenticationData: { threeDSRequestData: { nativeThreeDS: 'disabled' } } });
      const psp = (answer as { connectorReference: string }).connectorReference;
      const params = { redirectResult: fake.challenge(psp, outcome) };
      const done = await viaCore((c, s) => c.completeAction!({ reference, connectorReference: psp, params }, s));
      expect(done).toEqual(
        outcome === 'authorised'
          ? { kind: 'succeeded', connectorReference: psp }
          : { kind: 'declined', connectorReference: psp, failureCode: 'authentication_failed', declineType: 'authentication_required', message: expect.stringMatching(/3D Not Authenticated/) },
      );
      expect(fake.requests.at(-1)).toMatchObject({ path: '/v71/payments/details', key: `${reference}-details` });
      // The customer reloads the return page: Adyen replays its answer under the same key.
      expect(await viaCore((c, s) => c.completeAction!({ reference, connectorReference: psp, params }, s))).toEqual(done);
    }
  });

  it('a redirect to be POSTed carries its form fields; back without a redirectResult it is still waiting', async () => {
    const reference = ref();
    const answer = (await charge(ADYEN_CARDS.threeDSPost, { reference, returnUrl: RETURN_URL })) as any;
    expect(answer.action).toEqual({ method: 'POST', url: expect.any(String), data: { MD: answer.connectorReference, PaReq: expect.any(String), TermUrl: RETURN_URL } });
    expect(await viaCore((c, s) => c.completeAction!({ reference, connectorReference: answer.connectorReference, params: {} }, s))).toEqual({ kind: 'pending', connectorReference: answer.connectorReference });
  });

  it('without a return URL no redirect is started: Adyen is told not to authenticate, and the issuer that insists declines', async () => {
    const reference = ref();
    expect(await charge(ADYEN_CARDS.threeDS, { reference })).toMatchObject({ kind: 'declined', failureCode: 'authentication_required' });
    expect(fake.requests.find((r) => r.key === reference)!.body).toMatchObject({ returnUrl: 'http://127.0.0.1:3000', authenticationData: { attemptAuthentication: 'never' } });
  });
});

describe('Adyen connector: faults', () => {
  it('429: nothing was done, another connector may be tried', async () => {
    fake.inject('429');
    const reference = ref();
    const answer = await charge(ADYEN_CARDS.success, { reference });
    expect(answer).toMatchObject({ kind: 'error', code: 'processor_error' });
    expect(isRetryable(answer)).toBe(true);
    expect(fake.paymentOf(reference)).toBeUndefined();
  });

  it.each([
    ['500_after', 'invalid_response'],
    ['drop_after', 'connection_lost'],
  ] as const)('%s: unknown (never tried elsewhere); a same-key retry gets the first answer, with one charge', async (fault, code) => {
    fake.inject(fault);
    const reference = ref();
    const answer = await charge(ADYEN_CARDS.success, { reference });
    expect(answer).toMatchObject({ kind: 'error', code });
    expect(isRetryable(answer)).toBe(false);
    // No lookup without the pspReference: the status check cannot tell (the payment stays pending).
    expect(await viaCore((c, s) => c.chargeStatus({ reference, connectorReference: null }, s))).toMatchObject({ kind: 'error' });
    const again = await charge(ADYEN_CARDS.success, { reference });
    expect(again).toEqual({ kind: 'succeeded', connectorReference: fake.paymentOf(reference)!.pspReference, issuingCountry: ISSUER_COUNTRY });
    expect([...fake.payments.values()].filter((p) => p.reference === reference)).toHaveLength(1);
  });

  it('no answer before the deadline is a timeout; a refused connection is retryable; a bad key is refused as such', async () => {
    fake.inject('hang_after');
    const late = await viaCore((c, s) => c.charge({ reference: ref(), amount: 100, currency: 'EUR', card: card(ADYEN_CARDS.success) }, s), adyen, 200);
    expect(late).toMatchObject({ kind: 'error', code: 'timeout' });
    const closed = make({ checkoutBaseUrl: `http://127.0.0.1:${await closedPort()}` });
    const refused = await viaCore((c, s) => c.charge({ reference: ref(), amount: 100, currency: 'EUR', card: card(ADYEN_CARDS.success) }, s), closed);
    expect(refused).toMatchObject({ kind: 'error', code: 'connection_refused' });
    expect(isRetryable(refused)).toBe(true);
    const keyless = await viaCore((c, s) => c.charge({ reference: ref(), amount: 100, currency: 'EUR', card: card(ADYEN_CARDS.success) }, s), make({ apiKey: '' }));
    expect(keyless).toMatchObject({ kind: 'error', code: 'request_rejected', message: expect.stringMatching(/401/) });
  });
});

describe('Adyen connector: refunds', () => {
  it('full and partial refunds under our refund id are taken (received); the REFUND notification settles each', async () => {
    const payment = ref();
    const made = (await charge(ADYEN_CARDS.success, { reference: payment, amount: 1000 })) as { connectorReference: string };
    const refund = (reference: string, amount: number, psp: string | null = made.connectorReference) =>
      viaCore((c, s) => c.refund({ reference, paymentReference: payment, connectorPaymentReference: psp, amount, currency: 'EUR' }, s));
    const first = ref('ref');
    const partial = (await refund(first, 400)) as { kind: string; connectorReference: string };
    expect(partial).toEqual({ kind: 'pending', connectorReference: expect.any(String) });
    expect(fake.requests.at(-1)).toMatchObject({ path: `/v71/payments/${made.connectorReference}/refunds`, key: first, body: { reference: first, amount: { value: 400 } } });
    expect(await refund(first, 400)).toEqual(partial);
    const rest = ref('ref');
    const full = (await refund(rest, 600)) as { connectorReference: string };
    expect(fake.payments.get(made.connectorReference)!.refunded).toBe(1000);
    expect(await viaCore((c, s) => c.refundStatus({ reference: first, connectorReference: partial.connectorReference }, s))).toEqual(partial);
    expect(await viaCore((c, s) => c.refundStatus({ reference: first, connectorReference: null }, s))).toEqual({ kind: 'not_found' });
    const parse = (body: string) => adyen.parseWebhook({ headers: {}, rawBody: body, now: new Date() });
    expect(parse(fake.refunded(partial.connectorReference, true, HMAC_KEY))).toEqual({
      eventId: `${partial.connectorReference}:REFUND:true`,
      object: 'refund',
      reference: first,
      state: { kind: 'succeeded', connectorReference: partial.connectorReference },
    });
    expect(parse(fake.refunded(full.connectorReference, false, HMAC_KEY))).toMatchObject({ object: 'refund', reference: rest, state: { kind: 'failed', failureCode: 'processing_error' } });
    // Without the payment's pspReference there is nothing to refund at Adyen yet.
    expect(await refund(ref('ref'), 1, null)).toMatchObject({ kind: 'error', code: 'request_rejected' });
  });
});

describe('where requests go', () => {
  it("ADYEN_CHECKOUT_BASE_URL when set; else Adyen's test endpoint, or the account's live endpoint from its prefix", () => {
    expect(adyenCheckoutBase({ livemode: true, liveUrlPrefix: '1797a841fbb37ca7-AdyenDemo', checkoutBaseUrl: 'http://127.0.0.1:9' })).toBe('http://127.0.0.1:9/v71');
    expect(adyenCheckoutBase({ livemode: false, liveUrlPrefix: undefined, checkoutBaseUrl: undefined })).toBe('https://checkout-test.adyen.com/v71');
    expect(adyenCheckoutBase({ livemode: true, liveUrlPrefix: '1797a841fbb37ca7-AdyenDemo', checkoutBaseUrl: undefined })).toBe(
      'https://1797a841fbb37ca7-AdyenDemo-checkout-live.adyenpayments.com/checkout/v71',
    );
  });
});
