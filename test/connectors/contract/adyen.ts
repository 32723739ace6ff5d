// Adyen as a contract harness: an Adyen connector account of the tenant, reaching the fake Adyen
// (test/support/fakes/adyen.ts, every request checked against Checkout v71) through ADYEN_CHECKOUT_BASE_URL.
// Where Adyen genuinely differs, the harness says so and the scenarios check Adyen's behaviour:
// - no status lookup (no `status_lookup`): a payment whose answer was lost stays pending on a
//   refresh until Adyen's AUTHORISATION notification tells;
// - refunds are taken `received` (pending) and settled by the REFUND notification (settleRefund);
// - notifications are acknowledged with the fixed text [accepted], whatever the service did;
// - no notification for a payment still pending, and none "stale": Adyen's HMAC signs no timestamp
//   (a replay is caught by its event id instead), so those webhooks do not exist here.
import crypto from 'node:crypto';
import { createConnectorAccount } from '../../support/connectors.js';
import { FakeAdyen } from '../../support/fakes/adyen.js';
import { fakeFaults, postWebhook, type Capability, type Connected, type PaymentLike, type ProcessorHarness } from './harness.js';

const HMAC_KEY = '5a'.repeat(32);
const OTHER_KEY = 'c3'.repeat(32);
const MERCHANT = 'ContractECOM';
// The service's test cards (test mode takes no other), which the fake answers as Adyen's test outcomes.
const CARDS = { success: '4242424242424242', declined: '4000000000000002', insufficientFunds: '4000000000009995' };

async function connectAdyen(api: Parameters<ProcessorHarness['connect']>[0], credentials: Record<string, string>): Promise<Connected> {
  const account = await createConnectorAccount(api, 'adyen', `contract-adyen-${crypto.randomBytes(3).toString('hex')}`, credentials);
  return { route: { name: account.name }, connector: account.id, webhookUrl: account.webhook_url };
}

export function adyenHarness(): ProcessorHarness {
  const fake = new FakeAdyen();
  const held = (paymentId: string) => [...fake.payments.values()].filter((p) => p.reference === paymentId);
  /** The AUTHORISATION notification of our payment as Adyen holds it, signed with `key`. */
  const authorisation = (payment: PaymentLike, success: boolean, key: string) => {
    const p = fake.paymentOf(payment.id)!;
    const fields = { pspReference: p.pspReference, merchantReference: p.reference, merchantAccountCode: p.merchantAccount, amount: p.amount, success: String(success), reason: success ? '' : 'Refused', paymentMethod: 'visa' };
    return fake.notification('AUTHORISATION', fields, key);
  };
  return {
    name: 'adyen',
    capabilities: new Set<Capability>(['faults', 'books', 'settle', 'webhooks', 'processes', 'refund_outcome', 'customer_actions']),
    cards: CARDS,
    start: async () => void (await fake.start()),
    close: () => fake.close(),
    service: () => ({ settings: { adyenCheckoutBaseUrl: fake.url } }),
    processEnv: () => ({ ADYEN_CHECKOUT_BASE_URL: fake.url }),
    connect: (api) => connectAdyen(api, { api_key: `AQE_contract_${'k'.repeat(16)}`, merchant_account: MERCHANT, hmac_key: HMAC_KEY }),
    // Adyen takes it (Received); its AUTHORISATION notification settles it.
    pendingCard: () => '4000000000000077',
    books: {
      chargesHeld: async (id) => held(id).length,
      authorisations: async (id) => held(id).filter((p) => p.resultCode === 'Authorised').length,
      chargeRequests: async (id) => fake.requests.filter((r) => r.path === '/v71/payments' && r.body.reference === id).length,
      refunded: async (id) => held(id).reduce((sum, p) => sum + p.refunded, 0),
      authorisation: async (id) => ({ captured: held(id).reduce((sum, p) => sum + (p.captured ?? 0), 0), voided: held(id).some((p) => p.voided === true) }),
      capturesHeld: async (captureId) => [...fake.modifications.values()].filter((m) => m.kind === 'capture' && m.reference === captureId).length,
    },
    faults: fakeFaults(fake),
    async settle(payment, outcome) {
      fake.paymentOf(payment.id)!.resultCode = outcome === 'succeeded' ? 'Authorised' : 'Refused';
    },
    webhook(_connected, payment, state, signing) {
      if (state === 'pending' || signing === 'stale') return undefined;
      const body = authorisation(payment, state === 'succeeded', signing === 'wrong_secret' ? OTHER_KEY : HMAC_KEY);
      return { body, headers: { 'content-type': 'application/json' } };
    },
    webhookAcknowledgement: '[accepted]',
    actions: {
      card: '4000000000003220',
      // RedirectShopper: the issuer's page, then Adyen sends the customer to the returnUrl it was
      // given with a redirectResult, which the service submits to /payments/details.
      async answer(payment, outcome) {
        const held = fake.paymentOf(payment.id)!;
        const back = new URL(held.body.returnUrl);
        back.searchParams.set('redirectResult', fake.challenge(held.pspReference, outcome === 'completed' ? 'authorised' : 'refused'));
        return back.toString();
      },
    },
    async settleRefund(connected: Connected, refundId: string) {
      const refund = [...fake.refunds.values()].find((r) => r.reference === refundId)!;
      const res = await postWebhook(connected.webhookUrl, { body: fake.refunded(refund.pspReference, true, HMAC_KEY), headers: { 'content-type': 'application/json' } });
      if (res.text !== '[accepted]') throw new Error(`the REFUND notification of ${refundId} was not accepted: ${res.status} ${res.text}`);
    },
    // Adyen takes captures and cancels `received`; its CAPTURE or CANCELLATION notification confirms them.
    async confirmAuthorisationChange(connected, change) {
      const [m, more] = [...fake.modifications.values()].filter((m) =>
        'capture' in change ? m.kind === 'capture' && m.reference === change.capture : m.kind === 'cancel' && m.paymentPspReference === change.voidOf.connector_reference,
      );
      if (!m || more) throw new Error(`Adyen holds ${m ? 'several' : 'no'} modifications for ${JSON.stringify(change)}`);
      const res = await postWebhook(connected.webhookUrl, { body: fake.settled(m.pspReference, true, HMAC_KEY), headers: { 'content-type': 'application/json' } });
      if (res.text !== '[accepted]') throw new Error(`the notification of ${JSON.stringify(change)} was not accepted: ${res.status} ${res.text}`);
    },
  };
}

/**
 * Adyen's test environment (or whatever ADYEN_CHECKOUT_BASE_URL names), with ADYEN_API_KEY,
 * ADYEN_MERCHANT_ACCOUNT and ADYEN_HMAC_KEY: no fault controls, no books, and no notification this
 * run can receive (Adyen posts them to the URL of its Customer Area), so no refund outcome.
 */
export function adyenSandbox(): ProcessorHarness {
  return {
    name: 'adyen (sandbox)',
    capabilities: new Set<Capability>(),
    cards: CARDS,
    start: async () => undefined,
    close: async () => undefined,
    service: () => ({ settings: { adyenCheckoutBaseUrl: process.env.ADYEN_CHECKOUT_BASE_URL || undefined } }),
    processEnv: () => ({}),
    connect: (api) =>
      connectAdyen(api, { api_key: process.env.ADYEN_API_KEY!, merchant_account: process.env.ADYEN_MERCHANT_ACCOUNT!, hmac_key: process.env.ADYEN_HMAC_KEY! }),
  };
}
