// A fake Adyen Checkout API v71 on a local port, for the operations the connector uses: POST
// /payments, /payments/details and /payments/{pspReference}/refunds, /captures and /cancels. Every request body is
// validated against Adyen's published schema (test/support/fixtures/adyen/, with its SOURCE and LICENSE);
// one that does not match is answered 422 and kept in `invalid`, so a test sees it. It behaves as
// Adyen documents: an X-API-Key, an Idempotency-Key whose first answer is replayed to any later
// request under it, resultCodes with refusal reasons, a redirect for 3-D Secure ended by
// /payments/details with the redirectResult, refunds taken as `received` and settled by a REFUND
// notification. Answers start from the document's examples. Adyen picks test refusals by the
// holderName, which the connector does not send: the fake picks them by card number instead.
// Faults can be injected: 429 before acting, 500 or a dropped connection after acting, refused connections. Standard
// notifications are built from the webhook document's examples and signed with the SDK's HMAC.
import crypto from 'node:crypto';
import http from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { adyenHmac as hmac } from '../../../src/connectors/adyen/hmac.js';
import { FakeProcessor } from './processor.js';
import checkout from '../fixtures/adyen/CheckoutService-v71.json' with { type: 'json' };
import webhooks from '../fixtures/adyen/Webhooks-v1.json' with { type: 'json' };

type Obj = Record<string, any>;
type Answer = { status: number; body: Obj };
export type Fault = '429' | '500_after' | 'drop_after' | 'hang_after';

/** A Luhn-valid test number ending in `tail` (so that the service's own card checks pass). */
function luhn(stem: string): string {
  const digits = [...stem].reverse().map(Number);
  const sum = digits.reduce((acc, d, i) => acc + (i % 2 === 0 ? (d * 2 > 9 ? d * 2 - 9 : d * 2) : d), 0);
  return `${stem}${(10 - (sum % 10)) % 10}`;
}
const refusalCard = (code: number) => luhn(`41111111000${String(code).padStart(3, '0')}`);

export const ADYEN_CARDS = {
  success: '4111111145551142',
  /** 3-D Secure by redirect (Adyen's 3DS2 test card). */
  threeDS: '4212345678901237',
  /** 3-D Secure by a redirect that must be POSTed with form fields. */
  threeDSPost: luhn('411111110100000'),
  /** Adyen takes it (Received): the AUTHORISATION notification settles it. */
  received: luhn('411111110200000'),
  error: luhn('411111110300000'),
  cancelled: luhn('411111110400000'),
  /** Refused with this refusalReasonCode. */
  refused: refusalCard,
  /** Mastercards refused (2) with Mastercard merchant advice 03 (do not try again) and 24 (retry after an hour). */
  adviceDoNotRetry: luhn('555555550500000'),
  adviceRetryLater: luhn('555555550500010'),
} as const;

/**
 * Test mode of the service takes only its documented test cards (docs/test-mode.md); through an Adyen
 * account they stand for the test outcomes Adyen picks by holderName: refused (2), refused for
 * balance (12), taken as Received, and 3-D Secure by redirect. Any other card is Authorised, as Adyen's test cards are.
 */
const SERVICE_TEST_CARDS: Record<string, { resultCode: string; refusal?: number }> = {
  '4000000000000002': { resultCode: 'Refused', refusal: 2 },
  '4000000000009995': { resultCode: 'Refused', refusal: 12 },
  '4000000000000440': { resultCode: 'Refused', refusal: 2 },
  '4000000000000853': { resultCode: 'Refused', refusal: 5 },
  '4000000000000077': { resultCode: 'Received' },
  '4000000000003220': { resultCode: 'RedirectShopper' },
  // The issuer's soft decline: Authentication required (38) unless 3-D Secure is asked for (attemptAuthentication always).
  '4000000000003246': { resultCode: 'RedirectShopper', refusal: 38 },
};

const REFUSAL_REASONS: Record<number, string> = {
  2: 'Refused',
  4: 'Acquirer Error',
  5: 'Blocked Card',
  6: 'Expired Card',
  11: '3D Not Authenticated',
  12: 'Not enough balance',
  24: 'CVC Declined',
  26: 'Revocation Of Auth',
  38: 'Authentication required',
};
/** The issuing country the fake reports (additionalData.issuerCountry) for every card: the value of Adyen's published example. */
export const ISSUER_COUNTRY = 'NL';

