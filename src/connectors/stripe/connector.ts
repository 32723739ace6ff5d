// The Stripe connector (cards), over the official SDK with a pinned API version. A payment is one
// PaymentIntent created and confirmed in one call, captured automatically (or, capture_method
// manual, left requires_capture until captured or cancelled: captures.ts), with our payment id as
// Stripe's Idempotency-Key and in its metadata (to locate it by search when we hold no
// PaymentIntent id); a refund is a Refund under our refund id. The SDK never retries by itself:
// the core decides (same key, then verify). A card verification is a SetupIntent (setup-intents.ts). Where requests go comes from configuration only
// (STRIPE_API_BASE_URL), never from the connector account.
import Stripe from 'stripe';
import { beforeAbort, connectorError, TransportError, WebhookVerificationError, type Connector, type InboundEvent, type InboundWebhook } from '../types.js';
import { balanceTransactions } from './balance-transactions.js';
import { callErrorOf, chargeStateOf, declineOf, refundRefusalOf, refundStateOf } from './mapping.js';
import { cancelRefusalOf, cancelStateOf, captureRefusalOf, capturedStateOf, captureStateOf, STRIPE_CANCELLATION_REASON } from './captures.js';
import { toStripeAmount } from './money.js';
import { PAYMENT_METHOD_KEY, SETUP_INTENT_PAGE, SETUP_INTENT_PAGES, setupDeclineOf, setupIntentParams, setupStateOf } from './setup-intents.js';
import { disputeEventOf } from './disputes.js';
import { stripeDisputeAnswers } from './dispute-answers.js';

/** The API version every request names, so that Stripe's answers keep the shape mapped here. */
export const STRIPE_API_VERSION = '2026-10-28.endive';
export const WEBHOOK_TOLERANCE_S = 300;
const PAYMENT_KEY = 'payment_id';
const REFUND_KEY = 'refund_id';

export interface StripeConnectorOptions {
  secretKey: string;
  /** The account's webhook signing secrets, newest first (current, then previous in its grace period). */
  webhookSecrets: string[];
  livemode: boolean;
  /** STRIPE_API_BASE_URL; unset: api.stripe.com. */
  apiBaseUrl: string | undefined;
}

function clientOptions(base: string | undefined): Stripe.StripeConfig {
  const options: Stripe.StripeConfig = { apiVersion: STRIPE_API_VERSION as Stripe.StripeConfig['apiVersion'], maxNetworkRetries: 0, telemetry: false };
  if (!base) return options;
  const url = new URL(base);
  return { ...options, protocol: url.protocol === 'http:' ? 'http' : 'https', host: url.hostname, port: url.port ? Number(url.port) : undefined };
}

/** One SDK call: its answer read by `read`; a refusal `refused` recognises is an answer too; other errors classified. */
async function ask<A, R, E = never>(signal: AbortSignal, call: () => Promise<A>, read: (answer: A) => R, refused: (err: unknown) => R | E | undefined = () => undefined) {
  try {
    // The SDK takes no AbortSignal: the core's deadline is kept here.
    if (signal.aborted) throw new TransportError('connect_timeout', 'no time left to call Stripe');
    return read(await beforeAbort(call(), signal, 'Stripe did not answer in time'));
  } catch (err) {
    if (err instanceof TransportError) throw err;
    return refused(err) ?? callErrorOf(err);
  }
}

const notFound = (err: unknown): { kind: 'not_found' } | undefined =>
  err instanceof Stripe.errors.StripeInvalidRequestError && err.code === 'resource_missing' ? { kind: 'not_found' } : undefined;

/** Stripe's merchant-initiated exemption with the card's network transaction id (docs/customers.md). */
function mitExemption(networkTransactionId: string | null): Record<string, unknown> {
  return networkTransactionId === null ? {} : { payment_method_options: { card: { mit_exemption: { network_transaction_id: networkTransactionId } } } };
}

