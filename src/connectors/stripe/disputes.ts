// Stripe's disputes in our words: every reason Stripe documents for a dispute
// (https://docs.stripe.com/api/disputes/object#dispute_object-reason) and every status, with the
// stage each belongs to, read from the `charge.dispute.*` events. Stripe names the payment by its
// PaymentIntent (our connector reference of the payment); its funds events say the money moved.
import type Stripe from 'stripe';
import type { DisputeReason, DisputeReport, DisputeStatus, InboundEvent } from '../types.js';
import { fromStripeAmount } from './money.js';

const REASONS: Record<string, DisputeReason> = {
  bank_cannot_process: 'processing_error',
  check_returned: 'processing_error',
  credit_not_processed: 'credit_not_processed',
  customer_initiated: 'general',
  debit_not_authorized: 'fraudulent',
  duplicate: 'duplicate',
  fraudulent: 'fraudulent',
  general: 'general',
  incorrect_account_details: 'processing_error',
  insufficient_funds: 'processing_error',
  noncompliant: 'general',
  product_not_received: 'product_not_received',
  product_unacceptable: 'product_unacceptable',
  subscription_canceled: 'subscription_canceled',
  unrecognized: 'unrecognized',
};

/** Each status, ours and its stage: an inquiry (warning_*) comes before a chargeback, a decision last. */
const STATUSES: Record<string, readonly [DisputeStatus, number]> = {
  warning_needs_response: ['warning_needs_response', 0],
  warning_under_review: ['under_review', 1],
  // The inquiry closed without a chargeback: the merchant keeps the money.
  warning_closed: ['won', 4],
  needs_response: ['needs_response', 2],
  under_review: ['under_review', 3],
  prevented: ['won', 4],
  won: ['won', 4],
  lost: ['lost', 4],
};

export const STRIPE_DISPUTE_EVENTS = [
  'charge.dispute.created',
  'charge.dispute.updated',
  'charge.dispute.closed',
  'charge.dispute.funds_withdrawn',
  'charge.dispute.funds_reinstated',
] as const;

const PAYMENT_KEY = 'payment_id';

/** A verified `charge.dispute.*` event as a dispute report; undefined for other events. */
export function disputeEventOf(event: Stripe.Event): InboundEvent | undefined {
  if (!(STRIPE_DISPUTE_EVENTS as readonly string[]).includes(event.type)) return undefined;
  const dispute = event.data.object as Stripe.Dispute;
  const intent = dispute.payment_intent;
  const [status, stage] = STATUSES[dispute.status] ?? (['needs_response', 2] as const);
  // The balance transactions the dispute holds: withdrawals take money, reinstatements give it back.
  const moves = (dispute.balance_transactions ?? []).filter((t): t is Stripe.BalanceTransaction => typeof t === 'object' && t !== null);
  const reinstated = event.type === 'charge.dispute.funds_reinstated' ? 1 : 0;
  const withdrawn = event.type === 'charge.dispute.funds_withdrawn' || reinstated ? 1 : 0;
  const report: DisputeReport = {
    connectorReference: dispute.id,
    paymentConnectorReference: typeof intent === 'string' ? intent : (intent?.id ?? null),
    amount: fromStripeAmount(dispute.amount, dispute.currency),
    currency: dispute.currency.toUpperCase(),
    reason: REASONS[dispute.reason] ?? 'general',
    processorReason: dispute.reason,
    status,
    stage,
    evidenceDueBy: dispute.evidence_details?.due_by ? new Date(dispute.evidence_details.due_by * 1000) : null,
    withdrawals: Math.max(withdrawn, moves.filter((t) => t.amount < 0).length),
    reinstatements: Math.max(reinstated, moves.filter((t) => t.amount > 0).length),
  };
  const reference = typeof intent === 'object' && intent !== null ? (intent.metadata?.[PAYMENT_KEY] ?? '') : '';
  return { eventId: event.id, object: 'dispute', reference, state: report };
}
