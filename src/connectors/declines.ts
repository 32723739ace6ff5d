// What a decline says about trying again, in one vocabulary for every processor: each connector
// folder keeps one exhaustive table from its own decline and error codes onto these types (and
// onto our failure codes), and routing decides from the type alone whether a declined payment may
// be sent to another connector. The categories follow the card networks' published ones (Visa's
// decline categories 1–4, Mastercard's merchant advice codes), as docs/declines.md explains.
import { DECLINE_TYPES, type DeclineType } from '../kernel/decline-types.js';
import type { PaymentFailureCode } from './failure-codes.js';

/** Declines no retry can turn: a rule's cascade may not list them (API.md §7). */
export const NEVER_CASCADED: readonly DeclineType[] = ['do_not_retry', 'fix_data'];
/** What a rule's cascade may list. */
export const CASCADABLE: readonly DeclineType[] = DECLINE_TYPES.filter((type) => !NEVER_CASCADED.includes(type));

/** One row of a connector's table: our failure code and the decline type of one processor code. */
export interface Decline {
  failureCode: PaymentFailureCode;
  declineType: DeclineType;
  /** The Mastercard merchant advice code (two digits) the processor passed on with the refusal, if any. */
  merchantAdvice?: string;
}

export const decline = (failureCode: PaymentFailureCode, declineType: DeclineType): Decline => ({ failureCode, declineType });

/** A decline nothing more is known about: the card was declined, no reason given. */
export const GENERIC_DECLINE: Decline = decline('card_declined', 'generic');

/** A merchant advice code as processors pass it on ("24", "24: Retry after 1 hour"): its two digits. */
export function merchantAdviceOf(code: string | null | undefined): string | undefined {
  const advice = code?.trim().slice(0, 2);
  return advice && /^\d\d$/.test(advice) ? advice : undefined;
}

const HOUR_MS = 3_600_000;
/**
 * Mastercard's merchant advice codes 24–30: retry only after this wait (24 after 1 hour, 25 after
 * 24 hours, 26 after 2 days, 27 after 4, 28 after 6, 29 after 8, 30 after 10 days).
 */
export const ADVISED_WAITS: Readonly<Record<string, { ms: number; label: string }>> = {
  '24': { ms: HOUR_MS, label: '1 hour' },
  '25': { ms: 24 * HOUR_MS, label: '24 hours' },
  '26': { ms: 2 * 24 * HOUR_MS, label: '2 days' },
  '27': { ms: 4 * 24 * HOUR_MS, label: '4 days' },
  '28': { ms: 6 * 24 * HOUR_MS, label: '6 days' },
  '29': { ms: 8 * 24 * HOUR_MS, label: '8 days' },
  '30': { ms: 10 * 24 * HOUR_MS, label: '10 days' },
};

/**
 * Mastercard's merchant advice codes, which outrank the issuer's reason where a processor passes
 * them on: 01 asks for new account data, 02 and 24–30 to wait, 03 and 21 never to try again.
 */
export function merchantAdviceType(code: string | null | undefined): DeclineType | undefined {
  const advice = merchantAdviceOf(code);
  if (advice === '01') return 'fix_data';
  if (advice === '03' || advice === '21') return 'do_not_retry';
  if (advice === '02' || (advice !== undefined && Object.hasOwn(ADVISED_WAITS, advice))) return 'retry_later';
  return undefined;
}

/** A table's row with the merchant advice the processor passed on: its type outranks the row's, and the code is kept (reattempt waits). */
export function advised(known: Decline, code: string | null | undefined): Decline {
  const advice = merchantAdviceOf(code);
  if (advice === undefined) return known;
  return { ...known, declineType: merchantAdviceType(advice) ?? known.declineType, merchantAdvice: advice };
}
