// ISO 4217 currencies in current circulation and the exponent of their minor unit (amounts are
// integers in that unit: cents for USD, yen for JPY, fils for KWD). Fund codes (BOV, CLF, USN, …)
// and precious metals are left out: they are accounting units, not money a payer can send.
const EXPONENT_0 = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF';
const EXPONENT_3 = 'BHD IQD JOD KWD LYD OMR TND';
const EXPONENT_2 =
  'AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF ' +
  'CNY COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL ' +
  'HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT ' +
  'MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB ' +
  'SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH ' +
  'USD UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG';

function entries(list: string, exponent: number): [string, number][] {
  return list.split(' ').map((code) => [code, exponent]);
}

export const CURRENCY_EXPONENTS: ReadonlyMap<string, number> = new Map([
  ...entries(EXPONENT_0, 0),
  ...entries(EXPONENT_2, 2),
  ...entries(EXPONENT_3, 3),
]);

export const CURRENCY_CODES: readonly string[] = [...CURRENCY_EXPONENTS.keys()].sort();

export const MIN_AMOUNT = 1;
export const MAX_AMOUNT = 99_999_999_999;

/**
 * A processor's amount in `currency` (its exponent where it differs from ISO's in `exponents`) in
 * our minor units. Processors whose exponent is larger than ISO's (ISK at Stripe and Adyen, CLP at
 * Adyen) only move whole ISO units, so the division is exact for what they report; rounding keeps
 * the ledger's integers integral should one ever not be. An unknown currency is taken as ISO's
 * default of two decimals on both sides, so nothing is rescaled.
 */
export function fromProcessorUnits(value: number, currency: string, exponents: Readonly<Record<string, number>>): number {
  const iso = CURRENCY_EXPONENTS.get(currency) ?? 2;
  const shift = (exponents[currency] ?? iso) - iso;
  return shift >= 0 ? Math.round(value / 10 ** shift) : value * 10 ** -shift;
}
