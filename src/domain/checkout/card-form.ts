// The hosted checkout's card form, checked on the server: the page's script checks the same as the
// customer types (src/http/checkout/script.ts, same rules and messages), but only this check
// counts, and the payment service checks the card once more like any API request.
import type { CardDetails } from '../../connectors/types.js';
import { cardBrand, luhnValid } from '../payments/cards.js';

export const CARD_FIELDS = ['number', 'expiry', 'cvc'] as const;
export type CardField = (typeof CARD_FIELDS)[number];
export type FieldErrors = Partial<Record<CardField, string>>;

/** What the customer is told, per field; the script shows the same words. */
export const CARD_MESSAGES = {
  numberMissing: 'Enter the card number.',
  numberInvalid: 'This card number is not valid. Check it for typing errors.',
  expiryInvalid: 'Enter the expiry date as MM / YY.',
  expiryPast: 'This card has expired.',
  cvcInvalid: 'Enter the 3-digit security code from the back of the card.',
  cvcInvalidAmex: 'Enter the 4-digit security code from the front of the card.',
} as const;

/** Digits of a card number as typed (spaces and dashes allowed between groups). */
export function cardDigits(typed: string): string {
  return typed.replace(/[\s-]/g, '');
}

/** `MM/YY`, `MM / YY`, `MM/YYYY` or `MMYY`: month and four-digit year, or undefined. */
export function parseExpiry(typed: string): { month: number; year: number } | undefined {
  const m = /^\s*(\d{1,2})\s*\/?\s*(\d{2}|\d{4})\s*$/.exec(typed);
  if (!m) return undefined;
  const month = Number(m[1]);
  const year = m[2]!.length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  return month >= 1 && month <= 12 ? { month, year } : undefined;
}

export function checkCardForm(fields: Record<string, string | undefined>, now: Date): { card: CardDetails } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const number = cardDigits(fields.number ?? '');
  if (number === '') errors.number = CARD_MESSAGES.numberMissing;
  else if (!/^\d{12,19}$/.test(number) || !luhnValid(number)) errors.number = CARD_MESSAGES.numberInvalid;

  const expiry = parseExpiry(fields.expiry ?? '');
  if (!expiry) errors.expiry = CARD_MESSAGES.expiryInvalid;
  else if (expiry.year * 12 + expiry.month - 1 < now.getUTCFullYear() * 12 + now.getUTCMonth()) errors.expiry = CARD_MESSAGES.expiryPast;

  const amex = cardBrand(number) === 'amex';
  const cvc = (fields.cvc ?? '').trim();
  if (!(amex ? /^\d{4}$/ : /^\d{3}$/).test(cvc)) errors.cvc = amex ? CARD_MESSAGES.cvcInvalidAmex : CARD_MESSAGES.cvcInvalid;

  if (Object.keys(errors).length > 0 || !expiry) return { errors };
  return { card: { number, expMonth: expiry.month, expYear: expiry.year, cvc } };
}
