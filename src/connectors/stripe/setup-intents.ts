// Stripe's words in ours for card verifications: a SetupIntent created and confirmed in one call
// with the card and its `usage`, our pm_ id as the Idempotency-Key and in its metadata. A
// SetupIntent moves through the statuses of a PaymentIntent (less requires_capture), so it is read
// as one (mapping.ts). It carries no network transaction id: Stripe keeps the card scheme's id of
// a set-up to itself, so a card verified here is later charged off session without one
// (docs/customers.md), and routing prefers a connector that returns it.
import Stripe from 'stripe';
import type { VerificationState } from '../types.js';
import { verificationOf } from '../verifications.js';
import { chargeStateOf } from './mapping.js';
import { stripeDeclineOf } from './declines.js';

export const PAYMENT_METHOD_KEY = 'payment_method_id';
/** How many SetupIntents one page of Stripe's list holds (its most). */
export const SETUP_INTENT_PAGE = 100;
/** How many pages of the account's newest SetupIntents a lookup by our id reads at most (Stripe has no search for them). */
export const SETUP_INTENT_PAGES = 10;

type SetupIntent = Pick<Stripe.SetupIntent, 'id' | 'status' | 'last_setup_error' | 'next_action'>;

export function setupStateOf(intent: SetupIntent): VerificationState {
  const asIntent = { id: intent.id, status: intent.status, last_payment_error: intent.last_setup_error, next_action: intent.next_action } as Pick<Stripe.PaymentIntent, 'id' | 'status' | 'last_payment_error' | 'next_action'>;
  return verificationOf(chargeStateOf(asIntent), null);
}

/** A card error: Stripe refused the verification, the SetupIntent (if made) says how. */
export function setupDeclineOf(err: unknown): VerificationState | undefined {
  if (!(err instanceof Stripe.errors.StripeCardError)) return undefined;
  const intent = (err as { setup_intent?: SetupIntent }).setup_intent;
  if (intent) return setupStateOf(intent);
  return { kind: 'declined', connectorReference: null, ...stripeDeclineOf(err), message: err.message };
}

/** The params of the SetupIntent that verifies the card (confirmed at once; 3-D Secure by redirect to `returnUrl` when given). */
export function setupIntentParams(request: { reference: string; usage: 'on_session' | 'off_session'; returnUrl?: string; card: { number: string; expMonth: number; expYear: number; cvc: string } }): Stripe.SetupIntentCreateParams {
  const { number, expMonth, expYear, cvc } = request.card;
  return {
    confirm: true,
    usage: request.usage,
    payment_method_types: ['card'],
    payment_method_data: { type: 'card', card: { number, exp_month: expMonth, exp_year: expYear, cvc } },
    metadata: { [PAYMENT_METHOD_KEY]: request.reference },
    ...(request.returnUrl === undefined ? {} : { return_url: request.returnUrl }),
  } as Stripe.SetupIntentCreateParams;
}
