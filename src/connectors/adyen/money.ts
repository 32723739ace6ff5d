// Amounts in Adyen's units. Ours are ISO 4217 minor units (src/kernel/currencies.ts); Adyen's currency
// table (https://docs.adyen.com/development-resources/currency-codes) agrees with ISO except for
// four currencies: CLP and ISK take two decimals at Adyen (zero at ISO), CVE and IDR none (two at
// ISO), so a CVE or IDR amount must be whole escudos or rupiahs. The table lists every ISO currency
// in circulation except the ones below, which Adyen does not process. Adyen's amount is an int64:
// no amount of ours (at most 11 digits, times 100 at most) comes near it.
import { CURRENCY_EXPONENTS, fromProcessorUnits } from '../../kernel/currencies.js';

/** Adyen's exponent where it differs from ISO 4217's. */
const ADYEN_EXPONENT: Record<string, number> = { CLP: 2, ISK: 2, CVE: 0, IDR: 0 };

/** ISO currencies in circulation that Adyen's currency table does not list. */
const NOT_AT_ADYEN = new Set('AFN BIF BTN CDF ERN IRR KPW LRD LSL MGA SDG SSP SYP TJS TMT VED VES XCG ZWG'.split(' '));

/** The currencies Adyen takes, as the catalogue shows them. */
export const ADYEN_CURRENCIES: readonly string[] = [...CURRENCY_EXPONENTS.keys()].filter((c) => !NOT_AT_ADYEN.has(c)).sort();

export type AdyenAmount = { ok: true; value: number } | { ok: false; problem: string };

/** Our amount in `currency` as Adyen expects it, or why Adyen cannot take it (nothing is sent then). */
export function toAdyenAmount(amount: number, currency: string): AdyenAmount {
  const iso = CURRENCY_EXPONENTS.get(currency);
  if (iso === undefined || NOT_AT_ADYEN.has(currency)) return { ok: false, problem: `Adyen does not take ${currency}` };
  const shift = (ADYEN_EXPONENT[currency] ?? iso) - iso;
  if (shift >= 0) return { ok: true, value: amount * 10 ** shift };
  const unit = 10 ** -shift;
  if (amount % unit !== 0) return { ok: false, problem: `Adyen takes ${currency} in whole units only: ${amount} is not a multiple of ${unit}` };
  return { ok: true, value: amount / unit };
}

/** Why Adyen cannot take `amount` of `currency` (routing leaves Adyen out then), or undefined. */
export function adyenAmountLimit(amount: number, currency: string): string | undefined {
  const converted = toAdyenAmount(amount, currency);
  return converted.ok ? undefined : converted.problem;
}

/** An Adyen amount in `currency` in our minor units. */
export function fromAdyenAmount(value: number, currency: string): number {
  return fromProcessorUnits(value, currency, ADYEN_EXPONENT);
}