/** Refused (2) with a Mastercard merchant advice code, as Adyen passes it on in additionalData. */
const ADVICE_CARDS: Record<string, string> = { [luhn('555555550500000')]: '03: Do not try again', [luhn('555555550500010')]: '24: Retry after 1 hour' };

// ---- the published documents, compiled once ----
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
for (const name of ['int32', 'int64']) ajv.addFormat(name, { type: 'number', validate: Number.isInteger });
ajv.addSchema(checkout, 'checkout');
ajv.addSchema(webhooks, 'webhooks');
const validator = (ref: string) => ajv.compile({ $ref: ref });
const REQUESTS = {
  payments: validator('checkout#/components/schemas/PaymentRequest'),
  details: validator('checkout#/components/schemas/PaymentDetailsRequest'),
  refunds: validator('checkout#/components/schemas/PaymentRefundRequest'),
  captures: validator('checkout#/components/schemas/PaymentCaptureRequest'),
  cancels: validator('checkout#/components/schemas/PaymentCancelRequest'),
};
const RESPONSES = {
  payments: validator('checkout#/components/schemas/PaymentResponse'),
  details: validator('checkout#/components/schemas/PaymentDetailsResponse'),
  refunds: validator('checkout#/components/schemas/PaymentRefundResponse'),
  captures: validator('checkout#/components/schemas/PaymentCaptureResponse'),
  cancels: validator('checkout#/components/schemas/PaymentCancelResponse'),
};
/** The dispute notifications the connector reads (src/connectors/adyen/disputes.ts). */
export type DisputeEventCode =
  | 'REQUEST_FOR_INFORMATION' | 'NOTIFICATION_OF_CHARGEBACK' | 'CHARGEBACK' | 'INFORMATION_SUPPLIED' | 'DISPUTE_DEFENSE_PERIOD_ENDED'
  | 'CHARGEBACK_REVERSED' | 'SECOND_CHARGEBACK' | 'PREARBITRATION_WON' | 'PREARBITRATION_LOST';
type NotificationCode = 'AUTHORISATION' | 'CANCELLATION' | 'CAPTURE' | 'CAPTURE_FAILED' | 'REFUND' | 'REFUND_FAILED' | DisputeEventCode;

/** The schema Adyen's webhook document gives each event's notification. */
const NOTIFICATIONS = Object.fromEntries(
  Object.entries(webhooks.webhooks).map(([event, hook]) => [event.slice(1), validator(`webhooks${hook.post.requestBody.content['application/json'].schema.$ref}`)]),
);
const example = (name: string): Obj => structuredClone((checkout.components.examples as Obj)[name].value);

/**
 * The first, customer-initiated payment (or verification) of a stored-credential series: the card
 * scheme's id comes back (networkTxReference), as with Adyen's additional data setting for it.
 */
const seriesData = (body: Obj): Obj =>
  body.recurringProcessingModel !== undefined && body.shopperInteraction === 'Ecommerce' ? { networkTxReference: String(crypto.randomInt(1e13, 2e14)) } : {};

const serviceError = (status: number, name: string, message?: string): Answer => ({ status, body: { ...example(name), status, ...(message ? { message } : {}) } });
const psp = () => crypto.randomBytes(8).toString('hex').toUpperCase();

export interface FakePayment {
  pspReference: string;
  reference: string;
  merchantAccount: string;
  amount: { currency: string; value: number };
  resultCode: string;
  refunded: number;
  /** What succeeded captures took (manual payments). */
  captured?: number;
  /** Its authorisation was released by a cancel that succeeded. */
  voided?: boolean;
  body: Obj;
}

export class FakeAdyen extends FakeProcessor<Fault> {
  readonly payments = new Map<string, FakePayment>();
  readonly refunds = new Map<string, Obj & { pspReference: string }>();
  /** Captures and cancels taken (`received`), by their own pspReference; settled by the notifications below. */
  readonly modifications = new Map<string, Obj & { pspReference: string; paymentPspReference: string; kind: 'capture' | 'cancel' }>();
  /** Every request received: its path, body and Idempotency-Key. */
  readonly requests: { path: string; body: Obj; key: string | undefined }[] = [];
  /** Requests whose body did not match Adyen's schema, with ajv's errors. */
  readonly invalid: { path: string; errors: unknown }[] = [];
  private readonly keys = new Map<string, Answer>();
  /** redirectResult → how the customer ended the challenge. */
  private readonly challenges = new Map<string, { pspReference: string; outcome: 'authorised' | 'refused' }>();

