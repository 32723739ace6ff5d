// Stripe's words in ours: PaymentIntent and Refund statuses, card error and decline codes, and
// the SDK's errors as the core classifies calls (a retryable error only where Stripe certainly did
// nothing: the core may then try the next connector; anything else is verified, never re-sent
// elsewhere, since Stripe documents that a 500 may have succeeded).
import Stripe from 'stripe';
import { stripeDeclineOf } from './declines.js';
import { connectorError, type ChargeState, type ConnectorError, type Issued, type PaymentFailureCode, type RefundState } from '../types.js';

/** Where a PaymentIntent stands, for us; its metadata carries our payment id. */
export function chargeStateOf(
  intent: Pick<Stripe.PaymentIntent, 'id' | 'status' | 'last_payment_error' | 'next_action'> & Partial<Pick<Stripe.PaymentIntent, 'latest_charge'>>,
): ChargeState {
  const connectorReference = intent.id;
  switch (intent.status) {
    case 'succeeded': {
      const networkTransactionId = networkTransactionIdOf(intent.latest_charge);
      return { kind: 'succeeded', connectorReference, ...(networkTransactionId ? { networkTransactionId } : {}), ...issuedBy(intent) };
    }
    case 'requires_action': {
      const redirect = intent.next_action?.type === 'redirect_to_url' ? intent.next_action.redirect_to_url?.url : undefined;
      if (redirect) return { kind: 'requires_action', connectorReference, action: { url: redirect, method: 'GET' } };
      // use_stripe_sdk (or another action) needs Stripe.js in the customer's browser, which this
      // service does not run: nobody can complete it (the connector cancels it when it meets it).
      return { kind: 'declined', connectorReference, failureCode: 'authentication_required', declineType: 'authentication_required', message: 'Stripe asks for an action only Stripe.js can perform (use_stripe_sdk).' };
    }
    case 'requires_capture':
      // capture_method manual: authorised, held until captured or cancelled.
      return { kind: 'authorized', connectorReference, ...issuedBy(intent) };
    case 'requires_payment_method': {
      const error = intent.last_payment_error;
      return { kind: 'declined', connectorReference, ...stripeDeclineOf(error), ...issuedBy(intent), message: error?.message ?? 'Stripe declined the payment.' };
    }
    case 'canceled':
      return { kind: 'declined', connectorReference, failureCode: 'processing_error', declineType: 'processor', message: 'The PaymentIntent was canceled at Stripe.' };
    default:
      // processing, requires_confirmation, or a status of a later
      // API version: still moving or not yet known, never failed while money could still move.
      return { kind: 'pending', connectorReference };
  }
}

/**
 * The card's issuing country as Stripe reports it: the charge's payment_method_details.card.country
 * (latest_charge expanded), or the card of a refusal's PaymentMethod (last_payment_error.payment_method).
 */
function issuedBy(intent: Partial<Pick<Stripe.PaymentIntent, 'latest_charge' | 'last_payment_error'>>): Issued {
  const charge = typeof intent.latest_charge === 'object' ? intent.latest_charge : undefined;
  const country = charge?.payment_method_details?.card?.country ?? intent.last_payment_error?.payment_method?.card?.country;
  return country ? { issuingCountry: country } : {};
}

/** The card scheme's id of the charge, when the intent came with its charge expanded (`expand: ['latest_charge']`). */
function networkTransactionIdOf(charge: Stripe.PaymentIntent['latest_charge'] | undefined): string | undefined {
  if (!charge || typeof charge === 'string') return undefined;
  return charge.payment_method_details?.card?.network_transaction_id ?? undefined;
}

export function refundStateOf(refund: Pick<Stripe.Refund, 'id' | 'status' | 'failure_reason'>): RefundState {
  const connectorReference = refund.id;
  switch (refund.status) {
    case 'succeeded':
      return { kind: 'succeeded', connectorReference };
    case 'failed':
    case 'canceled':
      return { kind: 'failed', connectorReference, failureCode: 'processing_error', message: `Stripe reports the refund ${refund.status}${refund.failure_reason ? ` (${refund.failure_reason})` : ''}.` };
    default:
      // pending, requires_action, or null: not settled yet.
      return { kind: 'pending', connectorReference };
  }
}

/** Refund errors Stripe answers before acting that are refusals of the refund itself. */
const REFUND_REFUSALS: Record<string, RefundState & { kind: 'failed' }> = {
  charge_already_refunded: { kind: 'failed', connectorReference: null, failureCode: 'charge_not_refundable', message: 'Stripe says the charge is already refunded.' },
  charge_disputed: { kind: 'failed', connectorReference: null, failureCode: 'charge_not_refundable', message: 'Stripe says the charge is disputed.' },
  amount_too_large: { kind: 'failed', connectorReference: null, failureCode: 'amount_above_refundable', message: 'Stripe says the amount is above what remains refundable.' },
};

export function refundRefusalOf(err: unknown): RefundState | undefined {
  return err instanceof Stripe.errors.StripeInvalidRequestError && err.code ? REFUND_REFUSALS[err.code] : undefined;
}

/** A card error: Stripe refused the payment, the PaymentIntent (if made) says how. */
export function declineOf(err: unknown): ChargeState | undefined {
  if (!(err instanceof Stripe.errors.StripeCardError)) return undefined;
  const intent = err.payment_intent;
  if (intent) return chargeStateOf(intent);
  return { kind: 'declined', connectorReference: null, ...stripeDeclineOf(err), message: err.message };
}

/** Any other error of a call, as the core classifies it; a bug of ours is rethrown (the core then verifies). */
export function callErrorOf(err: unknown): ConnectorError {
  const { errors } = Stripe;
  // Too many requests: Stripe did nothing and says so.
  if (err instanceof errors.StripeRateLimitError) return connectorError('processor_error', 'Stripe answered 429 (rate limited); nothing was done');
  if (err instanceof errors.StripeConnectionError) {
    const code = (err.detail as { code?: string } | undefined)?.code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND') return connectorError('connection_refused', `could not connect to Stripe (${code}); nothing was sent`);
    if (code === 'ETIMEDOUT') return connectorError('timeout', 'Stripe did not answer in time');
    return connectorError('connection_lost', 'the connection to Stripe broke after the request was sent');
  }
  // Stripe holds something under our key already (other parameters): verified, like the simulator's conflict.
  if (err instanceof errors.StripeIdempotencyError) return connectorError('invalid_response', `Stripe holds another request under this key: ${err.message}`);
  // Refused as such before acting: a bad key, a missing permission, a request Stripe would not take.
  if (err instanceof errors.StripeAuthenticationError || err instanceof errors.StripePermissionError || err instanceof errors.StripeInvalidRequestError) {
    return connectorError('request_rejected', `Stripe refused the request: ${err.message}`);
  }
  if (err instanceof errors.StripeError) return connectorError('invalid_response', `Stripe answered ${err.statusCode ?? 'an error'} without saying whether it acted: ${err.message}`);
  throw err;
}
