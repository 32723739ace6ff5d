// The checkout's pure parts: amounts shown in integers only, the expiry as people type it, and the
// server's card check (the script in the page mirrors it; the browser test drives that one).
import { describe, expect, it } from 'vitest';
import { CARD_MESSAGES, checkCardForm, parseExpiry } from '../../src/domain/checkout/card-form.js';
import { formatAmount } from '../../src/http/checkout/views.js';

describe('formatAmount', () => {
  it('places the decimal point by the currency exponent, with grouping, without floating point', () => {
    expect(formatAmount(1999, 'EUR')).toBe('19.99');
    expect(formatAmount(5, 'EUR')).toBe('0.05');
    expect(formatAmount(123456, 'EUR')).toBe('1,234.56');
    expect(formatAmount(1500, 'JPY')).toBe('1,500');
    expect(formatAmount(1234, 'KWD')).toBe('1.234');
    expect(formatAmount(99_999_999_999, 'USD')).toBe('999,999,999.99');
  });
});

describe('parseExpiry', () => {
  it('takes MM/YY, MM / YY, MM/YYYY and MMYY; refuses months out of range', () => {
    expect(parseExpiry('12/29')).toEqual({ month: 12, year: 2029 });
    expect(parseExpiry(' 1 / 2031 ')).toEqual({ month: 1, year: 2031 });
    expect(parseExpiry('0730')).toEqual({ month: 7, year: 2030 });
    for (const bad of ['13/29', '00/29', '12-29', '1229x', '', '12/2']) expect(parseExpiry(bad)).toBeUndefined();
  });
});

describe('checkCardForm', () => {
  const now = new Date('2026-11-24T00:00:00Z');
  it('returns the card: digits only, month and four-digit year', () => {
    expect(checkCardForm({ number: '4242 4242-4242 4242', expiry: '11/26', cvc: '123' }, now)).toEqual({
      card: { number: '4242424242424242', expMonth: 11, expYear: 2026, cvc: '123' },
    });
  });
  it('says what is wrong per field: Luhn, past expiry, CVC length by brand', () => {
    expect(checkCardForm({ number: '4242424242424241', expiry: '10/26', cvc: '1234' }, now)).toEqual({
      errors: { number: CARD_MESSAGES.numberInvalid, expiry: CARD_MESSAGES.expiryPast, cvc: CARD_MESSAGES.cvcInvalid },
    });
    expect(checkCardForm({ number: '378282246310005', expiry: '12/30', cvc: '123' }, now)).toEqual({ errors: { cvc: CARD_MESSAGES.cvcInvalidAmex } });
    expect(checkCardForm({}, now)).toEqual({ errors: { number: CARD_MESSAGES.numberMissing, expiry: CARD_MESSAGES.expiryInvalid, cvc: CARD_MESSAGES.cvcInvalid } });
  });
});