  /** Requests made under an Idempotency-Key, replays included. */
  sent(key: string): number {
    return this.requests.filter((r) => r.key === key).length;
  }

  paymentOf(reference: string): FakePayment | undefined {
    return [...this.payments.values()].find((p) => p.reference === reference);
  }

  /** The customer at the 3-D Secure page: the redirectResult Adyen appends to the return URL. */
  challenge(pspReference: string, outcome: 'authorised' | 'refused'): string {
    const redirectResult = `${crypto.randomBytes(12).toString('base64url')}!Y`;
    this.challenges.set(redirectResult, { pspReference, outcome });
    return redirectResult;
  }

  /**
   * A standard webhook as Adyen sends it, built from the published example of `eventCode` and
   * signed with the SDK's HMAC (`hmacKey` hex). Checked against the webhook document.
   */
  notification(eventCode: NotificationCode, fields: Obj, hmacKey: string, live = false): string {
    const name = Object.keys(webhooks.components.examples).find((k) => k.startsWith(`post-${eventCode}-`))!;
    const body = structuredClone((webhooks.components.examples as Obj)[name].value);
    const item = Object.assign(body.notificationItems[0].NotificationRequestItem, { eventDate: new Date().toISOString().replace(/\.\d+Z$/, '+00:00') }, fields);
    item.additionalData = { ...(item.additionalData ?? {}) };
    delete item.additionalData.hmacSignature;
    item.additionalData.hmacSignature = hmac.calculateHmac(item, hmacKey);
    body.live = String(live);
    const valid = NOTIFICATIONS[eventCode]!;
    if (!valid(body)) throw new Error(`the fake built a notification off Adyen's schema: ${ajv.errorsText(valid.errors)}`);
    return JSON.stringify(body);
  }

  /** The AUTHORISATION notification of a payment the fake holds. */
  authorisation(pspReference: string, success: boolean, hmacKey: string, live = false): string {
    const p = this.payments.get(pspReference)!;
    p.resultCode = success ? 'Authorised' : 'Refused';
    const fields: Obj = { pspReference, merchantReference: p.reference, merchantAccountCode: p.merchantAccount, amount: p.amount, success: String(success), reason: success ? '' : 'Refused', paymentMethod: 'visa' };
    // Adyen echoes the payment's metadata in additionalData; its webhook document models it as one `metadata` object.
    if (p.body.metadata) fields.additionalData = { metadata: p.body.metadata };
    return this.notification('AUTHORISATION', fields, hmacKey, live);
  }

  /** The REFUND notification of a refund the fake took. */
  refunded(pspReference: string, success: boolean, hmacKey: string, live = false): string {
    const r = this.refunds.get(pspReference)!;
    const fields = { pspReference, originalReference: r.paymentPspReference, merchantReference: r.reference, merchantAccountCode: r.merchantAccount, amount: r.amount, success: String(success), reason: success ? '' : 'Refund failed' };
    return this.notification('REFUND', fields, hmacKey, live);
  }

  /** The CAPTURE (or CAPTURE_FAILED) notification of a capture the fake took, or the CANCELLATION of a cancel. */
  settled(pspReference: string, success: boolean, hmacKey: string, live = false): string {
    const m = this.modifications.get(pspReference)!;
    const fields = { pspReference, originalReference: m.paymentPspReference, merchantReference: m.reference, merchantAccountCode: m.merchantAccount, success: String(m.kind === 'cancel' ? success : true), reason: success ? '' : 'Capture Failed', paymentMethod: 'visa', amount: m.amount ?? this.payments.get(m.paymentPspReference)!.amount };
    if (m.kind === 'capture' && success) this.payments.get(m.paymentPspReference)!.captured = (this.payments.get(m.paymentPspReference)!.captured ?? 0) + m.amount.value;
    if (m.kind === 'cancel' && success) this.payments.get(m.paymentPspReference)!.voided = true;
    return this.notification(m.kind === 'cancel' ? 'CANCELLATION' : success ? 'CAPTURE' : 'CAPTURE_FAILED', fields, hmacKey, live);
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += chunk;
    const send = (answer: Answer) => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    const path = new URL(req.url!, 'http://adyen').pathname;
    let body: Obj = {};
    try {
      body = JSON.parse(text);
    } catch {
      return void send(serviceError(400, 'generic-400'));
    }
    const key = req.headers['idempotency-key'] as string | undefined;
    this.requests.push({ path, body, key });
    if (!req.headers['x-api-key']) return void send(serviceError(401, 'generic-401'));
    const fault = this.faults.shift();
    if (fault === '429') return void send({ status: 429, body: { status: 429, errorCode: '429', message: 'Too many requests', errorType: 'security' } });
    // Adyen replays the first answer kept under a key (per company account) instead of acting again.
    const held = key ? this.keys.get(key) : undefined;
    const answer = held ?? this.act(path, body);
    if (key && !held && answer.status < 500) this.keys.set(key, answer);
    if (fault === '500_after') return void send(serviceError(500, 'generic-500'));
    if (fault === 'drop_after') return void req.socket.destroy();
    if (fault === 'hang_after') return;
    send(answer);
  }

