// Adyen's refusal reasons in our words: every refusalReasonCode Adyen documents
// (https://docs.adyen.com/development-resources/refusal-reasons), with its refusalReason (a
// webhook carries the reason only), our failure code and its decline type after the networks'
// categories (src/connectors/declines.ts). A Mastercard merchant advice code that Adyen passes on
// (`additionalData.merchantAdviceCode`) outranks the reason.
import { advised, decline, GENERIC_DECLINE, type Decline } from '../declines.js';

const never = decline('card_declined', 'do_not_retry');
const later = decline('card_declined', 'retry_later');
const data = decline('card_declined', 'fix_data');
const funds = decline('insufficient_funds', 'retry_later');
const threeDs = decline('authentication_failed', 'authentication_required');
// Adyen, its acquirer or the issuer's link failed: nothing was authorised and another processor may succeed.
const unavailable = decline('processing_error', 'retry_later');

export const ADYEN_REFUSALS: readonly (readonly [code: string, reason: string, ours: Decline])[] = [
  ['2', 'Refused', GENERIC_DECLINE],
  ['3', 'Referral', GENERIC_DECLINE],
  ['4', 'Acquirer Error', unavailable],
  ['5', 'Blocked Card', never],
  ['6', 'Expired Card', decline('expired_card', 'fix_data')],
  ['7', 'Invalid Amount', data],
  ['8', 'Invalid Card Number', data],
  ['9', 'Issuer Unavailable', unavailable],
  ['10', 'Not supported', never],
  ['11', '3D Not Authenticated', threeDs],
  ['12', 'Not enough balance', funds],
  ['14', 'Acquirer Fraud', never],
  ['15', 'Cancelled', decline('processing_error', 'processor')],
  // The shopper left the challenge.
  ['16', 'Shopper Cancelled', threeDs],
  ['17', 'Invalid Pin', data],
  ['18', 'Pin tries exceeded', later],
  ['19', 'Pin validation not possible', later],
  ['20', 'FRAUD', never],
  ['21', 'Not Submitted', decline('processing_error', 'processor')],
  ['22', 'FRAUD-CANCELLED', never],
  ['23', 'Transaction Not Permitted', never],
  ['24', 'CVC Declined', decline('incorrect_cvc', 'fix_data')],
  ['25', 'Restricted Card', later],
  ['26', 'Revocation Of Auth', never],
  ['27', 'Declined Non Generic', GENERIC_DECLINE],
  ['28', 'Withdrawal amount exceeded', funds],
  ['29', 'Withdrawal count exceeded', funds],
  ['31', 'Issuer Suspected Fraud', never],
  ['32', 'AVS Declined', data],
  ['33', 'Card requires online pin', data],
  ['34', 'No checking account available on Card', never],
  ['35', 'No savings account available on Card', never],
  ['36', 'Mobile pin required', data],
  ['37', 'Contactless fallback', data],
  // The issuer wants 3-D Secure, which was not attempted (the payment has no return_url).
  ['38', 'Authentication required', decline('authentication_required', 'authentication_required')],
  ['39', 'RReq not received from DS', threeDs],
  ['40', 'Current AID is in Penalty Box', later],
  ['41', 'CVM Required Restart Payment', data],
  ['42', '3DS Authentication Error', threeDs],
  ['43', 'Online PIN required', data],
  ['44', 'Try another interface', data],
  ['45', 'Chip downgrade mode', data],
  // Adyen stopped a retry the networks would charge for: retrying it again cannot help.
  ['46', 'Transaction blocked by Adyen to prevent excessive retry fees', never],
];

const BY_CODE = new Map(ADYEN_REFUSALS.map(([code, , ours]) => [code, ours]));
const BY_REASON = new Map(ADYEN_REFUSALS.map(([, reason, ours]) => [reason.toLowerCase(), ours]));

export interface AdyenRefusal {
  refusalReasonCode?: string | null;
  refusalReason?: string | null;
  additionalData?: Record<string, string> | null;
}

export function adyenDeclineOf(answer: AdyenRefusal): Decline {
  const known = (answer.refusalReasonCode && BY_CODE.get(answer.refusalReasonCode)) || (answer.refusalReason && BY_REASON.get(answer.refusalReason.toLowerCase())) || GENERIC_DECLINE;
  return advised(known, answer.additionalData?.merchantAdviceCode);
}
