// Amounts in Stripe's units. Ours are ISO 4217 minor units (src/kernel/currencies.ts); Stripe's mostly
// agree, with the special cases of https://docs.stripe.com/currencies: ISK is zero-decimal at ISO
// but stays two-decimal in Stripe's API (an amount of 100 is 1 króna, and it must be a whole
// króna); MGA is two-decimal at ISO but zero-decimal at Stripe; three-decimal currencies must end
// in 0 for card payments. HUF and TWD are two-decimal for charges (their whole-unit rule is for
// payouts, which this connector does not make); UGX is zero-decimal on both sides. Stripe takes at
// most 8 digits.
import { CURRENCY_EXPONENTS, fromProcessorUnits } from '../../kernel/currencies.js';

export const STRIPE_MAX_AMOUNT = 99_999_999;

/** Stripe's exponent where it differs from ISO 4217's. */
const STRIPE_EXPONENT: Record<string, number> = { ISK: 2, MGA: 0 };

const LIMIT_PROBLEM = (currency: string) => `Stripe takes at most 8 digits (${STRIPE_MAX_AMOUNT}) in ${currency}`;

export type StripeAmount = { ok: true; amount: number } | { ok: false; problem: string };

/** Our amount in `currency` as Stripe expects it, or why Stripe cannot take it (nothing is sent then). */
export function toStripeAmount(amount: number, currency: string): StripeAmount {
  const iso = CURRENCY_EXPONENTS.get(currency);
  if (iso === undefined) return { ok: false, problem: `Stripe does not take ${currency}` };
  const shift = (STRIPE_EXPONENT[currency] ?? iso) - iso;
  if (shift < 0 && amount % 10 ** -shift !== 0) {
    return { ok: false, problem: `Stripe takes ${currency} in whole units only: ${amount} is not a multiple of ${10 ** -shift}` };
  }
  if (iso === 3 && amount % 10 !== 0) return { ok: false, problem: `Stripe takes ${currency} card amounts ending in 0 only` };
  const stripeAmount = shift >= 0 ? amount * 10 ** shift : amount / 10 ** -shift;
  if (stripeAmount > STRIPE_MAX_AMOUNT) return { ok: false, problem: LIMIT_PROBLEM(currency) };
  return { ok: true, amount: stripeAmount };
}

/** Why Stripe cannot take `amount` for its size alone (routing leaves Stripe out then), or undefined. */
export function stripeAmountLimit(amount: number, currency: string): string | undefined {
  const converted = toStripeAmount(amount, currency);
  return !converted.ok && converted.problem === LIMIT_PROBLEM(currency) ? converted.problem : undefined;
}

/** A Stripe amount in `currency` (lower or upper case) in our minor units. */
export function fromStripeAmount(amount: number, currency: string): number {
  return fromProcessorUnits(amount, currency.toUpperCase(), STRIPE_EXPONENT);
}