  private act(path: string, body: Obj): Answer {
    const modification = /^\/v71\/payments\/([^/]+)\/(refunds|captures|cancels)$/.exec(path);
    const refund = modification;
    const operation = path === '/v71/payments' ? 'payments' : path === '/v71/payments/details' ? 'details' : (modification?.[2] as 'refunds' | 'captures' | 'cancels' | undefined);
    if (!operation) return serviceError(422, 'generic-422', `Unknown operation ${path}`);
    if (!REQUESTS[operation](body)) {
      this.invalid.push({ path, errors: REQUESTS[operation].errors });
      return serviceError(422, 'generic-422', `Structure of ${operation} request is invalid: ${ajv.errorsText(REQUESTS[operation].errors)}`);
    }
    const on = () => decodeURIComponent(refund![1]!);
    const answer =
      operation === 'payments' ? this.pay(body) : operation === 'details' ? this.details(body) : operation === 'refunds' ? this.refund(on(), body) : this.modify(operation === 'captures' ? 'capture' : 'cancel', on(), body);
    if (answer.status < 300 && !RESPONSES[operation](answer.body)) throw new Error(`the fake answered off Adyen's schema: ${ajv.errorsText(RESPONSES[operation].errors)}`);
    return answer;
  }

  private pay(body: Obj): Answer {
    // Merchant-initiated with card details: Adyen needs the model and the first payment's networkTxReference.
    if (body.shopperInteraction === 'ContAuth') {
      if (!['UnscheduledCardOnFile', 'Subscription', 'CardOnFile'].includes(body.recurringProcessingModel)) return serviceError(422, 'generic-422', 'ContAuth needs a recurringProcessingModel.');
      if (!/^\w{8,}$/.test(body.paymentMethod.networkPaymentReference ?? '')) return serviceError(422, 'generic-422', 'A ContAuth payment with card details needs paymentMethod.networkPaymentReference.');
      if (body.paymentMethod.cvc !== undefined) return serviceError(422, 'generic-422', 'A ContAuth payment takes no CVC.');
    } else if (body.paymentMethod.networkPaymentReference !== undefined) return serviceError(422, 'generic-422', 'networkPaymentReference goes with shopperInteraction ContAuth.');
    // A zero-value authorisation verifies a card the shopper presents, to be stored: never captured, never merchant-initiated.
    if (body.amount.value === 0 && (body.shopperInteraction === 'ContAuth' || body.additionalData?.manualCapture === 'true' || body.recurringProcessingModel === undefined)) {
      return serviceError(422, 'generic-422', 'A zero-value authorisation is an Ecommerce card verification of a stored credential (recurringProcessingModel), never captured.');
    }
    const pspReference = psp();
    const number: string = body.paymentMethod.number;
    const payment: FakePayment = { pspReference, reference: body.reference, merchantAccount: body.merchantAccount, amount: body.amount, resultCode: 'Authorised', refunded: 0, body };
    this.payments.set(pspReference, payment);
    // Adyen's issuerCountry (ResponseAdditionalDataCommon), from its BIN list: the published example's "NL" for every card here.
    const answer = (resultCode: string, extra: Obj = {}): Answer => {
      payment.resultCode = resultCode;
      const known = resultCode === 'Authorised' || resultCode === 'Refused' ? { additionalData: { issuerCountry: ISSUER_COUNTRY, ...extra.additionalData } } : {};
      return { status: 200, body: { pspReference, resultCode, merchantReference: body.reference, ...extra, ...known } };
    };
    const alias = SERVICE_TEST_CARDS[number];
    const asked = body.authenticationData?.attemptAuthentication === 'always';
    const refusal = Object.entries(REFUSAL_REASONS).find(([code]) => refusalCard(Number(code)) === number || (alias?.refusal === Number(code) && !(asked && alias.resultCode === 'RedirectShopper')));
    if (refusal) return answer('Refused', { refusalReason: refusal[1], refusalReasonCode: refusal[0] });
    const advice = ADVICE_CARDS[number];
    if (advice) return answer('Refused', { refusalReason: 'Refused', refusalReasonCode: '2', additionalData: { merchantAdviceCode: advice } });
    if (number === ADYEN_CARDS.received || alias?.resultCode === 'Received') return answer('Received');
    if (number === ADYEN_CARDS.error) return answer('Error', { refusalReason: 'Acquirer Error' });
    if (number === ADYEN_CARDS.cancelled) return answer('Cancelled');
    if (number === ADYEN_CARDS.threeDS || number === ADYEN_CARDS.threeDSPost || alias?.resultCode === 'RedirectShopper') {
      // Told not to authenticate, an issuer that requires it declines.
      if (body.authenticationData?.attemptAuthentication === 'never') return answer('Refused', { refusalReason: 'Authentication required', refusalReasonCode: '38' });
      const { action, additionalData } = example('post-payments-card-3d-secure-redirect-200');
      const post = number === ADYEN_CARDS.threeDSPost ? { method: 'POST', data: { MD: pspReference, PaReq: 'BQABAgA...', TermUrl: body.returnUrl } } : {};
      return answer('RedirectShopper', { additionalData, action: { ...action, url: `${action.url}?psp=${pspReference}`, ...post } });
    }
    return answer('Authorised', { additionalData: { ...example('post-payments-card-direct-200').additionalData, ...seriesData(body) } });
  }

