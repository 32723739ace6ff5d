// A fake Stripe on a local port, for the endpoints the connector uses: PaymentIntents (create and confirm,
// retrieve, search on metadata, capture and cancel under capture_method manual), Refunds (create, retrieve),
// SetupIntents (create and confirm, retrieve, list, cancel) and Disputes (retrieve, update, close:
// stripe-disputes.ts). It behaves as Stripe documents: form-encoded requests with a Bearer secret key,
// Idempotency-Key (same key and same parameters → the same answer replayed; other parameters → 400
// idempotency_error), test cards choosing the outcome, card errors as 402 with the PaymentIntent, refunds
// bounded by what was captured; balance transactions (stripe-balance.ts); the objects it answers (stripe-objects.ts). Answers start from Stripe's published example objects
// (test/support/fixtures/stripe/, with their SOURCE and LICENSE). Faults: 429 before acting, 500 or a dropped
// connection after acting, no answer at all, a payment left `processing`, connections refused; search can lag.
import crypto from 'node:crypto';
import http from 'node:http';
import examples from '../fixtures/stripe/objects.json' with { type: 'json' };
import { FakeProcessor } from './processor.js';
import { listBalanceTransactions } from './stripe-balance.js';
import { answerDispute, disputeOf } from './stripe-disputes.js';
import { chargeOf, expanded, ISSUING_COUNTRY, newIntent, nextActionOf, refusedMerchantInitiated, refusedMethod, strip, stripeEvent } from './stripe-objects.js';

export { ISSUING_COUNTRY, stripeEvent };

export const STRIPE_CARDS = {
  success: '4242424242424242',
  declined: '4000000000000002',
  insufficientFunds: '4000000000009995',
  /** 3-D Secure on every payment (Stripe's 4000002760003184, pm_card_threeDSecureRequired); 4000002500003155 behaves the same here. */
  threeDSecureRequired: '4000002760003184',
  requiresAction: '4000002500003155',
  /** Stripe's "3D Secure 2 authentication must be completed" card (also the service's test-mode challenge card). */
  threeDS2Required: '4000000000003220',
  expired: '4000000000000069',
  incorrectCvc: '4000000000000127',
  /** Stripe's stolen-card and lost-card test cards; the service's do_not_honor and stolen cards (docs/test-mode.md). */
  stolen: '4000000000009979', lost: '4000000000009987', doNotHonor: '4000000000000440', serviceStolen: '4000000000000853',
  /**
   * The issuer's soft decline (decline_code authentication_required) unless 3-D Secure is requested
   * (payment_method_options[card][request_three_d_secure]=any), then a redirect to authenticate;
   * the service's test card of the same meaning (docs/test-mode.md). No Stripe test card declines so.
   */
  softDecline: '4000000000003246',
  /**
   * A Mastercard declined insufficient_funds with the network's advice 25 (retry after 24 hours) in
   * `network_advice_code`, as Stripe passes Mastercard's merchant advice on; no Stripe test card does.
   */
  adviceRetryIn24Hours: '5555550000000259',
  /** Stripe's "exceeding velocity limit" card (card_velocity_exceeded: retry_later); other processors approve it. */ velocity: '4000000000006975',
} as const;

