// Stripe's decline codes and card-error codes in our words: every decline code Stripe documents
// (https://docs.stripe.com/declines/codes) with our failure code and its decline type, after the
// networks' categories (src/connectors/declines.ts). One table: a new code is added here or it is
// a generic decline.
import { advised, decline, GENERIC_DECLINE, type Decline } from '../declines.js';

const generic = GENERIC_DECLINE;
const never = decline('card_declined', 'do_not_retry');
const later = decline('card_declined', 'retry_later');
const funds = decline('insufficient_funds', 'retry_later');
const data = decline('card_declined', 'fix_data');

/** Every decline code Stripe documents. */
export const STRIPE_DECLINE_CODES: Readonly<Record<string, Decline>> = {
  // Category 1: the issuer will not approve this card, here or anywhere.
  lost_card: never,
  stolen_card: never,
  pickup_card: never,
  fraudulent: never,
  merchant_blacklist: never,
  do_not_try_again: never,
  revocation_of_all_authorizations: never,
  revocation_of_authorization: never,
  stop_payment_order: never,
  invalid_account: never,
  // A retry would charge the same purchase twice.
  duplicate_transaction: never,
  card_not_supported: never,
  currency_not_supported: never,
  transaction_not_allowed: never,
  not_permitted: never,
  service_not_allowed: never,
  security_violation: never,
  // Category 2: not now; funds, limits or the issuer's availability.
  insufficient_funds: funds,
  withdrawal_count_limit_exceeded: funds,
  card_velocity_exceeded: funds,
  restricted_card: later,
  pin_try_exceeded: later,
  issuer_not_available: decline('processing_error', 'retry_later'),
  try_again_later: decline('processing_error', 'retry_later'),
  reenter_transaction: decline('processing_error', 'retry_later'),
  // Category 3: the data is wrong; only new data can succeed.
  expired_card: decline('expired_card', 'fix_data'),
  incorrect_cvc: decline('incorrect_cvc', 'fix_data'),
  invalid_cvc: decline('incorrect_cvc', 'fix_data'),
  incorrect_number: data,
  invalid_number: data,
  invalid_expiry_month: data,
  invalid_expiry_year: data,
  incorrect_pin: data,
  invalid_pin: data,
  incorrect_zip: data,
  invalid_amount: data,
  new_account_information_available: data,
  offline_pin_required: data,
  online_or_offline_pin_required: data,
  // A soft decline: the issuer wants 3-D Secure.
  authentication_required: decline('authentication_required', 'authentication_required'),
  // Category 4: unexplained.
  generic_decline: generic,
  do_not_honor: generic,
  call_issuer: generic,
  approve_with_id: generic,
  no_action_taken: generic,
  processing_error: decline('processing_error', 'generic'),
  testmode_decline: generic,
};

/** `card_error` codes that say more than `card_declined` (whose decline code then says why). */
export const STRIPE_CARD_ERROR_CODES: Readonly<Record<string, Decline>> = {
  expired_card: decline('expired_card', 'fix_data'),
  incorrect_cvc: decline('incorrect_cvc', 'fix_data'),
  invalid_cvc: decline('incorrect_cvc', 'fix_data'),
  insufficient_funds: funds,
  processing_error: decline('processing_error', 'generic'),
  card_decline_rate_limit_exceeded: later,
  incorrect_number: data,
  invalid_number: data,
  invalid_expiry_month: data,
  invalid_expiry_year: data,
  card_declined: generic,
  // error_on_requires_action: the card needs 3-D Secure and we asked Stripe not to start it.
  authentication_required: decline('authentication_required', 'authentication_required'),
  // The cardholder failed (or abandoned) 3-D Secure: the issuer still wants it, done right.
  payment_intent_authentication_failure: decline('authentication_failed', 'authentication_required'),
  setup_intent_authentication_failure: decline('authentication_failed', 'authentication_required'),
};

/**
 * A PaymentIntent's last error in our words; no error at all is a refusal that says nothing. The
 * card network's advice Stripe passes on (`network_advice_code`: Mastercard's merchant advice
 * code) outranks the decline code, as Adyen's merchantAdviceCode does.
 */
export function stripeDeclineOf(error: { code?: string | null; decline_code?: string | null; network_advice_code?: string | null } | null | undefined): Decline {
  if (!error) return decline('processing_error', 'generic');
  return advised(lookUp(STRIPE_DECLINE_CODES, error.decline_code) ?? lookUp(STRIPE_CARD_ERROR_CODES, error.code) ?? GENERIC_DECLINE, error.network_advice_code);
}

// Own keys only: a code named like an Object.prototype member is no row of the table.
const lookUp = (table: Readonly<Record<string, Decline>>, code: string | null | undefined): Decline | undefined =>
  code && Object.hasOwn(table, code) ? table[code] : undefined;