  private details(body: Obj): Answer {
    const challenge = this.challenges.get(body.details.redirectResult);
    if (!challenge) return serviceError(422, 'generic-422', 'Invalid redirectResult');
    const payment = this.payments.get(challenge.pspReference)!;
    const done = example('post-payments-details-00.redirect-200');
    if (challenge.outcome === 'authorised') {
      payment.resultCode = 'Authorised';
      return { status: 200, body: { ...done, additionalData: seriesData(payment.body), pspReference: payment.pspReference, merchantReference: payment.reference } };
    }
    payment.resultCode = 'Refused';
    return { status: 200, body: { pspReference: payment.pspReference, resultCode: 'Refused', refusalReason: '3D Not Authenticated', refusalReasonCode: '11', merchantReference: payment.reference } };
  }

  /** A capture or a cancel, taken as Adyen takes them (`received`, 201); the notification says how it ended. */
  private modify(kind: 'capture' | 'cancel', paymentPspReference: string, body: Obj): Answer {
    const payment = this.payments.get(paymentPspReference);
    if (!payment) return serviceError(422, 'generic-422', 'Original pspReference required for this operation');
    if (payment.merchantAccount !== body.merchantAccount) return serviceError(403, 'generic-403');
    const pspReference = psp();
    const name = kind === 'capture' ? 'post-payments-paymentPspReference-captures-capture-201' : 'post-payments-paymentPspReference-cancels-cancel-with-psp-reference-201';
    const answer = { ...example(name), ...body, paymentPspReference, pspReference, status: 'received' };
    this.modifications.set(pspReference, { ...answer, kind });
    return { status: 201, body: answer };
  }

  private refund(paymentPspReference: string, body: Obj): Answer {
    const payment = this.payments.get(paymentPspReference);
    if (!payment) return serviceError(422, 'generic-422', 'Original pspReference required for this operation');
    if (payment.merchantAccount !== body.merchantAccount) return serviceError(403, 'generic-403');
    const pspReference = psp();
    const refund = { ...example('post-payments-paymentPspReference-refunds-refund-201'), ...body, paymentPspReference, pspReference, status: 'received' };
    this.refunds.set(pspReference, refund);
    // Adyen takes the request at once; whether it can be refunded is told by the REFUND notification.
    payment.refunded += body.amount.value;
    return { status: 201, body: refund };
  }
}
