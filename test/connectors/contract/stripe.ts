// Stripe as a contract harness: a Stripe connector account of the tenant, reaching the fake Stripe
// (test/support/fakes/stripe.ts) through STRIPE_API_BASE_URL — or, for `npm run connectors:smoke -- stripe`,
// Stripe's real sandbox with STRIPE_SECRET_KEY (STRIPE_API_BASE_URL still wins when set). Webhooks
// are Stripe events about the PaymentIntent, signed with the account's signing secret by the SDK.
import crypto from 'node:crypto';
import examples from '../../support/fixtures/stripe/objects.json' with { type: 'json' };
import { createConnectorAccount } from '../../support/connectors.js';
import { FakeStripe, STRIPE_CARDS, stripeEvent } from '../../support/fakes/stripe.js';
import { fakeFaults, type Capability, type Connected, type PaymentLike, type ProcessorHarness } from './harness.js';

const SIGNING_SECRET = 'whsec_contract_0123456789abcdef';
const CARDS = { success: '4242424242424242', declined: '4000000000000002', insufficientFunds: '4000000000009995' };

/** A PaymentIntent of our payment in `state`, as Stripe shows it in an event. */
function intentOf(payment: PaymentLike, state: 'pending' | 'succeeded' | 'failed') {
  const status = { pending: 'processing', succeeded: 'succeeded', failed: 'requires_payment_method' }[state];
  return {
    ...examples.payment_intent,
    id: payment.connector_reference ?? `pi_${crypto.randomBytes(12).toString('hex')}`,
    amount: payment.amount,
    amount_received: state === 'succeeded' ? payment.amount : 0,
    currency: payment.currency.toLowerCase(),
    metadata: { payment_id: payment.id },
    status,
    next_action: null,
    last_payment_error: state === 'failed' ? { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' } : null,
  };
}

const EVENT_TYPE = { pending: 'payment_intent.processing', succeeded: 'payment_intent.succeeded', failed: 'payment_intent.payment_failed' } as const;

function stripeWebhook(_connected: Connected, payment: PaymentLike, state: 'pending' | 'succeeded' | 'failed', signing?: 'wrong_secret' | 'stale') {
  const secret = signing === 'wrong_secret' ? 'whsec_not_this_account_0123456789' : SIGNING_SECRET;
  const timestamp = Math.floor(Date.now() / 1000) - (signing === 'stale' ? 600 : 0);
  const { body, signature } = stripeEvent(EVENT_TYPE[state], intentOf(payment, state), secret, timestamp);
  return { body, headers: { 'content-type': 'application/json', 'stripe-signature': signature } };
}

async function connectStripe(api: Parameters<ProcessorHarness['connect']>[0], secretKey: string): Promise<Connected> {
  const account = await createConnectorAccount(api, 'stripe', `contract-stripe-${crypto.randomBytes(3).toString('hex')}`, { secret_key: secretKey, webhook_secret: SIGNING_SECRET });
  return { route: { name: account.name }, connector: account.id, webhookUrl: account.webhook_url };
}

export function stripeHarness(): ProcessorHarness {
  const fake = new FakeStripe();
  /** The PaymentIntents of our payment, or the SetupIntent of our card verification. */
  const intents = (id: string) => [...fake.intents.values(), ...fake.setupIntents.values()].filter((pi) => pi.metadata.payment_id === id || pi.metadata.payment_method_id === id);
  return {
    name: 'stripe',
    capabilities: new Set<Capability>(['faults', 'books', 'settle', 'webhooks', 'processes', 'refund_outcome', 'status_lookup', 'customer_actions']),
    cards: CARDS,
    start: async () => void (await fake.start()),
    close: () => fake.close(),
    service: () => ({ settings: { stripeApiBaseUrl: fake.url } }),
    processEnv: () => ({ STRIPE_API_BASE_URL: fake.url }),
    connect: (api) => connectStripe(api, `sk_test_contract${'0'.repeat(16)}`),
    pendingCard() {
      fake.inject('processing');
      return CARDS.success;
    },
    books: {
      chargesHeld: async (id) => intents(id).length,
      authorisations: async (id) => intents(id).filter((pi) => pi.status === 'succeeded' || pi.status === 'requires_capture').length,
      chargeRequests: async (id) => fake.requests.get(id) ?? 0,
      refunded: async (id) => intents(id).reduce((sum, pi) => sum + pi._refunded, 0),
      authorisation: async (id) => ({ captured: intents(id).reduce((sum, pi) => sum + (pi.amount_received ?? 0), 0), voided: intents(id).some((pi) => pi.status === 'canceled') }),
    },
    faults: fakeFaults(fake),
    async settle(payment, outcome) {
      fake.settle(payment.connector_reference!, outcome);
    },
    webhook: stripeWebhook,
    actions: {
      card: STRIPE_CARDS.threeDS2Required,
      // Stripe's page decides the PaymentIntent, then sends the customer to the return_url it was given.
      async answer(payment, outcome) {
        const [intent] = intents(payment.id);
        const back = new URL(intent!.next_action.redirect_to_url.return_url);
        fake.settle(intent!.id, outcome === 'completed' ? 'succeeded' : 'failed');
        const named = intent!.object === 'setup_intent' ? 'setup_intent' : 'payment_intent';
        back.search = new URLSearchParams({ [named]: intent!.id, redirect_status: outcome === 'completed' ? 'succeeded' : 'failed' }).toString();
        return back.toString();
      },
    },
  };
}

/** Stripe's own sandbox (or whatever STRIPE_API_BASE_URL names), with STRIPE_SECRET_KEY: no fault controls, no books to read. */
export function stripeSandbox(): ProcessorHarness {
  return {
    name: 'stripe (sandbox)',
    capabilities: new Set<Capability>(['webhooks', 'refund_outcome', 'status_lookup']),
    cards: CARDS,
    start: async () => undefined,
    close: async () => undefined,
    service: () => ({ settings: { stripeApiBaseUrl: process.env.STRIPE_API_BASE_URL || undefined } }),
    processEnv: () => ({}),
    connect: (api) => connectStripe(api, process.env.STRIPE_SECRET_KEY!),
    webhook: stripeWebhook,
  };
}
