// What `cli trigger` does for each event type it can produce: the public-API calls a test-mode
// integrator would make to cause that event (test cards and test bank accounts choose the
// outcome), answering the id of the object the event is about. Types missing here cannot be
// caused through the API with the built-in simulated processors; NOT_TRIGGERABLE says why.
import crypto from 'node:crypto';
import { TEST_BANK_ACCOUNTS, type TestBankAccountEnding } from '../domain/bank-accounts/test-accounts.js';
import type { EventType } from '../events/types.js';

/** The API as the recipes use it: each call answers the parsed 2xx body, or throws with the error. */
export interface TriggerApi {
  call(method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<{ id: string; [field: string]: unknown }>;
}

export interface Recipe {
  /** What it creates, for `trigger --list`. */
  does: string;
  run(api: TriggerApi, type: EventType): Promise<string>;
  /** How long the event may take to appear: set for those the worker or a simulated bank produce later. */
  waitMs?: number;
}

const CARDS = { success: '4242424242424242', declined: '4000000000000002', pending: '4000000000000077', challenge: '4000000000003220', captureDeclined: '4000000000000366' } as const;
const CUSTOMER = { email: 'trigger@example.com', name: 'Trigger' };
const reference = (type: EventType) => `trigger-${type}-${crypto.randomBytes(4).toString('hex')}`;

const order = (api: TriggerApi, type: EventType, extra: Record<string, unknown> = {}) =>
  api.call('POST', '/v1/payment-orders', { amount: 1999, currency: 'EUR', reference: reference(type), customer: CUSTOMER, metadata: { trigger: type }, ...extra });

const cardOf = (number: string) => ({ number, exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' });

async function pay(api: TriggerApi, type: EventType, card: string, extra: Record<string, unknown> = {}) {
  const paid = await order(api, type);
  const method = { type: 'card', card: cardOf(card) };
  return { order: paid.id, payment: (await api.call('POST', '/v1/payments', { payment_order: paid.id, payment_method: method, metadata: { trigger: type }, ...extra })).id };
}

/** A manual order's payment, authorised only (`requires_capture`). */
async function authorise(api: TriggerApi, type: EventType, card: string = CARDS.success) {
  const held = await order(api, type, { capture_method: 'manual' });
  return (await api.call('POST', '/v1/payments', { payment_order: held.id, payment_method: { type: 'card', card: cardOf(card) }, metadata: { trigger: type } })).id;
}

/** Captures an authorised payment in full; `card` chooses whether the processor takes the capture. */
const capture = async (api: TriggerApi, type: EventType, card: string = CARDS.success) =>
  (await api.call('POST', `/v1/payments/${await authorise(api, type, card)}/capture`, { metadata: { trigger: type } })).id;

const beneficiary = (api: TriggerApi, type: EventType, ending: TestBankAccountEnding = '0000') =>
  api.call('POST', '/v1/beneficiaries', { name: 'Trigger Beneficiary', type: 'individual', bank_account: TEST_BANK_ACCOUNTS[ending].iban, metadata: { trigger: type } });

const customer = (api: TriggerApi, type: EventType) =>
  api.call('POST', '/v1/customers', { ...CUSTOMER, name: 'Trigger Customer', reference: reference(type), metadata: { trigger: type } });

/** A card saved for a new customer, verified by a zero-amount authorisation (POST /v1/payment-methods): the pm_. */
async function savedCard(api: TriggerApi, type: EventType): Promise<string> {
  const owner = await customer(api, type);
  return (await api.call('POST', '/v1/payment-methods', { customer: owner.id, card: cardOf(CARDS.success), usage: 'off_session', metadata: { trigger: type } })).id;
}

async function payout(api: TriggerApi, type: EventType, ending: TestBankAccountEnding = '0000') {
  await api.call('POST', '/v1/test-helpers/balance/fund', { amount: 500, currency: 'EUR' });
  const to = await beneficiary(api, type, ending);
  return (await api.call('POST', '/v1/payouts', { beneficiary: to.id, amount: 500, currency: 'EUR', reference: reference(type), metadata: { trigger: type } })).id;
}

const mandate = async (api: TriggerApi, type: EventType, ending: TestBankAccountEnding = '0000') =>
  (
    await api.call('POST', '/v1/mandates', {
      customer: CUSTOMER,
      bank_account: TEST_BANK_ACCOUNTS[ending].iban,
      scheme: 'sepa_core',
      currency: 'EUR',
      reference: reference(type),
      metadata: { trigger: type },
    })
  ).id;

/** An endpoint that hears nothing (webhook_endpoint.test is never queued), disabled or also re-enabled, then deleted. */
async function endpoint(api: TriggerApi, type: EventType, reenable: boolean) {
  const created = await api.call('POST', '/v1/webhook-endpoints', {
    url: 'https://example.com/cli-trigger',
    enabled_events: ['webhook_endpoint.test'],
    description: `cli trigger ${type}: deleted right away`,
  });
  const path = `/v1/webhook-endpoints/${created.id}`;
  await api.call('PATCH', path, { status: 'disabled' });
  if (reenable) await api.call('PATCH', path, { status: 'enabled' });
  await api.call('DELETE', path);
  return created.id;
}

const orderPaid = 'an order paid with card 4242 4242 4242 4242';
const orderDeclined = 'an order and a payment with card 4000 0000 0000 0002 (declined)';
const orderPending = 'an order and a payment with card 4000 0000 0000 0077 (pending, settles later)';
const refunded = `${orderPaid}, then a refund of it`;
const orderAuthorised = 'an order with capture_method manual and a payment of it with card 4242 4242 4242 4242 (authorised only)';
const paidOut = 'funds the test balance, a beneficiary (DE…0000) and a payout to it';

export const RECIPES: Partial<Record<EventType, Recipe>> = {
  'payment_order.created': { does: 'an order', run: async (api, type) => (await order(api, type)).id },
  'payment_order.processing': { does: orderPending, run: async (api, type) => (await pay(api, type, CARDS.pending)).order },
  'payment_order.open': { does: orderDeclined, run: async (api, type) => (await pay(api, type, CARDS.declined)).order },
  'payment_order.paid': { does: orderPaid, run: async (api, type) => (await pay(api, type, CARDS.success)).order },
  'payment_order.cancelled': {
    does: 'an order, then cancels it',
    run: async (api, type) => {
      const created = await order(api, type);
      await api.call('POST', `/v1/payment-orders/${created.id}/cancel`);
      return created.id;
    },
  },
  'payment_order.expired': {
    does: 'an order expiring in 3 seconds (the worker expires it: needs a service running the worker role)',
    run: async (api, type) => (await order(api, type, { expires_at: new Date(Date.now() + 3000).toISOString() })).id,
    waitMs: 30_000,
  },
  'payment.created': { does: orderPaid, run: async (api, type) => (await pay(api, type, CARDS.success)).payment },
  'payment.pending': { does: orderPending, run: async (api, type) => (await pay(api, type, CARDS.pending)).payment },
  'payment.requires_action': {
    does: 'an order and a payment with card 4000 0000 0000 3220 and a return_url (3-D Secure: waits on its challenge page)',
    run: async (api, type) => (await pay(api, type, CARDS.challenge, { return_url: 'https://example.com/cli-trigger/return' })).payment,
  },
  'payment.succeeded': { does: orderPaid, run: async (api, type) => (await pay(api, type, CARDS.success)).payment },
  'payment.canceled': {
    does: `${orderAuthorised}, then voids it`,
    run: async (api, type) => {
      const payment = await authorise(api, type);
      await api.call('POST', `/v1/payments/${payment}/cancel`);
      return payment;
    },
  },
  'payment.failed': { does: orderDeclined, run: async (api, type) => (await pay(api, type, CARDS.declined)).payment },
  'payment.authorized': { does: orderAuthorised, run: (api, type) => authorise(api, type) },
  'capture.created': { does: 'a manual payment authorised, then captured in full', run: (api, type) => capture(api, type) },
  'capture.succeeded': { does: 'a manual payment authorised, then captured in full', run: (api, type) => capture(api, type) },
  'capture.failed': { does: 'a manual payment with card 4000 0000 0000 0366 (authorises), whose capture is declined', run: (api, type) => capture(api, type, CARDS.captureDeclined) },
  'refund.created': { does: refunded, run: (api, type) => refund(api, type) },
  'refund.succeeded': { does: refunded, run: (api, type) => refund(api, type) },
  'payout.created': { does: paidOut, run: (api, type) => payout(api, type) },
  'payout.processing': { does: `${paidOut} (sent to the bank)`, run: (api, type) => payout(api, type), waitMs: 30_000 },
  'payout.paid': { does: `${paidOut} (paid by the bank)`, run: (api, type) => payout(api, type), waitMs: 30_000 },
  'payout.failed': {
    does: 'funds the test balance, a beneficiary whose account is closed (DE…0002) and a payout to it',
    run: (api, type) => payout(api, type, '0002'),
    waitMs: 30_000,
  },
  'payout.cancelled': {
    does: `${paidOut}, cancelled at once: needs a service that does not send it first (PAYOUT_SUBMIT_ON_CREATE=false, no worker running)`,
    run: cancelledPayout,
  },
  'payout.returned': {
    does: 'funds the test balance, a beneficiary (DE…0003, in transit) and a payout, then has the bank return it (test helper)',
    run: async (api, type) => {
      const id = await payout(api, type, '0003');
      await api.call('POST', `/v1/test-helpers/payouts/${id}/resolve`, { outcome: 'returned' });
      return id;
    },
  },
  'mandate.created': { does: 'a SEPA mandate (DE…0000)', run: (api, type) => mandate(api, type) },
  'mandate.pending': { does: 'a SEPA mandate the bank answers later (DE…0003)', run: (api, type) => mandate(api, type, '0003') },
  'mandate.active': { does: 'a SEPA mandate the bank accepts (DE…0000)', run: (api, type) => mandate(api, type) },
  'mandate.failed': { does: 'a SEPA mandate on a closed account (DE…0002)', run: (api, type) => mandate(api, type, '0002') },
  'mandate.revoked': {
    does: 'a SEPA mandate (DE…0000), then revokes it',
    run: async (api, type) => {
      const id = await mandate(api, type);
      await api.call('POST', `/v1/mandates/${id}/revoke`);
      return id;
    },
  },
  'beneficiary.created': { does: 'a beneficiary', run: async (api, type) => (await beneficiary(api, type)).id },
  'beneficiary.updated': {
    does: 'a beneficiary, then renames it',
    run: async (api, type) => {
      const created = await beneficiary(api, type);
      await api.call('PATCH', `/v1/beneficiaries/${created.id}`, { name: 'Trigger Beneficiary (renamed)' });
      return created.id;
    },
  },
  'beneficiary.disabled': {
    does: 'a beneficiary, then deletes it (it is disabled)',
    run: async (api, type) => {
      const created = await beneficiary(api, type);
      await api.call('DELETE', `/v1/beneficiaries/${created.id}`);
      return created.id;
    },
  },
  'customer.created': { does: 'a customer', run: async (api, type) => (await customer(api, type)).id },
  'customer.updated': {
    does: 'a customer, then renames it',
    run: async (api, type) => {
      const created = await customer(api, type);
      await api.call('PATCH', `/v1/customers/${created.id}`, { name: 'Trigger Customer (renamed)' });
      return created.id;
    },
  },
  'customer.deleted': {
    does: 'a customer, then deletes it',
    run: async (api, type) => {
      const created = await customer(api, type);
      await api.call('DELETE', `/v1/customers/${created.id}`);
      return created.id;
    },
  },
  'payment_method.attached': { does: 'a customer, and the success card saved for them (verified by the simulated processor)', run: savedCard },
  'payment_method.updated': {
    does: 'a saved card, then changes its metadata',
    run: async (api, type) => {
      const saved = await savedCard(api, type);
      await api.call('PATCH', `/v1/payment-methods/${saved}`, { metadata: { trigger: type, updated: 'true' } });
      return saved;
    },
  },
  'payment_method.detached': {
    does: 'a saved card, then detaches it (its card data erased)',
    run: async (api, type) => {
      const saved = await savedCard(api, type);
      await api.call('POST', `/v1/payment-methods/${saved}/detach`);
      return saved;
    },
  },
  'webhook_endpoint.disabled': { does: 'a webhook endpoint subscribed to nothing stored, disables and deletes it', run: (api, type) => endpoint(api, type, false) },
  'webhook_endpoint.enabled': {
    does: 'a webhook endpoint subscribed to nothing stored, disables, enables and deletes it',
    run: (api, type) => endpoint(api, type, true),
  },
};

async function refund(api: TriggerApi, type: EventType) {
  const { payment } = await pay(api, type, CARDS.success);
  return (await api.call('POST', '/v1/refunds', { payment, metadata: { trigger: type } })).id;
}

/** The service may send the payout before the cancel arrives (PAYOUT_SUBMIT_ON_CREATE, a worker's pass): tried three times. */
async function cancelledPayout(api: TriggerApi, type: EventType): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const id = await payout(api, type);
    try {
      await api.call('POST', `/v1/payouts/${id}/cancel`);
      return id;
    } catch (err) {
      if (attempt === 3 || !String((err as Error).message).includes('invalid_state')) throw err;
    }
  }
}

/** The catalogued types `trigger` cannot cause, and why. */
export const NOT_TRIGGERABLE: Partial<Record<EventType, string>> = {
  'dispute.created': 'a payment with card 4000000000000259 is disputed a few seconds later, under a dp_ id trigger cannot know in advance; no recipe yet',
  'dispute.funds_withdrawn': 'a payment with card 4000000000000259 is disputed, its funds withdrawn, a few seconds later under a dp_ id trigger cannot know in advance; no recipe yet',
  'reconciliation_run.completed': 'run one instead: POST /v1/reconciliation-runs with a simulator connector account (docs/reconciliation.md)',
  'dispute.updated': 'needs an open dispute (card 4000000000000259, disputed a few seconds later under a dp_ id trigger cannot know in advance) to answer with POST /v1/disputes/{id}/evidence; no recipe yet',
  'dispute.closed': 'needs an open dispute (card 4000000000000259) accepted (POST /v1/disputes/{id}/accept) or decided by the processor; no recipe yet',
  'dispute.funds_reinstated': 'needs a dispute (card 4000000000000259) won at the processor (evidence containing winning_evidence); no recipe yet',
  'refund.pending': 'the simulated processors answer refunds at once',
  'refund.failed': 'the simulated processors refuse no refund the service lets through',
  'mandate.expired': 'only after MANDATE_DORMANCY_DAYS without a debit',
  'balance.available': 'only when onboarding gave the account a settlement delay (accounts set-settlement), once the delay has passed',
  'webhook_endpoint.test': 'sent, never stored, by POST /v1/test-helpers/webhook-endpoints/{id}/send',
};
