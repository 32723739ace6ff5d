// Adyen's standard webhooks as the connector reads them (notifications built from Adyen's published
// examples, signed with the SDK's HMAC), and Adyen's units: its currency exponents and the amounts
// it cannot take.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdyenConnector, readAdyenWebhook } from '../../src/connectors/adyen/connector.js';
import { ADYEN_CURRENCIES, adyenAmountLimit, toAdyenAmount } from '../../src/connectors/adyen/money.js';
import { adyenHmac } from '../../src/connectors/adyen/hmac.js';
import { catalogueEntry } from '../../src/connectors/catalogue.js';
import { createHttpClient } from '../../src/connectors/http.js';
import { WebhookVerificationError, type Connector } from '../../src/connectors/types.js';
import { FakeAdyen } from '../support/fakes/adyen.js';

const CURRENT = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';
const PREVIOUS = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const MERCHANT = 'PaymentOrchestratorECOM';
const http = createHttpClient();
let fake: FakeAdyen;
let adyen: Connector;

const make = (hmacKeys: string[], livemode = false) =>
  createAdyenConnector({ apiKey: 'k', merchantAccount: MERCHANT, hmacKeys, livemode, liveUrlPrefix: livemode ? '0123456789abcdef-Demo' : undefined, checkoutBaseUrl: fake.url, publicUrl: () => 'http://x', http });
