// The Adyen connector (cards), over Checkout API v71: a payment is one POST /payments with the card,
// under our payment id as `reference` and as Adyen's Idempotency-Key (a retry with the key gets
// Adyen's first answer, never a second charge; Adyen keeps keys at least 7 days); a redirect ends with
// POST /payments/details; a refund is POST /payments/{pspReference}/refunds under our refund id. A
// card verification (a card saved without paying) is a /payments of amount 0 under our pm_ id.
//
// Requests are shaped by the official SDK's types (@adyen/api-library) and sent by the core's HTTP
// client (../http.ts), not the SDK's: the SDK only speaks https (ADYEN_CHECKOUT_BASE_URL may name an
// http fake or proxy), takes no AbortSignal for the core's deadline, and does not tell a refused
// connection (nothing sent: another connector may be tried) from one lost after sending (unknown).
// Webhook signatures are checked with the SDK's own HMAC validator. Payouts (payouts.ts, over the
// Transfers API) join this connector when the account has its payout credentials.
//
// Adyen has no "get payment" call: outcomes come by its standard webhooks. A status check (the
// worker's, or ?refresh=true) cannot ask Adyen anything, so it reports what the service holds — a
// payment Adyen took (pspReference known) is still pending, waiting for its webhook — and, when
// Adyen's answer was lost (no pspReference), that it cannot tell: the payment then stays pending
// (never failed as "nothing charged", which no one could know) until the AUTHORISATION webhook, or
// until the customer's request is retried: the core then sends it to Adyen again under the same
// key (replaysSendsForMs), and Adyen's answer, first or replayed, is the truth.
import type { PaymentCancelRequest, PaymentCaptureRequest, PaymentDetailsRequest, PaymentRefundRequest, PaymentRequest } from '@adyen/api-library/lib/src/typings/checkout/models.js';
import type { NotificationRequestItem } from '@adyen/api-library/lib/src/typings/notification/models.js';
import type { HttpAnswer, HttpClient } from '../http.js';
import { verificationOf } from '../verifications.js';
import { connectorError, WebhookVerificationError, type CardDetails, type ChargeRequest, type ChargeStatusResult, type Connector, type InboundEvent, type InboundWebhook } from '../types.js';
import { callErrorOf, cancelTaken, CAPTURE_METHOD_KEY, captureTaken, chargeStateOf, readNotification, refundTaken, type PaymentAnswer } from './mapping.js';
import { toAdyenAmount } from './money.js';
import { disputeEventOf } from './disputes.js';
import { adyenHmac } from './hmac.js';
import { createAdyenPayouts, isTransferWebhook, parseTransferWebhook, type AdyenPayoutOptions } from './payouts.js';
import { createAdyenDisputes } from './dispute-defense.js';

export const ADYEN_API_VERSION = 'v71';
/** Adyen keeps an Idempotency-Key at least 7 days; a day less leaves room for clocks and queues. */
export const ADYEN_IDEMPOTENCY_WINDOW_MS = 6 * 24 * 3600 * 1000;
const TEST_BASE = `https://checkout-test.adyen.com/${ADYEN_API_VERSION}`;

export interface AdyenConnectorOptions {
  apiKey: string;
  merchantAccount: string;
  /** The account's HMAC keys (hex), newest first: current, then previous in its grace period. */
  hmacKeys: string[];
  livemode: boolean;
  /** Live only: the account's validated live URL prefix ([random]-[company name]). */
  liveUrlPrefix: string | undefined;
  /** ADYEN_CHECKOUT_BASE_URL (an origin); unset: Adyen's own endpoint for the mode. */
  checkoutBaseUrl: string | undefined;
  /** Where the service answers; Adyen requires a returnUrl even where it redirects no one. */
  publicUrl: () => string;
  http: HttpClient;
  /** ADYEN_DISPUTE_BASE_URL (an origin) for the Disputes API; unset: Adyen's own endpoint for the mode. */
  disputeBaseUrl?: string;
  /** Payouts (Transfers API), when the account has its payout credentials. */
  payouts?: Omit<AdyenPayoutOptions, 'livemode' | 'http'>;
}

