// Decline types: each connector's table read against the networks' categories (Visa decline
// categories 1–4, Mastercard merchant advice codes), Adyen's table against every refusal code it
// documents, and what a payment shows — the attempt's and the failed payment's decline_type —
// through the service with the simulators' decline cards (docs/test-mode.md).
import { describe, expect, it } from 'vitest';
import { ADVISED_WAITS, merchantAdviceType } from '../../src/connectors/declines.js';
import { DECLINE_TYPES } from '../../src/kernel/decline-types.js';
import { ADYEN_REFUSALS, adyenDeclineOf } from '../../src/connectors/adyen/declines.js';
import { STRIPE_CARD_ERROR_CODES, STRIPE_DECLINE_CODES, stripeDeclineOf } from '../../src/connectors/stripe/declines.js';
import { DECLINE_OF_REFUSAL } from '../../src/connectors/simulator/declines.js';
import { CARDS, newOrder, pay } from '../support/payments.js';
import { useService } from '../support/fixtures.js';

// Adyen's documented refusalReasonCode values (https://docs.adyen.com/development-resources/refusal-reasons),
// 0 (Authorised) aside: 1, 13 and 30 are not used.
const ADYEN_DOCUMENTED = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46].map(String);

describe('decline tables', () => {
  it('Adyen: one row for every documented refusal code, found by code and by reason alike', () => {
    expect(ADYEN_REFUSALS.map(([code]) => code)).toEqual(ADYEN_DOCUMENTED);
    for (const [code, reason, ours] of ADYEN_REFUSALS) {
      expect(adyenDeclineOf({ refusalReasonCode: code })).toEqual(ours);
      // A webhook carries the reason only, in whatever case.
      expect(adyenDeclineOf({ refusalReason: reason.toUpperCase() })).toEqual(ours);
    }
    expect(adyenDeclineOf({ refusalReasonCode: '999' })).toEqual({ failureCode: 'card_declined', declineType: 'generic' });
  });

  it.each([
    // Visa category 1: the issuer will never approve.
    ['do_not_retry', { stripe: ['stolen_card', 'lost_card', 'pickup_card', 'revocation_of_authorization', 'do_not_try_again'], adyen: ['5', '20', '26', '46'], sim: ['STOLEN_CARD'] }],
    // Category 2: not now.
    ['retry_later', { stripe: ['insufficient_funds', 'withdrawal_count_limit_exceeded', 'issuer_not_available', 'try_again_later'], adyen: ['9', '12', '28', '29'], sim: ['NOT_ENOUGH_BALANCE'] }],
    // Category 3: the data is wrong.
    ['fix_data', { stripe: ['expired_card', 'incorrect_cvc', 'incorrect_number', 'invalid_expiry_year'], adyen: ['6', '8', '24'], sim: ['EXPIRED_CARD', 'CVC_DECLINED'] }],
    ['authentication_required', { stripe: ['authentication_required'], adyen: ['11', '38', '42'], sim: ['AUTHENTICATION_REQUIRED', 'AUTHENTICATION_NOT_REQUESTED', 'AUTHENTICATION_FAILED'] }],
    // Category 4: unexplained.
    ['generic', { stripe: ['do_not_honor', 'generic_decline', 'call_issuer'], adyen: ['2', '3', '27'], sim: ['DO_NOT_HONOUR'] }],
  ] as const)('%s: the same category on every connector', (type, codes) => {
    for (const code of codes.stripe) expect(STRIPE_DECLINE_CODES[code]?.declineType, code).toBe(type);
    for (const code of codes.adyen) expect(adyenDeclineOf({ refusalReasonCode: code }).declineType, code).toBe(type);
    for (const code of codes.sim) expect(DECLINE_OF_REFUSAL[code].declineType, code).toBe(type);
  });

  it('every row of every table names a decline type of the catalogue', () => {
    const rows = [...Object.values(STRIPE_DECLINE_CODES), ...Object.values(STRIPE_CARD_ERROR_CODES), ...ADYEN_REFUSALS.map(([, , ours]) => ours), ...Object.values(DECLINE_OF_REFUSAL)];
    for (const row of rows) expect(DECLINE_TYPES).toContain(row.declineType);
    // Every type is some code's (`processor`: Adyen's Cancelled and Not Submitted, refused before acting).
    expect(new Set(rows.map((r) => r.declineType))).toEqual(new Set(DECLINE_TYPES));
  });

  it('Stripe: the decline code outranks the error code; an unknown or prototype-named code is generic', () => {
    expect(stripeDeclineOf({ code: 'card_declined', decline_code: 'stolen_card' })).toEqual({ failureCode: 'card_declined', declineType: 'do_not_retry' });
    expect(stripeDeclineOf({ code: 'expired_card' })).toEqual({ failureCode: 'expired_card', declineType: 'fix_data' });
    expect(stripeDeclineOf({ code: 'card_declined', decline_code: 'some_new_code' })).toEqual({ failureCode: 'card_declined', declineType: 'generic' });
    expect(stripeDeclineOf({ code: 'constructor', decline_code: 'toString' })).toEqual({ failureCode: 'card_declined', declineType: 'generic' });
  });

  it('Mastercard merchant advice codes outrank the reason: 03 and 21 never, 02 and 24–30 later, 01 new data', () => {
    expect(['03: Do not try again', '21', '02', '24 : Retry after 1 hour', '30', '01', '29', '31', '', undefined].map(merchantAdviceType)).toEqual([
      'do_not_retry', 'do_not_retry', 'retry_later', 'retry_later', 'retry_later', 'fix_data', 'retry_later', undefined, undefined, undefined,
    ]);
    expect(adyenDeclineOf({ refusalReasonCode: '12', additionalData: { merchantAdviceCode: '03: Do not try again' } })).toEqual({ failureCode: 'insufficient_funds', declineType: 'do_not_retry', merchantAdvice: '03' });
    // Stripe passes the network's advice on as network_advice_code; the code is kept for the reattempt waits.
    expect(stripeDeclineOf({ code: 'card_declined', decline_code: 'do_not_honor', network_advice_code: '26' })).toEqual({ failureCode: 'card_declined', declineType: 'retry_later', merchantAdvice: '26' });
  });

  it("Mastercard's advised waits: 24 one hour, 25 a day, 26 two days, 27 four, 28 six, 29 eight, 30 ten", () => {
    const hours = Object.fromEntries(Object.entries(ADVISED_WAITS).map(([code, wait]) => [code, wait.ms / 3_600_000]));
    expect(hours).toEqual({ '24': 1, '25': 24, '26': 48, '27': 96, '28': 144, '29': 192, '30': 240 });
  });
});

