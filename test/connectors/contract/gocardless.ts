// GoCardless as a contract harness: a GoCardless connector account of the tenant, reaching the fake
// GoCardless (test/support/fakes/gocardless.ts) through GOCARDLESS_API_BASE_URL — or, for
// `npm run connectors:smoke -- gocardless`, GoCardless's sandbox with GOCARDLESS_ACCESS_TOKEN.
// Direct debits only: the card scenarios are not its to run. Its webhooks are batches of
// GoCardless events, signed with the account's webhook secret as GoCardless signs them.
import crypto from 'node:crypto';
import type { Event } from 'gocardless-nodejs/types';
import { createConnectorAccount } from '../../support/connectors.js';
import { FakeGoCardless, gocardlessWebhook } from '../../support/fakes/gocardless.js';
import { fakeFaults, type Capability, type Connected, type ProcessorHarness, type Webhook } from './harness.js';

const WEBHOOK_SECRET = 'gc-contract-webhook-secret-0123456789';
/** A direct-debit processor takes no cards; the card scenarios are skipped over it (directDebitOnly). */
const NO_CARDS = { success: '', declined: '', insufficientFunds: '' };

async function connectGoCardless(api: Parameters<ProcessorHarness['connect']>[0], accessToken: string): Promise<Connected> {
  const account = await createConnectorAccount(api, 'gocardless', `contract-gocardless-${crypto.randomBytes(3).toString('hex')}`, {
    access_token: accessToken,
    webhook_secret: WEBHOOK_SECRET,
  });
  return { route: { name: account.name }, connector: account.id, webhookUrl: account.webhook_url };
}

const eventsOf = (webhook: Webhook) => (JSON.parse(webhook.body) as { events: Event[] }).events;

export function gocardlessHarness(): ProcessorHarness {
  const fake = new FakeGoCardless();
  const send = (event: Event) => gocardlessWebhook([event], WEBHOOK_SECRET);
  return {
    name: 'gocardless',
    directDebitOnly: true,
    capabilities: new Set<Capability>(['mandates', 'mandate_setup', 'late_debit_failures', 'webhook_batches', 'faults', 'status_lookup']),
    cards: NO_CARDS,
    start: async () => void (await fake.start()),
    close: () => fake.close(),
    service: () => ({ settings: { gocardlessApiBaseUrl: fake.url } }),
    processEnv: () => ({ GOCARDLESS_API_BASE_URL: fake.url }),
    connect: (api) => connectGoCardless(api, `sandbox_contract${'0'.repeat(16)}`),
    faults: fakeFaults(fake),
    mandates: {
      async mandate(_connected, mandateId, outcome) {
        const mandate = fake.mandateOf(mandateId)!;
        if (outcome === 'active') return send(fake.setMandate(mandate.id!, 'active'));
        if (outcome === 'failed') return send(fake.setMandate(mandate.id!, 'failed', { origin: 'bank', cause: 'invalid_bank_details', description: 'The bank details are invalid.' }));
        return send(fake.setMandate(mandate.id!, 'cancelled', { origin: 'bank', cause: 'bank_account_closed', description: 'The customer cancelled the mandate at their bank.' }));
      },
      async debit(_connected, paymentId, outcome) {
        const payment = fake.paymentOf(paymentId)!;
        switch (outcome) {
          case 'confirmed':
            return send(fake.setPayment(payment.id!, 'confirmed', { origin: 'gocardless', cause: 'payment_confirmed' }));
          case 'failed':
          case 'late_failure':
            return send(fake.setPayment(payment.id!, 'failed', { origin: 'bank', cause: 'insufficient_funds', description: 'The customer did not have funds available.' }));
          case 'charged_back':
            return send(fake.setPayment(payment.id!, 'charged_back', { origin: 'bank', cause: 'authorisation_disputed', description: 'The customer disputed the debit with their bank.' }));
        }
      },
      batch: (webhooks) => gocardlessWebhook(webhooks.flatMap(eventsOf), WEBHOOK_SECRET),
      held: async (ourId) => (fake.mandateOf(ourId) ? 1 : 0) + (fake.paymentOf(ourId) ? 1 : 0),
    },
  };
}

/**
 * GoCardless's sandbox (or whatever GOCARDLESS_API_BASE_URL names), with GOCARDLESS_ACCESS_TOKEN:
 * no fault controls, and nothing moves there on demand (the sandbox's scenario simulators act on
 * its own schedule and post to the webhook endpoint set in its dashboard), so of the mandate
 * scenarios only the set-up and the merchant's revocation run; the rest are the fake's.
 */
export function gocardlessSandbox(): ProcessorHarness {
  return {
    name: 'gocardless (sandbox)',
    directDebitOnly: true,
    capabilities: new Set<Capability>(['mandate_setup']),
    cards: NO_CARDS,
    start: async () => undefined,
    close: async () => undefined,
    service: () => ({ settings: { gocardlessApiBaseUrl: process.env.GOCARDLESS_API_BASE_URL || undefined } }),
    processEnv: () => ({}),
    connect: (api) => connectGoCardless(api, process.env.GOCARDLESS_ACCESS_TOKEN!),
  };
}