/** Adyen's model for the first payment of a series: the customer pays again present, or the merchant charges later (docs/customers.md). */
const FIRST_OF_SERIES = { on_session: 'CardOnFile', off_session: 'UnscheduledCardOnFile' } as const;
const MERCHANT_INITIATED = { unscheduled: 'UnscheduledCardOnFile', subscription: 'Subscription' } as const;

/** Where this account's Checkout requests go: configuration, or Adyen's endpoint for the mode — never tenant input beyond the validated prefix. */
export function adyenCheckoutBase(opts: Pick<AdyenConnectorOptions, 'livemode' | 'liveUrlPrefix' | 'checkoutBaseUrl'>): string {
  if (opts.checkoutBaseUrl) return `${opts.checkoutBaseUrl}/${ADYEN_API_VERSION}`;
  if (!opts.livemode) return TEST_BASE;
  if (!opts.liveUrlPrefix) throw new Error('a live Adyen account needs its live_url_prefix');
  return `https://${opts.liveUrlPrefix}-checkout-live.adyenpayments.com/checkout/${ADYEN_API_VERSION}`;
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** What a /payments request with card details is built from (a charge's fields, the amount in Adyen's units). */
type CardPayment = Pick<ChargeRequest, 'reference' | 'currency' | 'returnUrl' | 'storedCredential' | 'merchantInitiated' | 'threeDSecure'> & { card: CardDetails; value: number };

export function createAdyenConnector(opts: AdyenConnectorOptions): Connector {
  const base = adyenCheckoutBase(opts);
  const headers = (idempotencyKey?: string) => ({ 'x-api-key': opts.apiKey, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) });
  /** One Checkout call: a 2xx answer is read by `read`; anything else is classified (transport failures are thrown as TransportError for the core). */
  async function post<R>(path: string, body: object, signal: AbortSignal, idempotencyKey: string | undefined, read: (body: never) => R) {
    const answer: HttpAnswer = await opts.http.request('POST', `${base}${path}`, body, signal, headers(idempotencyKey));
    if (answer.status >= 200 && answer.status < 300 && answer.body !== undefined) return read(answer.body as never);
    return answer.status >= 200 && answer.status < 300 ? connectorError('invalid_response', `Adyen answered ${answer.status} with no readable body`) : callErrorOf(answer);
  }
  const status = async (request: { connectorReference: string | null }): Promise<ChargeStatusResult> =>
    request.connectorReference
      ? { kind: 'pending', connectorReference: request.connectorReference }
      : connectorError('invalid_response', 'Adyen has no status lookup and its answer to this payment was lost: its AUTHORISATION webhook will tell');
  /** The customer's return from Adyen's page: its redirectResult submitted to /payments/details. */
  const details = (request: { reference: string; connectorReference: string | null }, redirectResult: string, signal: AbortSignal) => {
    const body: PaymentDetailsRequest = { details: { redirectResult } };
    // Its own key: Adyen keeps keys per company account, and the payment id's answer is the redirect.
    return post('/payments/details', body, signal, `${request.reference}-details`, (answer: PaymentAnswer) => chargeStateOf(answer, answer.pspReference ?? request.connectorReference));
  };
  /** A /payments request with card details: a payment, or (value 0) a card verification. */
  const cardPayment = (request: CardPayment, manual: boolean): PaymentRequest => {
    const { number, expMonth, expYear, cvc } = request.card;
    const mit = request.merchantInitiated;
    return {
      amount: { currency: request.currency, value: request.value },
      reference: request.reference,
      merchantAccount: opts.merchantAccount,
      paymentMethod: {
        type: 'scheme',
        number,
        expiryMonth: pad2(expMonth),
        expiryYear: String(expYear),
        // A saved card charged without the customer has no CVC; it cites its set-up's networkTxReference.
        ...(cvc ? { cvc } : {}),
        ...(mit?.networkTransactionId ? { networkPaymentReference: mit.networkTransactionId } : {}),
      },
      // Merchant-initiated: the shopper is absent (ContAuth), for the reason the merchant gave.
      ...(mit ? { shopperInteraction: 'ContAuth', recurringProcessingModel: MERCHANT_INITIATED[mit.reason] } : { shopperInteraction: 'Ecommerce' }),
      // The first, customer-initiated payment of a stored-credential series (the card is kept in
      // our vault, not Adyen's: no storePaymentMethod); its networkTxReference is what later
      // merchant-initiated payments cite.
      ...(request.storedCredential?.kind === 'first' ? { recurringProcessingModel: FIRST_OF_SERIES[request.storedCredential.usage] } : {}),
      // With a return URL, 3-D Secure by redirect (a page the service can send the customer to);
      // without one, no authentication at all: an issuer that insists declines (Authentication required).
      returnUrl: request.returnUrl ?? opts.publicUrl(),
      authenticationData: request.returnUrl
        ? { ...(request.threeDSecure ? { attemptAuthentication: 'always' } : {}), threeDSRequestData: { nativeThreeDS: 'disabled' } }
        : { attemptAuthentication: 'never' },
      // Manual capture: authorise only; the metadata comes back in the AUTHORISATION notification, which says nothing else about it.
      ...(manual ? { additionalData: { manualCapture: 'true' }, metadata: { [CAPTURE_METHOD_KEY]: 'manual' } } : {}),
    } as unknown as PaymentRequest;
  };
  /**
   * A modification of a payment Adyen holds (refund, capture, cancel): under `reference`, taken
   * `received` and settled by its notification. The payment's pspReference comes with Adyen's first
   * answer; without it nothing can be asked.
   */
  async function modify<R>(
    operation: 'refunds' | 'captures' | 'cancels',
    request: { reference: string; connectorPaymentReference: string | null; amount: number; currency: string },
    signal: AbortSignal,
    idempotencyKey: string,
    read: (body: never) => R,
  ) {
    const amount = toAdyenAmount(request.amount, request.currency);
    if (!amount.ok) return connectorError('request_rejected', `${amount.problem}; nothing was sent to Adyen`);
    if (!request.connectorPaymentReference) return connectorError('request_rejected', 'Adyen has not reported a pspReference for this payment yet; nothing was sent');
    const body: PaymentRefundRequest | PaymentCaptureRequest | PaymentCancelRequest = {
      ...(operation === 'cancels' ? {} : { amount: { currency: request.currency, value: amount.value } }),
      reference: request.reference,
      merchantAccount: opts.merchantAccount,
    };
    return post(`/payments/${encodeURIComponent(request.connectorPaymentReference)}/${operation}`, body, signal, idempotencyKey, read);
  }
  const payouts = opts.payouts && createAdyenPayouts({ ...opts.payouts, livemode: opts.livemode, http: opts.http });
  return {
    ...payouts,
    ...createAdyenDisputes({ ...opts, disputeBaseUrl: opts.disputeBaseUrl }),
    name: 'adyen',
    modes: [opts.livemode ? 'live' : 'test'],
    paymentMethodTypes: ['card'],
    replaysSendsForMs: ADYEN_IDEMPOTENCY_WINDOW_MS,
    async charge(request, signal) {
      const amount = toAdyenAmount(request.amount, request.currency);
      if (!amount.ok) return connectorError('request_rejected', `${amount.problem}; nothing was sent to Adyen`);
      if (!request.card) return connectorError('request_rejected', 'Adyen takes card payments only here; nothing was sent');
      const manual = request.captureMethod === 'manual';
      const body = cardPayment({ ...request, card: request.card, value: amount.value }, manual);
      return post('/payments', body, signal, request.reference, (answer: PaymentAnswer) => chargeStateOf(answer, undefined, manual));
    },
    // Adyen's card verification: a zero-value authorisation (amount.value 0), the first, customer-
    // initiated payment of a stored-credential series, so that its networkTxReference comes back.
    async verifyCard(request, signal) {
      const body = cardPayment({ ...request, value: 0, storedCredential: { kind: 'first', usage: request.usage } }, false);
      return post('/payments', body, signal, request.reference, (answer: PaymentAnswer) => verificationOf(chargeStateOf(answer)));
    },
    // No lookup: back from 3-D Secure, its redirectResult is submitted; otherwise as a payment's status.
    verificationStatus: async (request, signal) => verificationOf(request.params?.redirectResult ? await details(request, request.params.redirectResult, signal) : await status(request)),
    chargeStatus: (request) => status(request),
    async completeAction(request, signal) {
      const redirectResult = request.params.redirectResult;
      // The customer came back without Adyen's result (an edited URL): nothing to submit, still waiting.
      return redirectResult ? details(request, redirectResult, signal) : status(request);
    },
    refund: (request, signal) => modify('refunds', request, signal, request.reference, refundTaken),
    async refundStatus(request) {
      // No lookup either: a refund Adyen took waits for its REFUND webhook; one whose answer was lost
      // is sent again by the core under the same Idempotency-Key, and Adyen answers what it did.
      return request.connectorReference ? { kind: 'pending', connectorReference: request.connectorReference } : { kind: 'not_found' };
    },
    // Adyen takes partial captures as they come, and releases what is left of the authorisation by itself after the last one.
    capture: (request, signal) => modify('captures', request, signal, request.reference, captureTaken),
    // No lookup: a capture Adyen took waits for its CAPTURE webhook; one whose answer was lost is
    // sent again under the same Idempotency-Key, and Adyen replays its first answer.
    captureStatus: async (request) => (request.connectorReference ? { kind: 'pending', connectorReference: request.connectorReference } : { kind: 'not_found' }),
    // Our void id is its key and its reference, which the CANCELLATION notification names.
    cancelAuthorization: (request, signal) => modify('cancels', request, signal, request.reference, cancelTaken),
    parseWebhook: (input) =>
      isTransferWebhook(input)
        ? parseTransferWebhook({ hmacKeys: opts.payouts?.hmacKeys ?? [], livemode: opts.livemode, balanceAccountId: opts.payouts?.balanceAccountId }, input)
        : readAdyenWebhook(opts, input),
    webhookAcknowledgement: '[accepted]',
  };
}

