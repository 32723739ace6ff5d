// Adyen's dispute notifications in our words. Each event code is a step of Adyen's dispute flow
// (https://docs.adyen.com/risk-management/disputes-api/dispute-notifications), read into our
// status, the stage it belongs to and what it says of the funds; the dispute is Adyen's
// pspReference, the payment our merchantReference. Reasons are the card schemes' chargeback
// reason codes (additionalData.chargebackReasonCode, with chargebackSchemeCode), mapped per scheme.
import type { NotificationRequestItem } from '@adyen/api-library/lib/src/typings/notification/models.js';
import type { DisputeReason, DisputeStatus, InboundEvent } from '../types.js';
import { fromAdyenAmount } from './money.js';

/** Each dispute event code: our status, its stage, and at least how often the funds were taken and given back. */
const EVENT_CODES: Record<string, { status: DisputeStatus; stage: number; withdrawals: number; reinstatements: number }> = {
  REQUEST_FOR_INFORMATION: { status: 'warning_needs_response', stage: 1, withdrawals: 0, reinstatements: 0 },
  NOTIFICATION_OF_CHARGEBACK: { status: 'needs_response', stage: 2, withdrawals: 0, reinstatements: 0 },
  CHARGEBACK: { status: 'needs_response', stage: 3, withdrawals: 1, reinstatements: 0 },
  INFORMATION_SUPPLIED: { status: 'under_review', stage: 4, withdrawals: 0, reinstatements: 0 },
  // Not defended in time, or liability accepted: the chargeback stands.
  DISPUTE_DEFENSE_PERIOD_ENDED: { status: 'lost', stage: 5, withdrawals: 0, reinstatements: 0 },
  CHARGEBACK_REVERSED: { status: 'won', stage: 6, withdrawals: 1, reinstatements: 1 },
  // The issuer rejected the defense: the funds are taken again.
  SECOND_CHARGEBACK: { status: 'lost', stage: 7, withdrawals: 2, reinstatements: 1 },
  PREARBITRATION_WON: { status: 'won', stage: 8, withdrawals: 2, reinstatements: 2 },
  PREARBITRATION_LOST: { status: 'lost', stage: 8, withdrawals: 2, reinstatements: 1 },
};

/** additionalData.disputeStatus, where it says more than the event code. */
const DISPUTE_STATUS: Record<string, DisputeStatus> = { Accepted: 'accepted', Won: 'won', Lost: 'lost', Responded: 'under_review' };

const byPrefix = (code: string, table: [prefix: string, reason: DisputeReason][]): DisputeReason | undefined => table.find(([p]) => code === p || code.startsWith(`${p}.`))?.[1];

/** Visa's reason codes: 10.x fraud, 11.x authorisation, 12.x processing errors, 13.x consumer disputes. */
const VISA: [string, DisputeReason][] = [
  ['10', 'fraudulent'],
  ['11', 'processing_error'],
  ['12.6', 'duplicate'],
  ['12', 'processing_error'],
  ['13.1', 'product_not_received'],
  ['13.2', 'subscription_canceled'],
  ['13.3', 'product_unacceptable'],
  ['13.4', 'product_unacceptable'],
  ['13.5', 'product_unacceptable'],
  ['13.6', 'credit_not_processed'],
  ['13.7', 'credit_not_processed'],
  ['13.8', 'general'],
  ['13.9', 'product_not_received'],
];

/** Mastercard's (and Maestro's) four-digit reason codes. */
const MASTERCARD: Record<string, DisputeReason> = {
  '4837': 'fraudulent', '4840': 'fraudulent', '4849': 'fraudulent', '4863': 'unrecognized', '4870': 'fraudulent', '4871': 'fraudulent',
  '4808': 'processing_error', '4812': 'processing_error', '4807': 'processing_error', '4831': 'processing_error', '4842': 'processing_error',
  '4834': 'duplicate', '4841': 'subscription_canceled', '4853': 'product_unacceptable', '4854': 'general', '4855': 'product_not_received',
  '4859': 'product_not_received', '4860': 'credit_not_processed', '4999': 'general',
};

/** American Express: F fraud, C cardholder disputes, P processing, A authorisation, M and R other. */
const AMEX: Record<string, DisputeReason> = {
  C02: 'credit_not_processed', C04: 'credit_not_processed', C05: 'credit_not_processed', C08: 'product_not_received', C14: 'duplicate',
  C18: 'general', C28: 'subscription_canceled', C31: 'product_unacceptable', C32: 'product_unacceptable', P08: 'duplicate', M01: 'general',
};
const AMEX_CLASS: Record<string, DisputeReason> = { F: 'fraudulent', C: 'general', P: 'processing_error', A: 'processing_error', M: 'general', R: 'general' };

/** Our reason for a scheme's chargeback reason code; a code a scheme adds later is `general`. */
export function disputeReasonOf(scheme: string | undefined, raw: string | undefined): DisputeReason {
  // Adyen's own examples send codes with a leading space (" 4853").
  const code = raw?.trim();
  if (!code) return 'general';
  switch ((scheme ?? '').toLowerCase()) {
    case 'visa':
      return byPrefix(code, VISA) ?? 'general';
    case 'mc':
    case 'mastercard':
    case 'maestro':
      return MASTERCARD[code] ?? 'general';
    case 'amex':
      return AMEX[code] ?? AMEX_CLASS[code.charAt(0)] ?? 'general';
    default:
      // Discover, Diners, JCB, CUP, …: fraud is the one reason every scheme names alike.
      return /fraud/i.test(code) ? 'fraudulent' : 'general';
  }
}

/** A dispute notification item as a dispute report; undefined for other event codes. */
export function disputeEventOf(eventId: string, item: NotificationRequestItem): InboundEvent | undefined {
  const code = EVENT_CODES[`${item.eventCode}`];
  if (!code) return undefined;
  const data = (item.additionalData ?? {}) as Record<string, string | undefined>;
  const currency = item.amount?.currency ?? '';
  const due = data.defensePeriodEndsAt ? new Date(data.defensePeriodEndsAt) : null;
  return {
    eventId,
    object: 'dispute',
    reference: item.merchantReference ?? '',
    state: {
      connectorReference: item.pspReference,
      paymentConnectorReference: item.originalReference ?? null,
      amount: fromAdyenAmount(item.amount?.value ?? 0, currency),
      currency,
      reason: disputeReasonOf(data.chargebackSchemeCode, data.chargebackReasonCode),
      processorReason: data.chargebackReasonCode?.trim() || null,
      status: (data.disputeStatus && DISPUTE_STATUS[data.disputeStatus]) || code.status,
      stage: code.stage,
      evidenceDueBy: due && !Number.isNaN(due.getTime()) ? due : null,
      withdrawals: code.withdrawals,
      reinstatements: code.reinstatements,
    },
  };
}