const parse = (rawBody: string, connector = adyen) => connector.parseWebhook({ headers: { 'content-type': 'application/json' }, rawBody, now: new Date() });
const reasonOf = (run: () => unknown) => {
  try {
    run();
    return 'accepted';
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.reason;
    throw err;
  }
};
const authorisation = (fields: Record<string, unknown>, key = CURRENT, live = false) =>
  fake.notification('AUTHORISATION', { pspReference: 'QFQTPCQ8HXSKGK82', merchantReference: 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa', merchantAccountCode: MERCHANT, success: 'true', ...fields }, key, live);

beforeAll(async () => {
  fake = await new FakeAdyen().start();
  adyen = make([CURRENT, PREVIOUS]);
});
afterAll(async () => {
  http.close();
  await fake.close();
});

describe('Adyen connector: standard webhooks', () => {
  it('AUTHORISATION, CANCELLATION, REFUND and REFUND_FAILED in our words, identified by pspReference, eventCode and success', () => {
    expect(parse(authorisation({}))).toEqual({ eventId: 'QFQTPCQ8HXSKGK82:AUTHORISATION:true', object: 'payment', reference: 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa', state: { kind: 'succeeded', connectorReference: 'QFQTPCQ8HXSKGK82' } });
    expect(parse(authorisation({ success: 'false', reason: 'CVC Declined' }))).toMatchObject({
      eventId: 'QFQTPCQ8HXSKGK82:AUTHORISATION:false',
      state: { kind: 'declined', failureCode: 'incorrect_cvc', declineType: 'fix_data', message: expect.stringMatching(/CVC Declined/) },
    });
    expect(parse(authorisation({ success: 'false', reason: 'Not enough balance' }))).toMatchObject({ state: { failureCode: 'insufficient_funds' } });
    const base = { merchantReference: 'pay_x', merchantAccountCode: MERCHANT, originalReference: 'PAYMENTPSP000001', pspReference: 'MODIFICATION0001' };
    expect(parse(fake.notification('CANCELLATION', { ...base, merchantReference: 'void_x', success: 'true' }, CURRENT))).toMatchObject({ object: 'void', reference: 'void_x', state: { kind: 'canceled', connectorReference: 'MODIFICATION0001' } });
    expect(parse(fake.notification('REFUND', { ...base, merchantReference: 'ref_x', success: 'true' }, CURRENT))).toMatchObject({ object: 'refund', reference: 'ref_x', state: { kind: 'succeeded' } });
    expect(parse(fake.notification('REFUND_FAILED', { ...base, merchantReference: 'ref_x', success: 'true' }, CURRENT))).toMatchObject({
      eventId: 'MODIFICATION0001:REFUND_FAILED:true',
      object: 'refund',
      state: { kind: 'failed', failureCode: 'processing_error' },
    });
  });

  it('verifies with the current or the previous HMAC key; a rotated-out key, a tampered item or no signature is refused', () => {
    expect(reasonOf(() => parse(authorisation({}, PREVIOUS)))).toBe('accepted');
    // Past its grace period the previous key is no longer among the account's keys: stale.
    expect(reasonOf(() => parse(authorisation({}, PREVIOUS), make([CURRENT])))).toBe('signature_invalid');
    expect(reasonOf(() => parse(authorisation({}, 'ff'.repeat(32))))).toBe('signature_invalid');
    expect(reasonOf(() => parse(authorisation({}), make([])))).toBe('signature_invalid');
    const tampered = JSON.parse(authorisation({ success: 'false' }));
    tampered.notificationItems[0].NotificationRequestItem.success = 'true';
    expect(reasonOf(() => parse(JSON.stringify(tampered)))).toBe('signature_invalid');
    const unsigned = JSON.parse(authorisation({}));
    delete unsigned.notificationItems[0].NotificationRequestItem.additionalData.hmacSignature;
    expect(reasonOf(() => parse(JSON.stringify(unsigned)))).toBe('signature_invalid');
  });

  it('refuses what is not one notification item, and a test notification sent to a live account', () => {
    const one = JSON.parse(authorisation({}));
    expect(reasonOf(() => parse('not json'))).toBe('payload_invalid');
    expect(reasonOf(() => parse(JSON.stringify({ live: 'false', notificationItems: [] })))).toBe('payload_invalid');
    expect(reasonOf(() => parse(JSON.stringify({ ...one, notificationItems: [...one.notificationItems, ...one.notificationItems] })))).toBe('payload_invalid');
    expect(reasonOf(() => parse(authorisation({}), make([CURRENT], true)))).toBe('payload_invalid');
    expect(reasonOf(() => parse(authorisation({}, CURRENT, true), make([CURRENT], true)))).toBe('accepted');
  });

  it('names no reference for another merchant account or an event that changes nothing we hold', () => {
    expect(parse(authorisation({ merchantAccountCode: 'SomeoneElse' }))).toMatchObject({ reference: '' });
    // A CAPTURE of an automatic payment, signed as Adyen signs every item: a capture report named by
    // the payment's id, which names no capture of ours (the capture kind applies nothing).
    const capture = JSON.parse(authorisation({}));
    const item = capture.notificationItems[0].NotificationRequestItem;
    item.eventCode = 'CAPTURE';
    delete item.additionalData.hmacSignature;
    item.additionalData.hmacSignature = adyenHmac.calculateHmac(item, CURRENT);
    expect(parse(JSON.stringify(capture))).toMatchObject({ eventId: 'QFQTPCQ8HXSKGK82:CAPTURE:true', object: 'capture', reference: 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa' });
  });
});

describe('Adyen connector: manual capture', () => {
  const base = { merchantAccountCode: MERCHANT, originalReference: 'PAYMENTPSP000001', pspReference: 'MODIFICATION0001' };
  const read = (rawBody: string) => readAdyenWebhook({ hmacKeys: [CURRENT], livemode: false, merchantAccount: MERCHANT }, { headers: {}, rawBody, now: new Date() });

  it('a manual payment asks for manualCapture and is authorised, by its answer and by its AUTHORISATION notification (its metadata echoed)', async () => {
    const charged = await adyen.charge({ reference: 'pay_manual1', amount: 1000, currency: 'EUR', captureMethod: 'manual', card: { number: '4111111145551142', expMonth: 3, expYear: 2099, cvc: '737' } }, AbortSignal.timeout(5000));
    expect(charged).toMatchObject({ kind: 'authorized' });
    const sent = fake.requests.find((r) => r.body.reference === 'pay_manual1')!;
    expect(sent.body).toMatchObject({ additionalData: { manualCapture: 'true' }, metadata: { captureMethod: 'manual' } });
    expect(fake.invalid).toEqual([]);
    const pspReference = (charged as { connectorReference: string }).connectorReference;
    expect(parse(fake.authorisation(pspReference, true, CURRENT))).toMatchObject({ object: 'payment', reference: 'pay_manual1', state: { kind: 'authorized', connectorReference: pspReference } });
    // The metadata as Adyen's document describes it in words: keys prefixed `metadata.`.
    const flat = JSON.parse(authorisation({}));
    const item = flat.notificationItems[0].NotificationRequestItem;
    item.additionalData = { 'metadata.captureMethod': 'manual' };
    item.additionalData.hmacSignature = adyenHmac.calculateHmac(item, CURRENT);
    expect(parse(JSON.stringify(flat))).toMatchObject({ state: { kind: 'authorized' } });
    // Automatic payments are as before.
    expect(parse(authorisation({}))).toMatchObject({ state: { kind: 'succeeded' } });
  });

  it('CAPTURE, CAPTURE_FAILED and CANCELLATION read as capture and void reports, each going to its own kind as it is', () => {
    const captured = fake.notification('CAPTURE', { ...base, merchantReference: 'cap_x', success: 'true' }, CURRENT);
    expect(read(captured)).toEqual({ eventId: 'MODIFICATION0001:CAPTURE:true', object: 'capture', reference: 'cap_x', paymentConnectorReference: 'PAYMENTPSP000001', state: { kind: 'succeeded', connectorReference: 'MODIFICATION0001' } });
    expect(parse(captured)).toEqual(read(captured));
    expect(read(fake.notification('CAPTURE', { ...base, merchantReference: 'cap_x', success: 'false', reason: 'Insufficient balance' }, CURRENT))).toMatchObject({ object: 'capture', state: { kind: 'failed', failureCode: 'capture_declined' } });
    expect(read(fake.notification('CAPTURE_FAILED', { ...base, merchantReference: 'cap_x', success: 'true' }, CURRENT))).toMatchObject({ object: 'capture', reference: 'cap_x', state: { kind: 'failed', failureCode: 'capture_declined' } });
    const cancelled = fake.notification('CANCELLATION', { ...base, merchantReference: 'void_x', success: 'true' }, CURRENT);
    expect(read(cancelled)).toEqual({ eventId: 'MODIFICATION0001:CANCELLATION:true', object: 'void', reference: 'void_x', state: { kind: 'canceled', connectorReference: 'MODIFICATION0001' } });
    expect(parse(cancelled)).toEqual(read(cancelled));
    expect(parse(fake.notification('CANCELLATION', { ...base, merchantReference: 'void_x', success: 'false' }, CURRENT))).toMatchObject({ object: 'void', reference: 'void_x', state: { kind: 'failed' } });
  });
});

describe("Adyen's units", () => {
  it.each([
    [1000, 'EUR', 1000],
    [500, 'JPY', 500],
    [1234, 'KWD', 1234],
    [1234, 'BHD', 1234],
    [5, 'CLP', 500],
    [5, 'ISK', 500],
    [1200, 'IDR', 12],
    [300, 'CVE', 3],
  ])('%i %s is %i for Adyen', (amount, currency, value) => {
    expect(toAdyenAmount(amount, currency)).toEqual({ ok: true, value });
  });

  it.each([
    [1250, 'IDR', /whole units/],
    [1, 'CVE', /whole units/],
    [1000, 'MGA', /does not take MGA/],
    [1000, 'XCG', /does not take XCG/],
  ])('%i %s is refused: routing leaves Adyen out', (amount, currency, problem) => {
    expect(adyenAmountLimit(amount, currency)).toMatch(problem);
    expect(catalogueEntry('adyen')!.amountLimit!(amount, currency)).toMatch(problem);
  });

  it('the catalogue shows the currencies of Adyen’s table', () => {
    expect(catalogueEntry('adyen')!.capabilities.currencies).toEqual(ADYEN_CURRENCIES);
    expect(ADYEN_CURRENCIES).toEqual(expect.arrayContaining(['EUR', 'USD', 'JPY', 'KWD', 'CLP', 'IDR', 'ISK', 'CVE']));
    expect(ADYEN_CURRENCIES).not.toContain('MGA');
  });
});
