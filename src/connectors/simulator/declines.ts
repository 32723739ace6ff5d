// The simulated processors' refusals in our words: our failure code and the decline type of each,
// after the networks' categories (src/connectors/declines.ts). Exhaustive: a new refusal fails to
// compile here until it is given a meaning.
import { decline, type Decline } from '../declines.js';
import type { SimRefusal } from './protocol.js';

export const DECLINE_OF_REFUSAL = {
  DO_NOT_HONOUR: decline('card_declined', 'generic'),
  STOLEN_CARD: decline('card_declined', 'do_not_retry'),
  NOT_ENOUGH_BALANCE: decline('insufficient_funds', 'retry_later'),
  EXPIRED_CARD: decline('expired_card', 'fix_data'),
  CVC_DECLINED: decline('incorrect_cvc', 'fix_data'),
  UNKNOWN_CARD: decline('card_declined', 'fix_data'),
  AUTHENTICATION_REQUIRED: decline('authentication_required', 'authentication_required'),
  AUTHENTICATION_NOT_REQUESTED: decline('authentication_required', 'authentication_required'),
  AUTHENTICATION_FAILED: decline('authentication_failed', 'authentication_required'),
  // Direct debits: the payer's bank, not a card issuer, decides; the same debit may clear later.
  DEBIT_RETURNED: decline('debit_declined', 'retry_later'),
  MANDATE_NOT_ACTIVE: decline('mandate_invalid', 'do_not_retry'),
} as const satisfies Record<SimRefusal, Decline>;
