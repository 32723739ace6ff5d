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
}

export const decline = (failureCode: PaymentFailureCode, declineType: DeclineType): Decline => ({ failureCode, declineType });

/** A decline nothing more is known about: the card was declined, no reason given. */
export const GENERIC_DECLINE: Decline = decline('card_declined', 'generic');

/**
 * Mastercard's merchant advice codes, which outrank the issuer's reason where a processor passes
 * them on: 01 asks for new account data, 02 and 24–30 to wait, 03 and 21 never to try again.
 */
export function merchantAdviceType(code: string | null | undefined): DeclineType | undefined {
  const advice = code?.trim().slice(0, 2);
  if (advice === '01') return 'fix_data';
  if (advice === '03' || advice === '21') return 'do_not_retry';
  if (advice === '02' || (advice !== undefined && /^(2[4-9]|30)$/.test(advice))) return 'retry_later';
  return undefined;
}
