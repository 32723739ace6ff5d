// Stripe's objects as the fake Stripe (stripe.ts) shows them: intents made from its published
// examples, their expanded charge and refused payment method, 3-D Secure's next action, and the
// webhook events it signs; with the rule by which it refuses a merchant-initiated payment.
import crypto from 'node:crypto';
import Stripe from 'stripe';

type Obj = Record<string, any>;

/** A webhook as Stripe sends it about `object`: the event body and its Stripe-Signature, made by the SDK. */
export function stripeEvent(type: string, object: Obj, secret: string, timestamp = Math.floor(Date.now() / 1000)): { body: string; signature: string } {
  const body = JSON.stringify({ id: `evt_${crypto.randomBytes(12).toString('hex')}`, object: 'event', api_version: null, created: timestamp, type, data: { object }, livemode: object.livemode ?? false, pending_webhooks: 1, request: { id: null, idempotency_key: null } });
  const signature = new Stripe('sk_test_fake').webhooks.generateTestHeaderString({ payload: body, secret, timestamp });
  return { body, signature };
}

/**
 * Why Stripe refuses a merchant-initiated payment with raw card data: off_session needs the
 * network transaction id of the card's set-up (mit_exemption), and neither can come with a
 * customer's presence (a return_url, a new series, a CVC) nor without the other.
 */
export function refusedMerchantInitiated(params: Obj): string | undefined {
  const ntid = params.payment_method_options?.card?.mit_exemption?.network_transaction_id;
  if (params.off_session !== 'true') return ntid === undefined ? undefined : 'mit_exemption can only be used with off_session=true.';
  if (!ntid || !/^\w{8,}$/.test(ntid)) return 'payment_method_options[card][mit_exemption][network_transaction_id] is required to charge raw card data off session.';
  if (params.return_url || params.setup_future_usage || params.payment_method_data?.card?.cvc) return 'An off_session payment cannot take a return_url, setup_future_usage or a CVC.';
  return undefined;
}

/** Where Stripe's test cards are issued (its 4242… card: `country: "US"` in its published charge): every card of the fake. */
export const ISSUING_COUNTRY = 'US';

/** The PaymentMethod a refusal names (last_payment_error.payment_method), with its card's issuing country. */
export function refusedMethod(intent: Obj, card: Obj): Obj {
  return { id: intent.payment_method, object: 'payment_method', type: 'card', card: { brand: 'visa', country: ISSUING_COUNTRY, last4: String(card.number).slice(-4) } };
}

/** A succeeded intent's charge as Stripe shows it expanded: its card details with the scheme's network transaction id. */
export function chargeOf(intent: Obj, card: Obj): Obj {
  const number = String(card.number);
  return {
    id: intent.latest_charge,
    object: 'charge',
    amount: intent.amount,
    currency: intent.currency,
    payment_intent: intent.id,
    status: 'succeeded',
    payment_method_details: { type: 'card', card: { brand: 'visa', country: ISSUING_COUNTRY, last4: number.slice(-4), exp_month: Number(card.exp_month), exp_year: Number(card.exp_year), network_transaction_id: `${crypto.randomInt(1e13, 2e14)}` } },
  };
}

/** The intent as answered, its latest_charge expanded when the request asked for it (expand[]=latest_charge). */
export function expanded(intent: Obj, params: Obj): Obj {
  const asks = Object.values(params.expand ?? {}).includes('latest_charge');
  return asks && intent._charge ? { ...strip(intent), latest_charge: intent._charge } : strip(intent);
}

/** A new PaymentIntent or SetupIntent from Stripe's example object: its own ids, our metadata, no action yet. */
export function newIntent(example: Obj, prefix: 'pi' | 'seti', params: Obj, livemode: boolean): Obj {
  const id = `${prefix}_${crypto.randomBytes(12).toString('hex')}`;
  const created = Math.floor(Date.now() / 1000);
  return { ...structuredClone(example), id, client_secret: `${id}_secret_x`, metadata: params.metadata ?? {}, livemode, created, payment_method: `pm_${crypto.randomBytes(12).toString('hex')}`, next_action: null };
}

/** 3-D Secure as Stripe asks it: a redirect to its hosted page with a return_url, otherwise an action for Stripe.js (use_stripe_sdk). */
export function nextActionOf(object: 'payment_intent' | 'setup_intent', id: string, returnUrl: string | undefined): Obj {
  return returnUrl
    ? { type: 'redirect_to_url', redirect_to_url: { url: `https://hooks.stripe.com/3d_secure_2/hosted?merchant=acct_fake&${object}=${id}`, return_url: returnUrl } }
    : { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect', stripe_js: `https://hooks.stripe.com/redirect/authenticate/${id}` } };
}

/** The object as Stripe shows it, without the fake's own bookkeeping. */
export function strip(object: Obj): Obj {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !key.startsWith('_')));
}