export function createStripeConnector(opts: StripeConnectorOptions): Connector {
  const stripe = new Stripe(opts.secretKey, clientOptions(opts.apiBaseUrl));
  /** The PaymentIntent of our payment: by its id when we hold it, else by search on our metadata (eventually consistent). */
  const findIntent = async (reference: string, id: string | null): Promise<Stripe.PaymentIntent | undefined> => {
    if (id) return stripe.paymentIntents.retrieve(id);
    const found = await stripe.paymentIntents.search({ query: `metadata['${PAYMENT_KEY}']:'${reference}'`, limit: 1 });
    return found.data[0];
  };
  /**
   * The SetupIntent of our verification: by its id when we hold it, else among the account's newest,
   * page after page up to a bound (Stripe cannot search them); not found there, it can only be said
   * absent when the pages read were all.
   */
  const findSetupIntent = async (reference: string, id: string | null): Promise<Stripe.SetupIntent | undefined> => {
    if (id) return stripe.setupIntents.retrieve(id);
    let after: string | undefined;
    for (let page = 0; page < SETUP_INTENT_PAGES; page++) {
      const newest = await stripe.setupIntents.list({ limit: SETUP_INTENT_PAGE, ...(after ? { starting_after: after } : {}) });
      const found = newest.data.find((intent) => intent.metadata?.[PAYMENT_METHOD_KEY] === reference);
      if (found || !newest.has_more || newest.data.length === 0) return found;
      after = newest.data.at(-1)!.id;
    }
    throw new Stripe.errors.StripeAPIError({ message: `Stripe holds more than ${SETUP_INTENT_PAGES * SETUP_INTENT_PAGE} SetupIntents newer than ${reference}'s, if it holds it` });
  };
  return {
    name: 'stripe',
    modes: [opts.livemode ? 'live' : 'test'],
    paymentMethodTypes: ['card'],
    async charge(request, signal) {
      const amount = toStripeAmount(request.amount, request.currency);
      if (!amount.ok) return connectorError('request_rejected', `${amount.problem}; nothing was sent to Stripe`);
      if (!request.card) return connectorError('request_rejected', 'Stripe takes card payments only here; nothing was sent');
      const { number, expMonth, expYear, cvc } = request.card;
      const params: Stripe.PaymentIntentCreateParams = {
        amount: amount.amount,
        currency: request.currency.toLowerCase(),
        confirm: true,
        capture_method: request.captureMethod ?? 'automatic',
        allowed_payment_method_types: ['card'],
        // A saved card charged without the customer has no CVC to send.
        payment_method_data: { type: 'card', card: { number, exp_month: expMonth, exp_year: expYear, ...(cvc ? { cvc } : {}) } } as Stripe.PaymentIntentCreateParams.PaymentMethodData,
        metadata: { [PAYMENT_KEY]: request.reference },
        // The first payment of a stored-credential series says so, and its charge's network
        // transaction id (payment_method_details.card) is what later merchant-initiated payments cite.
        ...(request.storedCredential?.kind === 'first' ? { setup_future_usage: request.storedCredential.usage, expand: ['latest_charge'] } : {}),
        // 3-D Secure: a redirect back to our return endpoint; without one, Stripe must not start it.
        // A merchant-initiated payment is off_session (Stripe then never starts 3-D Secure) and
        // cites the network transaction id of the card's set-up (mit_exemption: enabled per
        // account by Stripe, as raw card data is, and not in the SDK's types).
        ...(request.merchantInitiated
          ? { off_session: true, ...mitExemption(request.merchantInitiated.networkTransactionId) }
          : request.returnUrl === undefined
          ? { error_on_requires_action: true }
          : { return_url: request.returnUrl, ...(request.threeDSecure ? { payment_method_options: { card: { request_three_d_secure: 'any' } } } : {}) }),
      } as Stripe.PaymentIntentCreateParams;
      const state = await ask(signal, () => stripe.paymentIntents.create(params, { idempotencyKey: request.reference }), chargeStateOf, declineOf);
      // A PaymentIntent that needs a customer nobody will bring is cancelled, so that it can never be completed later.
      if (state.kind === 'declined' && state.failureCode === 'authentication_required' && state.connectorReference) {
        const id = state.connectorReference;
        await ask(signal, () => stripe.paymentIntents.cancel(id), () => undefined).catch(() => undefined);
      }
      return state;
    },
    async verifyCard(request, signal) {
      const params = setupIntentParams(request);
      const state = await ask(signal, () => stripe.setupIntents.create(params, { idempotencyKey: request.reference }), setupStateOf, setupDeclineOf);
      // As for a payment: one that needs a customer nobody will bring is cancelled, never completed later.
      if (state.kind === 'declined' && state.failureCode === 'authentication_required' && state.connectorReference) {
        const id = state.connectorReference;
        await ask(signal, () => stripe.setupIntents.cancel(id), () => undefined).catch(() => undefined);
      }
      return state;
    },
    verificationStatus: (request, signal) =>
      ask(signal, () => findSetupIntent(request.reference, request.connectorReference), (intent) => (intent ? setupStateOf(intent) : ({ kind: 'not_found' } as const)), notFound),
    chargeStatus: (request, signal) =>
      ask(signal, () => findIntent(request.reference, request.connectorReference), (intent) => (intent ? chargeStateOf(intent) : ({ kind: 'not_found' } as const)), notFound),
    async refund(request, signal) {
      const amount = toStripeAmount(request.amount, request.currency);
      if (!amount.ok) return connectorError('request_rejected', `${amount.problem}; nothing was sent to Stripe`);
      return ask(
        signal,
        async () => {
          const intent = await findIntent(request.paymentReference, request.connectorPaymentReference);
          if (!intent) throw new Stripe.errors.StripeInvalidRequestError({ message: `Stripe holds no PaymentIntent for ${request.paymentReference}`, code: 'resource_missing' });
          const params = { payment_intent: intent.id, amount: amount.amount, metadata: { [REFUND_KEY]: request.reference } };
          return stripe.refunds.create(params, { idempotencyKey: request.reference });
        },
        refundStateOf,
        refundRefusalOf,
      );
    },
    async refundStatus(request, signal) {
      // Refunds cannot be searched. Without Stripe's id (the answer was lost) the core re-sends the
      // refund under the same Idempotency-Key, and Stripe answers with what it did, if anything.
      if (!request.connectorReference) return { kind: 'not_found' };
      const id = request.connectorReference;
      return ask(signal, () => stripe.refunds.retrieve(id), refundStateOf, notFound);
    },
    async capture(request, signal) {
      const amount = toStripeAmount(request.amount, request.currency);
      if (!amount.ok) return connectorError('request_rejected', `${amount.problem}; nothing was sent to Stripe`);
      // Without multicapture (not asked for: catalogue.ts) Stripe captures a PaymentIntent once and releases the rest.
      if (!request.finalCapture) return connectorError('request_rejected', 'Stripe takes one capture per PaymentIntent here; nothing was sent');
      return ask(
        signal,
        async () => {
          const intent = await findIntent(request.paymentReference, request.connectorPaymentReference);
          if (!intent) throw new Stripe.errors.StripeInvalidRequestError({ message: `Stripe holds no PaymentIntent for ${request.paymentReference}`, code: 'resource_missing' });
          return stripe.paymentIntents.capture(intent.id, { amount_to_capture: amount.amount }, { idempotencyKey: request.reference });
        },
        captureStateOf,
        captureRefusalOf,
      );
    },
    // A PaymentIntent has no capture object of its own: its status says whether it was captured.
    captureStatus: (request, signal) =>
      ask(signal, () => findIntent(request.paymentReference, request.connectorPaymentReference), (intent) => (intent ? capturedStateOf(intent) : ({ kind: 'not_found' } as const)), notFound),
    async cancelAuthorization(request, signal) {
      return ask(
        signal,
        async () => {
          const intent = await findIntent(request.paymentReference, request.connectorPaymentReference);
          if (!intent) throw new Stripe.errors.StripeInvalidRequestError({ message: `Stripe holds no PaymentIntent for ${request.paymentReference}`, code: 'resource_missing' });
          return stripe.paymentIntents.cancel(intent.id, { cancellation_reason: STRIPE_CANCELLATION_REASON[request.reason] }, { idempotencyKey: request.reference });
        },
        cancelStateOf,
        cancelRefusalOf,
      );
    },
    ...stripeDisputeAnswers(stripe, ask),
    parseWebhook: (input) => parseStripeWebhook(stripe, opts.webhookSecrets, input),
    settlementRecords: (period, signal) => balanceTransactions(stripe, period, { payment: PAYMENT_KEY, refund: REFUND_KEY }, signal),
  };
}

