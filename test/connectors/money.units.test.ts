// Processors' amounts back into our minor units: the inverse of what each connector sends, for the
// currencies whose exponent differs between ISO 4217 and the processor (src/connectors/*/money.ts).
import { describe, expect, it } from 'vitest';
import { fromAdyenAmount, toAdyenAmount } from '../../src/connectors/adyen/money.js';
import { fromStripeAmount, toStripeAmount } from '../../src/connectors/stripe/money.js';

describe('amounts from processors', () => {
  it('undoes what the Adyen connector sends, for every exponent shift', () => {
    for (const [amount, currency] of [[1234, 'EUR'], [1500, 'CLP'], [1500, 'ISK'], [250000, 'IDR'], [700, 'CVE'], [1005, 'KWD']] as const) {
      const sent = toAdyenAmount(amount, currency);
      expect(sent.ok, currency).toBe(true);
      if (sent.ok) expect(fromAdyenAmount(sent.value, currency), currency).toBe(amount);
    }
    expect(fromAdyenAmount(150000, 'ISK')).toBe(1500);
    expect(fromAdyenAmount(2500, 'IDR')).toBe(250000);
  });

  it('undoes what the Stripe connector sends, in either case of currency', () => {
    for (const [amount, currency] of [[1234, 'EUR'], [1500, 'ISK'], [1500, 'MGA'], [990, 'JPY']] as const) {
      const sent = toStripeAmount(amount, currency);
      expect(sent.ok, currency).toBe(true);
      if (sent.ok) expect(fromStripeAmount(sent.amount, currency.toLowerCase()), currency).toBe(amount);
    }
    expect(fromStripeAmount(150000, 'isk')).toBe(1500);
  });

  it('keeps the ledger integral when a processor reports part of a whole unit it should not', () => {
    expect(Number.isInteger(fromStripeAmount(150050, 'isk'))).toBe(true);
    expect(Number.isInteger(fromAdyenAmount(150, 'CLP'))).toBe(true);
  });
});