/** The one notification item of a standard webhook, verified with the account's HMAC key. */
function verifiedItem(opts: Pick<AdyenConnectorOptions, 'hmacKeys' | 'livemode'>, input: InboundWebhook): NotificationRequestItem {
  let body: { live?: string; notificationItems?: { NotificationRequestItem?: NotificationRequestItem }[] };
  try {
    body = JSON.parse(input.rawBody);
  } catch {
    throw new WebhookVerificationError('payload_invalid', 'The webhook body is not JSON.');
  }
  const items = body?.notificationItems;
  // Adyen sends one item per webhook; a batch is refused whole rather than acknowledged in part.
  const item = Array.isArray(items) && items.length === 1 ? items[0]?.NotificationRequestItem : undefined;
  if (!item || typeof item !== 'object') throw new WebhookVerificationError('payload_invalid', 'The webhook is not an Adyen notification with exactly one NotificationRequestItem.');
  const signed = opts.hmacKeys.some((key) => {
    try {
      return adyenHmac.validateHMAC(item, key);
    } catch {
      return false;
    }
  });
  if (!signed) throw new WebhookVerificationError('signature_invalid', "The notification's hmacSignature is missing or does not verify with the HMAC key of this connector account.");
  if (body.live !== String(opts.livemode)) throw new WebhookVerificationError('payload_invalid', `A ${body.live === 'true' ? 'live' : 'test'} notification was sent to a ${opts.livemode ? 'live' : 'test'} connector account.`);
  return item;
}

/**
 * A verified notification in our words, identified as Adyen does: pspReference, eventCode and
 * success together (Adyen may send the same one again). Items about nothing of ours (another
 * merchant account, events that change nothing we hold) name no reference: acknowledged, not applied.
 */
export function readAdyenWebhook(opts: Pick<AdyenConnectorOptions, 'hmacKeys' | 'livemode' | 'merchantAccount'>, input: InboundWebhook): InboundEvent {
  const item = verifiedItem(opts, input);
  const eventId = `${item.pspReference}:${item.eventCode}:${item.success}`;
  const ours = item.merchantAccountCode === opts.merchantAccount;
  const dispute = ours ? disputeEventOf(eventId, item) : undefined;
  if (dispute) return dispute;
  const reading = ours ? readNotification(item) : undefined;
  if (!reading) return { eventId, object: 'payment', reference: '', state: { kind: 'pending', connectorReference: '' } };
  return { eventId, ...reading } as InboundEvent;
}