const DECLINES: Record<string, { code: string; decline_code?: string; network_advice_code?: string; message: string }> = {
  [STRIPE_CARDS.declined]: { code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' },
  [STRIPE_CARDS.insufficientFunds]: { code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  [STRIPE_CARDS.expired]: { code: 'expired_card', message: 'Your card has expired.' },
  [STRIPE_CARDS.incorrectCvc]: { code: 'incorrect_cvc', message: "Your card's security code is incorrect." },
  [STRIPE_CARDS.stolen]: { code: 'card_declined', decline_code: 'stolen_card', message: 'Your card was declined.' },
  [STRIPE_CARDS.lost]: { code: 'card_declined', decline_code: 'lost_card', message: 'Your card was declined.' },
  [STRIPE_CARDS.doNotHonor]: { code: 'card_declined', decline_code: 'do_not_honor', message: 'Your card was declined.' },
  [STRIPE_CARDS.serviceStolen]: { code: 'card_declined', decline_code: 'stolen_card', message: 'Your card was declined.' },
  [STRIPE_CARDS.adviceRetryIn24Hours]: { code: 'card_declined', decline_code: 'insufficient_funds', network_advice_code: '25', message: 'Your card has insufficient funds.' },
  [STRIPE_CARDS.velocity]: { code: 'card_declined', decline_code: 'card_velocity_exceeded', message: 'Your card was declined for making repeated attempts too frequently or exceeding its amount limit.' },
};

export type Fault = '429' | '500_after' | 'drop_after' | 'hang_after' | 'processing';
type Obj = Record<string, any>;
type Answer = { status: number; body: Obj };

/** Parses Stripe's form encoding (a[b][c]=v, a[0]=v) into nested objects. */
function parseForm(text: string): Obj {
  const out: Obj = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.split(/\[|\]\[|\]/).filter((p) => p !== '');
    let at = out;
    path.forEach((part, i) => {
      if (i === path.length - 1) at[part] = value;
      else at = at[part] ??= {};
    });
  }
  return out;
}

const error = (status: number, type: string, message: string, extra: Obj = {}): Answer => ({ status, body: { error: { type, message, ...extra } } });

export class FakeStripe extends FakeProcessor<Fault> {
  readonly intents = new Map<string, Obj>();
  /** SetupIntents (card verifications), in creation order. */
  readonly setupIntents = new Map<string, Obj>();
  readonly refunds = new Map<string, Obj>();
  /** Disputes made by dispute(), answered by the merchant's update or close (stripe-disputes.ts). */
  readonly disputes = new Map<string, Obj>();
  /** Create requests received, by Idempotency-Key, replays included. */
  readonly requests = new Map<string, number>();
  private readonly keys = new Map<string, { params: string; answer: Answer }>();
  /** How long a new PaymentIntent stays out of search results. */
  searchLagMs = 0;

  /** A webhook as Stripe sends it: the event body and its Stripe-Signature, made by the SDK. */
  event(type: string, object: Obj, secret: string, timestamp = Math.floor(Date.now() / 1000)): { body: string; signature: string } {
    return stripeEvent(type, object, secret, timestamp);
  }

  /**
   * The cardholder's dispute of a PaymentIntent's charge, as Stripe's published dispute object
   * (its example), in `status` with `balance_transactions` of the funds withdrawn (and reinstated).
   */
  dispute(intentId: string, id: string, status: string, funds: { withdrawn: boolean; reinstated: boolean }, reason = 'fraudulent'): Obj {
    return disputeOf(this.disputes, this.intents.get(intentId)!, id, status, funds, reason);
  }

  /** Settles a PaymentIntent left waiting (requires_action) as the customer's 3-D Secure answer would. */
  settle(id: string, outcome: 'succeeded' | 'failed'): Obj {
    const setup = this.setupIntents.get(id);
    const intent = setup ?? this.intents.get(id)!;
    const code = setup ? 'setup_intent_authentication_failure' : 'payment_intent_authentication_failure';
    const failure = { type: 'invalid_request_error', code, message: 'The provided PaymentMethod has failed authentication.' };
    const error = setup ? { last_setup_error: failure } : { last_payment_error: failure };
    // Authenticated under capture_method manual, a PaymentIntent is authorised and held for its capture.
    const held = !setup && intent.capture_method === 'manual';
    const authenticated = held ? { status: 'requires_capture', amount_capturable: intent.amount, amount_received: 0 } : { status: 'succeeded', ...(setup ? {} : { amount_received: intent.amount }) };
    Object.assign(intent, outcome === 'succeeded' ? { ...authenticated, next_action: null } : { status: 'requires_payment_method', next_action: null, ...error });
    return strip(intent);
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += chunk;
    const url = new URL(req.url!, 'http://stripe');
    const auth = /^Bearer (sk|rk)_(test|live)_\S+$/.exec(req.headers.authorization ?? '');
    const send = (answer: Answer) => res.writeHead(answer.status, { 'content-type': 'application/json', 'request-id': `req_${crypto.randomBytes(6).toString('hex')}` }).end(JSON.stringify(answer.body));
    if (!auth) return void send(error(401, 'invalid_request_error', 'Invalid API Key provided.'));
    const livemode = auth[2] === 'live';
    if (req.method === 'GET') return void send(this.read(url));
    const key = req.headers['idempotency-key'] as string | undefined;
    if (key) this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const params = parseForm(text);
    const fault = this.faults.shift();
    if (fault === '429') return void send(error(429, 'invalid_request_error', 'Too many requests hit the API too quickly.', { code: 'rate_limit' }));
    const held = key && this.keys.get(key);
    const reused = error(400, 'idempotency_error', 'Keys for idempotent requests can only be used with the same parameters they were first used with.');
    const answer = held ? (held.params === text ? held.answer : reused) : this.create(url.pathname, params, livemode, fault === 'processing');
    // Stripe keeps the answer under the key, so a retry with it gets the same answer.
    if (key && !held && answer.status < 500) this.keys.set(key, { params: text, answer });
    if (fault === '500_after') return void send(error(500, 'api_error', 'An unknown error occurred.'));
    if (fault === 'drop_after') return void req.socket.destroy();
    // Acts, and never answers: the caller's deadline ends the call (close() ends the connection).
    if (fault === 'hang_after') return;
    send(answer);
  }

  private create(path: string, params: Obj, livemode: boolean, processing: boolean): Answer {
    if (path === '/v1/payment_intents') return this.createIntent(params, livemode, processing);
    if (path === '/v1/setup_intents') return this.createSetupIntent(params, livemode);

    const cancel = /^\/v1\/(payment_intent|setup_intent)s\/([^/]+)\/cancel$/.exec(path);
    if (cancel) return this.cancel(cancel[1] as 'payment_intent' | 'setup_intent', cancel[2]!, params);
    const capture = /^\/v1\/payment_intents\/([^/]+)\/capture$/.exec(path);
    if (capture) return this.captureIntent(capture[1]!, params);
    if (path === '/v1/refunds') return this.createRefund(params);
    return answerDispute(this.disputes, path, params) ?? error(404, 'invalid_request_error', 'Unrecognized request URL.');
  }

  private read(url: URL): Answer {
    const [, , kind, id] = url.pathname.split('/');
    if (kind === 'balance_transactions' && id === undefined) return listBalanceTransactions(this, url);
    if (kind === 'payment_intents' && id === 'search') {
      const match = /^metadata\['(\w+)'\]:'([^']*)'$/.exec(url.searchParams.get('query') ?? '');
      if (!match) return error(400, 'invalid_request_error', 'Invalid search query.');
      const seen = Date.now() - this.searchLagMs;
      const data = [...this.intents.values()].filter((pi) => pi.metadata[match[1]!] === match[2] && pi._at <= seen);
      return { status: 200, body: { object: 'search_result', url: '/v1/payment_intents/search', has_more: false, next_page: null, data: data.map(strip) } };
    }
    if (kind === 'setup_intents' && id === undefined) {
      // Newest first, as Stripe lists them, `limit` (default 10) at a time, after `starting_after`.
      const newest = [...this.setupIntents.values()].reverse();
      const after = url.searchParams.get('starting_after');
      const all = after ? newest.slice(newest.findIndex((si) => si.id === after) + 1) : newest;
      const limit = Number(url.searchParams.get('limit') ?? 10);
      return { status: 200, body: { object: 'list', url: '/v1/setup_intents', has_more: all.length > limit, data: all.slice(0, limit).map(strip) } };
    }
    const found = ({ payment_intents: this.intents, refunds: this.refunds, setup_intents: this.setupIntents, disputes: this.disputes } as Record<string, Map<string, Obj>>)[kind!]?.get(id!);
    return found ? { status: 200, body: strip(found) } : error(404, 'invalid_request_error', `No such ${kind}: '${id}'`, { code: 'resource_missing' });
  }

  private createIntent(params: Obj, livemode: boolean, processing: boolean): Answer {
    const card = params.payment_method_data?.card;
    if (!params.amount || !params.currency || params.confirm !== 'true' || params.payment_method_data?.type !== 'card' || !card?.number) {
      return error(400, 'invalid_request_error', 'amount, currency, confirm=true and payment_method_data[card] are required here.', { code: 'parameter_missing' });
    }
    if (params.setup_future_usage !== undefined && !['on_session', 'off_session'].includes(params.setup_future_usage)) {
      return error(400, 'invalid_request_error', `Invalid setup_future_usage: must be one of on_session, off_session`, { code: 'parameter_invalid_string', param: 'setup_future_usage' });
    }
    const mitRefusal = refusedMerchantInitiated(params);
    if (mitRefusal) return error(400, 'invalid_request_error', mitRefusal, { code: 'parameter_invalid' });
    const intent: Obj = {
      ...newIntent(examples.payment_intent, 'pi', params, livemode),
      amount: Number(params.amount),
      currency: params.currency,
      capture_method: params.capture_method ?? 'automatic',
      last_payment_error: null,
      latest_charge: `ch_${crypto.randomBytes(12).toString('hex')}`,
      canceled_at: null,
      transfer_data: null,
      _at: Date.now(),
      _refunded: 0,
    };
    this.intents.set(intent.id, intent);
    const decline = DECLINES[card.number];
    if (decline) {
      Object.assign(intent, { status: 'requires_payment_method', last_payment_error: { type: 'card_error', ...decline, payment_method: refusedMethod(intent, card) }, latest_charge: null });
      return error(402, 'card_error', decline.message, { code: decline.code, decline_code: decline.decline_code, network_advice_code: decline.network_advice_code, payment_intent: strip(intent) });
    }
    if (card.number === STRIPE_CARDS.softDecline && params.payment_method_options?.card?.request_three_d_secure !== 'any') {
      const soft = { code: 'card_declined', decline_code: 'authentication_required', message: 'Your card was declined. This transaction requires authentication.' };
      Object.assign(intent, { status: 'requires_payment_method', last_payment_error: { type: 'card_error', ...soft }, latest_charge: null });
      return error(402, 'card_error', soft.message, { ...soft, payment_intent: strip(intent) });
    }
    if ([STRIPE_CARDS.requiresAction, STRIPE_CARDS.threeDSecureRequired, STRIPE_CARDS.threeDS2Required, STRIPE_CARDS.softDecline].includes(card.number)) return this.authenticate(intent, params);
    if (processing) Object.assign(intent, { status: 'processing' });
    // capture_method manual: authorised and held until /capture or /cancel.
    else if (intent.capture_method === 'manual') Object.assign(intent, { status: 'requires_capture', amount_capturable: intent.amount, amount_received: 0, _charge: chargeOf(intent, card) });
    else Object.assign(intent, { status: 'succeeded', amount_received: intent.amount, _charge: chargeOf(intent, card) });
    return { status: 200, body: expanded(intent, params) };
  }

  /**
   * A card that needs 3-D Secure, as Stripe answers it: refused `authentication_required` under
   * error_on_requires_action; a redirect to its hosted page with a return_url; otherwise an action
   * for Stripe.js (use_stripe_sdk).
   */
  private authenticate(intent: Obj, params: Obj): Answer {
    // Off session nobody can authenticate: Stripe declines authentication_required.
    if (params.error_on_requires_action === 'true' || params.off_session === 'true') {
      const error = { type: 'card_error', code: 'authentication_required', decline_code: 'authentication_required', message: 'Your card was declined. This transaction requires authentication.' };
      Object.assign(intent, { status: 'requires_payment_method', last_payment_error: error, latest_charge: null });
      return { status: 402, body: { error: { ...error, payment_intent: strip(intent) } } };
    }
    Object.assign(intent, { status: 'requires_action', next_action: nextActionOf('payment_intent', intent.id, params.return_url), latest_charge: null });
    return { status: 200, body: strip(intent) };
  }

  /**
   * A SetupIntent created and confirmed with the card, as Stripe answers it: the test cards decline
   * (402 card_error with the SetupIntent) or ask for 3-D Secure as for a payment; no amount, no
   * PaymentIntent-only parameters, and nothing that names a network transaction id.
   */
  private createSetupIntent(params: Obj, livemode: boolean): Answer {
    const card = params.payment_method_data?.card;
    if (params.confirm !== 'true' || params.payment_method_data?.type !== 'card' || !card?.number) {
      return error(400, 'invalid_request_error', 'confirm=true and payment_method_data[card] are required here.', { code: 'parameter_missing' });
    }
    const unknown = ['amount', 'currency', 'setup_future_usage', 'off_session', 'error_on_requires_action', 'capture_method'].find((name) => params[name] !== undefined);
    if (unknown) return error(400, 'invalid_request_error', `Received unknown parameter: ${unknown}`, { code: 'parameter_unknown', param: unknown });
    if (params.usage !== undefined && !['on_session', 'off_session'].includes(params.usage)) {
      return error(400, 'invalid_request_error', 'Invalid usage: must be one of on_session, off_session', { code: 'parameter_invalid_string', param: 'usage' });
    }
    const intent: Obj = { ...newIntent(examples.setup_intent, 'seti', params, livemode), usage: params.usage ?? 'off_session', last_setup_error: null };
    const id: string = intent.id;
    this.setupIntents.set(id, intent);
    const decline = DECLINES[card.number];
    if (decline) {
      Object.assign(intent, { status: 'requires_payment_method', last_setup_error: { type: 'card_error', ...decline } });
      return error(402, 'card_error', decline.message, { code: decline.code, decline_code: decline.decline_code, setup_intent: strip(intent) });
    }
    if ([STRIPE_CARDS.requiresAction, STRIPE_CARDS.threeDSecureRequired, STRIPE_CARDS.threeDS2Required].includes(card.number)) {
      Object.assign(intent, { status: 'requires_action', next_action: nextActionOf('setup_intent', id, params.return_url) });
    } else Object.assign(intent, { status: 'succeeded' });
    return { status: 200, body: strip(intent) };
  }

  /** Cancels a PaymentIntent or a SetupIntent not yet succeeded; it takes only cancellation_reason (one of Stripe's) and expand. */
  private cancel(object: 'payment_intent' | 'setup_intent', id: string, params: Obj): Answer {
    const unknown = Object.keys(params).find((k) => k !== 'cancellation_reason' && !k.startsWith('expand'));
    if (unknown) return error(400, 'invalid_request_error', `Received unknown parameter: ${unknown}`, { code: 'parameter_unknown', param: unknown });
    const reason = params.cancellation_reason;
    if (reason !== undefined && !['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'].includes(reason as string)) {
      return error(400, 'invalid_request_error', `Invalid cancellation_reason: ${String(reason)}`, { code: 'parameter_invalid_string', param: 'cancellation_reason' });
    }
    const intent = (object === 'setup_intent' ? this.setupIntents : this.intents).get(id);
    if (!intent) return error(404, 'invalid_request_error', `No such ${object.replace('_', '')}: '${id}'`, { code: 'resource_missing' });
    if (intent.status === 'succeeded' || intent.status === 'canceled') {
      const name = object === 'setup_intent' ? 'SetupIntent' : 'PaymentIntent';
      return error(400, 'invalid_request_error', `You cannot cancel this ${name} because it has a status of ${intent.status}.`, { code: `${object}_unexpected_state` });
    }
    Object.assign(intent, { status: 'canceled', next_action: null, ...(object === 'setup_intent' ? { cancellation_reason: 'abandoned' } : { canceled_at: Math.floor(Date.now() / 1000), cancellation_reason: reason ?? null }) });
    return { status: 200, body: strip(intent) };
  }

  /** Captures a requires_capture PaymentIntent once (amount_to_capture, default all); Stripe releases the rest. */
  private captureIntent(id: string, params: Obj): Answer {
    const intent = this.intents.get(id);
    if (!intent) return error(404, 'invalid_request_error', `No such payment_intent: '${id}'`, { code: 'resource_missing' });
    if (intent.status !== 'requires_capture') {
      return error(400, 'invalid_request_error', `This PaymentIntent could not be captured because it has a status of ${intent.status}.`, { code: 'payment_intent_unexpected_state' });
    }
    const amount = params.amount_to_capture === undefined ? intent.amount : Number(params.amount_to_capture);
    if (!Number.isInteger(amount) || amount <= 0 || amount > intent.amount_capturable) {
      return error(400, 'invalid_request_error', 'The amount to capture is greater than the amount capturable.', { code: 'amount_too_large' });
    }
    Object.assign(intent, { status: 'succeeded', amount_received: amount, amount_capturable: 0 });
    return { status: 200, body: strip(intent) };
  }

  private createRefund(params: Obj): Answer {
    const intent = this.intents.get(params.payment_intent);
    if (!intent) return error(404, 'invalid_request_error', `No such payment_intent: '${params.payment_intent}'`, { code: 'resource_missing' });
    if (intent.status !== 'succeeded') return error(400, 'invalid_request_error', 'This PaymentIntent has no successful charge to refund.', { code: 'charge_not_refundable' });
    // Only what was captured (amount_received) can be refunded.
    const captured = intent.amount_received ?? intent.amount;
    const amount = params.amount ? Number(params.amount) : captured - intent._refunded;
    if (intent._refunded >= captured) return error(400, 'invalid_request_error', 'Charge has already been refunded.', { code: 'charge_already_refunded' });
    if (intent._refunded + amount > captured) return error(400, 'invalid_request_error', 'Refund amount is greater than unrefunded amount on charge.', { code: 'amount_too_large' });
    intent._refunded += amount;
    const refund = { ...structuredClone(examples.refund), id: `re_${crypto.randomBytes(12).toString('hex')}`, amount, currency: intent.currency, charge: intent.latest_charge, payment_intent: intent.id, metadata: params.metadata ?? {}, created: Math.floor(Date.now() / 1000), status: 'succeeded' };
    this.refunds.set(refund.id, refund);
    return { status: 200, body: refund };
  }
}