function verifiedEvent(stripe: Stripe, secrets: string[], input: InboundWebhook): Stripe.Event {
  const header = input.headers['stripe-signature'];
  const signature = Array.isArray(header) ? header[0] : header;
  if (!signature || secrets.length === 0) throw new WebhookVerificationError('signature_invalid', 'The Stripe-Signature header is missing or the account has no signing secret.');
  let stale = false;
  for (const secret of secrets) {
    try {
      return stripe.webhooks.constructEvent(input.rawBody, signature, secret, WEBHOOK_TOLERANCE_S, undefined, input.now.getTime());
    } catch (err) {
      if (!(err instanceof Stripe.errors.StripeSignatureVerificationError)) throw new WebhookVerificationError('payload_invalid', 'The webhook body is not a Stripe event.');
      stale ||= /tolerance/i.test(err.message);
    }
  }
  throw stale
    ? new WebhookVerificationError('timestamp_stale', `The Stripe-Signature timestamp is more than ${WEBHOOK_TOLERANCE_S} s away from now.`)
    : new WebhookVerificationError('signature_invalid', 'The Stripe-Signature header does not verify with the signing secret of this connector account.');
}

/**
 * A verified Stripe event in our words. Events about nothing of ours (other types, objects without
 * our id in their metadata) name no reference: the core acknowledges them without applying anything.
 */
export function parseStripeWebhook(stripe: Stripe, secrets: string[], input: InboundWebhook): InboundEvent {
  const event = verifiedEvent(stripe, secrets, input);
  const dispute = disputeEventOf(event);
  if (dispute) return dispute;
  const object = event.data.object as { object?: string; metadata?: Record<string, string> | null };
  if (object.object === 'payment_intent') {
    const intent = object as Stripe.PaymentIntent;
    return { eventId: event.id, object: 'payment', reference: intent.metadata?.[PAYMENT_KEY] ?? '', state: chargeStateOf(intent) };
  }
  if (object.object === 'refund') {
    const refund = object as Stripe.Refund;
    return { eventId: event.id, object: 'refund', reference: refund.metadata?.[REFUND_KEY] ?? '', state: refundStateOf(refund) };
  }
  return { eventId: event.id, object: 'payment', reference: '', state: { kind: 'pending', connectorReference: '' } };
}
