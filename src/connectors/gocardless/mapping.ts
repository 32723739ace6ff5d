// GoCardless's words in ours: every mandate and payment status its API documents (the SDK's
// MandateStatus and PaymentStatus enums, so that a status added by a later SDK fails to compile
// here until it is mapped), the event actions its webhooks carry, and the failure causes it names.
import type { Mandate, MandateStatus, Payment, PaymentStatus } from 'gocardless-nodejs/types';
import type { DeclineType } from '../../kernel/decline-types.js';
import type { ChargeState, MandateFailureCode, MandateState, PaymentFailureCode } from '../types.js';

/** Where our ids go in the metadata of what we create at GoCardless (and come back in its events' resource_metadata). */
export const MANDATE_KEY = 'mandate_id';
export const PAYMENT_KEY = 'payment_id';

type MandateReading = { kind: 'pending' | 'active' | 'expired' } | { kind: 'revoked'; by: 'bank' | 'merchant' } | { kind: 'failed'; failureCode: MandateFailureCode };

/** Where a mandate of each GoCardless status stands for us (its cause, when known, refines a failure or a cancellation). */
const MANDATE_STATUS: Record<`${MandateStatus}`, MandateReading> = {
  pending_customer_approval: { kind: 'pending' },
  pending_submission: { kind: 'pending' },
  submitted: { kind: 'pending' },
  active: { kind: 'active' },
  failed: { kind: 'failed', failureCode: 'mandate_declined' },
  // Cancelled without an event to say by whom: at our request we learn it from our own call, so
  // a cancellation seen otherwise came from the payer's side (their bank).
  cancelled: { kind: 'revoked', by: 'bank' },
  expired: { kind: 'expired' },
  // A single-use mandate that was used: no further debits, nobody revoked it.
  consumed: { kind: 'expired' },
  // On GoCardless's block list: refused before it was ever set up.
  blocked: { kind: 'failed', failureCode: 'mandate_declined' },
  // The payer stopped it at their bank; GoCardless may reinstate it, but we send no debit on it meanwhile, and do not reopen it.
  suspended_by_payer: { kind: 'revoked', by: 'bank' },
};

/** GoCardless failure causes (event details.cause) that say more than a refusal. */
const MANDATE_CAUSES: Record<string, MandateFailureCode> = {
  bank_account_closed: 'account_closed',
  bank_account_transferred: 'account_closed',
  account_closed: 'account_closed',
};

export function mandateStateOf(mandate: Mandate, cause?: { cause?: string; origin?: string }): MandateState {
  const connectorReference = mandate.id ?? '';
  const reading = mandate.status ? MANDATE_STATUS[mandate.status] : undefined;
  // A status of a later API version is not a state we can act on: still moving, as far as we know.
  if (!reading) return { kind: 'pending', connectorReference };
  switch (reading.kind) {
    case 'failed': {
      const failureCode = (cause?.cause && MANDATE_CAUSES[cause.cause]) || reading.failureCode;
      return { kind: 'failed', connectorReference, failureCode, message: `GoCardless reports the mandate ${mandate.status}${cause?.cause ? ` (${cause.cause})` : ''}.` };
    }
    case 'revoked':
      return { kind: 'revoked', connectorReference, by: cause?.origin === 'api' ? 'merchant' : reading.by };
    default:
      return { kind: reading.kind, connectorReference };
  }
}

type PaymentReading =
  | { kind: 'pending' | 'succeeded' }
  | { kind: 'declined'; failureCode: PaymentFailureCode; declineType: DeclineType }
  | { kind: 'reversed'; failureCode: PaymentFailureCode };

/**
 * Each GoCardless payment status. `confirmed` is our success (collected from the payer's bank);
 * `failed` and `charged_back` can follow it days later, so they read as reversals: the payment
 * fails whatever it reached, and a success is taken back (src/domain/payments/transitions.ts).
 */
const PAYMENT_STATUS: Record<`${PaymentStatus}`, PaymentReading> = {
  pending_customer_approval: { kind: 'pending' },
  pending_submission: { kind: 'pending' },
  submitted: { kind: 'pending' },
  confirmed: { kind: 'succeeded' },
  paid_out: { kind: 'succeeded' },
  // Never left for the bank: cancelled (by the merchant, or with its mandate) or refused by the payer.
  cancelled: { kind: 'declined', failureCode: 'mandate_invalid', declineType: 'do_not_retry' },
  customer_approval_denied: { kind: 'declined', failureCode: 'debit_declined', declineType: 'do_not_retry' },
  failed: { kind: 'reversed', failureCode: 'debit_declined' },
  charged_back: { kind: 'reversed', failureCode: 'charged_back' },
};

/** Causes of a cancelled payment that are not about its mandate. */
const PAYMENT_CANCEL_CAUSES = new Set(['payment_cancelled', 'bank_account_closed', 'customer_approval_denied']);

export function paymentStateOf(payment: Payment, cause?: { cause?: string; description?: string }): ChargeState {
  const connectorReference = payment.id ?? '';
  const reading = payment.status ? PAYMENT_STATUS[payment.status] : undefined;
  if (!reading) return { kind: 'pending', connectorReference };
  if (!('failureCode' in reading)) return { kind: reading.kind, connectorReference };
  // A payment cancelled for a reason of its own (not its mandate's) says nothing about the next debit.
  const ownCause = reading.kind === 'declined' && cause?.cause && PAYMENT_CANCEL_CAUSES.has(cause.cause);
  const message = cause?.description ?? `GoCardless reports the payment ${payment.status}${cause?.cause ? ` (${cause.cause})` : ''}.`;
  if (reading.kind === 'reversed') return { kind: 'reversed', connectorReference, failureCode: reading.failureCode, message };
  return ownCause
    ? { kind: 'declined', connectorReference, failureCode: 'debit_declined', declineType: 'retry_later', message }
    : { kind: 'declined', connectorReference, failureCode: reading.failureCode, declineType: reading.declineType, message };
}

/**
 * The status each webhook action leaves a mandate or payment in. Actions that change no status we
 * keep (a resubmission requested, a transfer to another creditor, fees, a settled late failure)
 * are absent: their events are acknowledged and applied to nothing.
 */
export const MANDATE_ACTIONS: Partial<Record<string, `${MandateStatus}`>> = {
  created: 'pending_submission',
  customer_approval_granted: 'pending_submission',
  customer_approval_skipped: 'pending_submission',
  submitted: 'submitted',
  active: 'active',
  reinstated: 'active',
  failed: 'failed',
  cancelled: 'cancelled',
  expired: 'expired',
  consumed: 'consumed',
  blocked: 'blocked',
  suspended_by_payer: 'suspended_by_payer',
};

export const PAYMENT_ACTIONS: Partial<Record<string, `${PaymentStatus}`>> = {
  created: 'pending_submission',
  customer_approval_granted: 'pending_submission',
  submitted: 'submitted',
  confirmed: 'confirmed',
  paid_out: 'paid_out',
  // The payer's bank withdrew its charge-back: the payment is paid out again (not re-credited; docs/processors.md).
  chargeback_cancelled: 'paid_out',
  cancelled: 'cancelled',
  customer_approval_denied: 'customer_approval_denied',
  failed: 'failed',
  charged_back: 'charged_back',
};