describe('decline types through the service (simulators)', () => {
  const h = useService();
  const { api } = h;

  it.each([
    [CARDS.declined, 'card_declined', 'generic'],
    ['4000000000000853', 'card_declined', 'do_not_retry'],
    [CARDS.insufficientFunds, 'insufficient_funds', 'retry_later'],
  ])('card %s: the attempt and the failed payment carry %s / %s, and so does its event', async (number, failureCode, declineType) => {
    const order = await newOrder(api);
    const res = await pay(api, order.id, number);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'failed', failure_code: failureCode, decline_type: declineType });
    expect(res.body.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'declined', error_code: failureCode, decline_type: declineType })]);
    const events = await api.get(`/v1/events?type=payment.failed`);
    expect(events.body.data.find((e: { data: { object: { id: string } } }) => e.data.object.id === res.body.id)?.data.object.decline_type).toBe(declineType);
  });

  it('4000000000000440 is declined by simulator_a and approved by simulator_b; without a cascade a decline stops the route', async () => {
    const declined = await pay(api, (await newOrder(api)).id, '4000000000000440');
    expect(declined.body).toMatchObject({ status: 'failed', decline_type: 'generic', connector: 'simulator_a' });
    expect(declined.body.attempts).toHaveLength(1);
    await api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'simulator_b' }] }] } });
    const approved = await pay(api, (await newOrder(api)).id, '4000000000000440');
    expect(approved.body).toMatchObject({ status: 'succeeded', decline_type: null, connector: 'simulator_b' });
    expect(approved.body.attempts).toEqual([expect.objectContaining({ connector: 'simulator_b', outcome: 'succeeded', decline_type: null })]);
  });

  it('a processor that refuses before acting is a `processor` attempt, the fallback that succeeds none', async () => {
    await api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'simulator_a' }, { name: 'simulator_b' }] }] } });
    const res = await pay(api, (await newOrder(api)).id, CARDS.processorError);
    expect(res.body).toMatchObject({ status: 'succeeded', connector: 'simulator_b', decline_type: null });
    expect(res.body.attempts.map((a: { outcome: string; decline_type: string | null }) => [a.outcome, a.decline_type])).toEqual([
      ['error', 'processor'],
      ['succeeded', null],
    ]);
  });
});
