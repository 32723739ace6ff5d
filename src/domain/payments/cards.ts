// Card data rules. The number and CVC are checked here, handed to the connector in memory, and
// then dropped: what is kept is the brand, the last four digits, the expiry and a keyed
// fingerprint (HMAC-SHA256 with CARD_FINGERPRINT_KEY, per account), which lets a merchant see
// that two payments used the same card without anyone being able to recover the number from it.
import crypto from 'node:crypto';
import { ApiError } from '../../kernel/errors.js';
import { TEST_CARDS } from '../../connectors/simulator/cards.js';
import type { CardDetails } from '../../connectors/types.js';

export const CARD_BRANDS = ['visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb', 'unionpay', 'unknown'] as const;
export type CardBrand = (typeof CARD_BRANDS)[number];

export interface CardSummary {
  brand: CardBrand;
  last4: string;
  exp_month: number;
  exp_year: number;
  fingerprint: string;
}

export function luhnValid(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = number.charCodeAt(number.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

export function cardBrand(number: string): CardBrand {
  const prefix2 = Number(number.slice(0, 2));
  const prefix3 = Number(number.slice(0, 3));
  const prefix4 = Number(number.slice(0, 4));
  const prefix6 = Number(number.slice(0, 6));
  if (number.startsWith('4')) return 'visa';
  if ((prefix2 >= 51 && prefix2 <= 55) || (prefix4 >= 2221 && prefix4 <= 2720)) return 'mastercard';
  if (prefix2 === 34 || prefix2 === 37) return 'amex';
  if (prefix4 === 6011 || prefix2 === 65 || (prefix3 >= 644 && prefix3 <= 649) || (prefix6 >= 622126 && prefix6 <= 622925)) return 'discover';
  if (prefix2 === 36 || prefix2 === 38 || prefix2 === 39 || (prefix3 >= 300 && prefix3 <= 305)) return 'diners';
  if (prefix4 >= 3528 && prefix4 <= 3589) return 'jcb';
  if (prefix2 === 62) return 'unionpay';
  return 'unknown';
}

/** Where a payment's card is in its request; POST /v1/payment-methods has it at `card`. */
const CARD_PARAM = 'payment_method.card';

/**
 * Validates card data beyond its shape (the request schema checks digits and ranges): the Luhn
 * checksum, an expiry not in the past, and in live mode no test card. Messages never repeat the
 * number. Which numbers test mode takes depends on where the payment goes (requireTestCard).
 *
 * `resuming`: the retry of a request that already created the payment. The card passed the expiry
 * check then, and the charge may already be booked; a retry that crosses the end of the expiry
 * month must resume it, not store a permanent 400 as the key's answer.
 */
export function validateCard(card: CardDetails, livemode: boolean, now: Date, opts: { resuming?: boolean; param?: string } = {}): void {
  const PARAM = opts.param ?? CARD_PARAM;
  if (!luhnValid(card.number)) {
    throw new ApiError('parameter_invalid', { param: `${PARAM}.number`, message: `${PARAM}.number is not a valid card number (checksum).` });
  }
  if (livemode && Object.hasOwn(TEST_CARDS, card.number)) {
    throw new ApiError('parameter_invalid', { param: `${PARAM}.number`, message: `${PARAM}.number is a test card; live mode needs a real card.` });
  }
  const monthsNow = now.getUTCFullYear() * 12 + now.getUTCMonth();
  const monthsCard = card.expYear * 12 + (card.expMonth - 1);
  if (monthsCard < monthsNow && !opts.resuming) {
    throw new ApiError('parameter_invalid', { param: `${PARAM}.exp_year`, message: 'The card has expired (exp_month/exp_year is in the past).' });
  }
  if (monthsCard > monthsNow + 50 * 12) {
    throw new ApiError('parameter_invalid', { param: `${PARAM}.exp_year`, message: `${PARAM}.exp_year is more than 50 years ahead.` });
  }
}

export function cardFingerprint(key: Buffer, accountId: string, number: string): string {
  return crypto.createHmac('sha256', key).update(`${accountId}:${number}`).digest('base64url').slice(0, 16);
}

export function summarizeCard(card: CardDetails, key: Buffer, accountId: string): CardSummary {
  return {
    brand: cardBrand(card.number),
    last4: card.number.slice(-4),
    exp_month: card.expMonth,
    exp_year: card.expYear,
    fingerprint: cardFingerprint(key, accountId, card.number),
  };
}

/**
 * What the idempotency fingerprint sees of a payment request (or of a card saved without paying):
 * the card number and CVC (a saved card's CVC given again too) replaced by keyed digests, so that
 * the stored request fingerprint is no unkeyed hash of card data.
 */
export function redactCardForFingerprint(key: Buffer) {
  const digest = (value: unknown) => crypto.createHmac('sha256', key).update(`idempotency:${String(value)}`).digest('base64url');
  const redact = (card: Record<string, unknown>) => ({ ...card, number: digest(card.number), cvc: digest(card.cvc) });
  return (body: unknown): unknown => {
    const b = body as { payment_method?: { card?: Record<string, unknown>; saved_card?: Record<string, unknown> }; card?: Record<string, unknown> } | undefined;
    // POST /v1/payment-methods carries its card at the top.
    if (b?.card && typeof b.card === 'object') return { ...b, card: redact(b.card) };
    const card = b?.payment_method?.card;
    if (card && typeof card === 'object') return { ...b, payment_method: { ...b!.payment_method, card: redact(card) } };
    // A saved card's CVC collected again is card data too.
    const saved = b?.payment_method?.saved_card;
    if (saved && typeof saved === 'object' && saved.cvc !== undefined) return { ...b, payment_method: { ...b!.payment_method, saved_card: { ...saved, cvc: digest(saved.cvc) } } };
    return body;
  };
}

/**
 * Test mode: the built-in simulated processors know only the test cards of docs/test-mode.md, so a route
 * of simulators alone refuses any other number up front. A route reaching a real processor's
 * sandbox (a test-mode connector account) takes any valid number, and that processor's own test
 * cards apply there.
 */
export function requireTestCard(card: CardDetails, livemode: boolean, onlySimulated: boolean, PARAM = CARD_PARAM): void {
  if (livemode || !onlySimulated || Object.hasOwn(TEST_CARDS, card.number)) return;
  throw new ApiError('parameter_invalid', {
    param: `${PARAM}.number`,
    message: `${PARAM}.number: the simulated processors of test mode take only the test cards of the documentation (4242… succeeds, 4000…0002 is declined, …).`,
  });
}
