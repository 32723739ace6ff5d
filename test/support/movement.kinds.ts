// The money movements of the contract suite (test/engine/contract.test.ts), one row each: how to
// create one through the HTTP API, what it reaches, what the simulated processor counts for it,
// and each contract step as the kind has it. A step a kind genuinely lacks is `{ none: reason }`.
import crypto from 'node:crypto';
import { expect } from 'vitest';
import type { CrashPoint } from '../../src/config.js';
import type { SimulatorHost } from '../../src/connectors/simulator/processor.js';
import type { Api } from './helpers.js';
import { CARDS, cardMethod, newOrder, orderAndPay } from './payments.js';
import { fund, newBeneficiary } from './payouts.js';
import { bookMandate, ENDINGS, mandateBody, mandateMethod, newMandate } from './mandates.js';

export type Scenario = 'success' | 'pending' | 'timeout';
export interface None {
  none: string;
}
export const isNone = (step: object): step is None => 'none' in step;

/** A real SIGKILL between the phases, then the resume: a retry with the same key, or the worker (payouts). */
export interface CrashStep {
  scenario: Scenario;
  /** CRASH_AFTER of the child; undefined: killed by the test once `requestsSoFar` grows (its connector call is out). */
  crashAfter?: CrashPoint;
  requestsSoFar?: (sim: SimulatorHost) => number;
  /** Books it at the processor as the lost answer would have (kinds with no crash point after the answer). */
  book?: (sim: SimulatorHost, id: string, body: Record<string, unknown>) => Promise<unknown>;
  resumedBy: 'retry' | 'worker';
  status: string;
}

export interface MovementCase {
  name: string;
  resource: 'payments' | 'refunds' | 'payouts' | 'mandates';
  /** The simulator's word for it, in its webhooks. */
  simObject: 'charge' | 'refund' | 'payout' | 'mandate';
  /** The body of POST /v1/<resource>, its prerequisites made first; the scenario picks the processor's answer. */
  body(api: Api, scenario: Scenario): Promise<Record<string, unknown>>;
  /** Payouts are created pending and sent by the worker. */
  sentByWorker: boolean;
  created: { status: string; events: string[] };
  /** Requests (refunds: holders) at the processors for this object: the money moved once is 1. */
  sent(sim: SimulatorHost, id: string): Promise<number>;
  crash: CrashStep | None;
  adopt: CrashStep | None;
  /** Stranded with no connector (its request or submitter died), then past its deadline: the kind's rule. */
  abandon: { strandedAt: CrashPoint | 'payout_claimed'; status: string; failureCode?: string; sent: number };
  /** How a pending one is made for the inbound event and the test helper. */
  pendingBy: 'scenario' | 'crash';
  /** The processor's settled object, as its webhook carries it. */
  settledAtProcessor(sim: SimulatorHost, id: string, connector: string): Promise<Record<string, unknown>>;
  settledStatus: string;
  helper: { outcome: string; status: string } | None;
}

type Processor = ReturnType<SimulatorHost['processors']['get']> & object;
const sum = (sim: SimulatorHost, count: (p: Processor) => number) => [...sim.processors.values()].reduce((n, p) => n + count(p), 0);
/** The same over what the processors hold in their books (read asynchronously). */
const sumHeld = async (sim: SimulatorHost, count: (p: Processor) => Promise<number>) => (await Promise.all([...sim.processors.values()].map(count))).reduce((n, c) => n + c, 0);
const processor = (sim: SimulatorHost, name: string) => sim.processors.get(name)!;

async function debitBody(api: Api) {
  const mandate = await newMandate(api);
  const order = await newOrder(api);
  return { payment_order: order.id, payment_method: mandateMethod(mandate.id) };
}

const CARD_OF: Record<Scenario, string> = { success: CARDS.success, pending: CARDS.pending, timeout: CARDS.timeout };
const ENDING_OF: Record<Scenario, '0000' | '0003' | '0004'> = { success: ENDINGS.success, pending: ENDINGS.pending, timeout: ENDINGS.timeout };

/** Cards and direct debits are one kind (payments), differing in their body and first state. */
function payment(name: string, body: MovementCase['body'], status: 'succeeded' | 'pending'): MovementCase {
  return {
    name,
    resource: 'payments',
    simObject: 'charge',
    body,
    sentByWorker: false,
    created: { status, events: ['payment.created', `payment.${status}`] },
    sent: async (sim, id) => sum(sim, (p) => p.chargeRequests.get(id) ?? 0),
    crash: { scenario: 'success', crashAfter: 'payment_created', resumedBy: 'retry', status },
    adopt: { scenario: 'success', crashAfter: 'payment_connector_answered', resumedBy: 'retry', status },
    abandon: { strandedAt: 'payment_created', status: 'failed', failureCode: 'processing_error', sent: 0 },
    pendingBy: 'scenario',
    settledAtProcessor: async (sim, id, connector) => ({ ...(await processor(sim, connector).charges.get(id))!, state: 'CAPTURED' }),
    settledStatus: 'succeeded',
    helper: { outcome: 'succeeded', status: 'succeeded' },
  };
}

export const MOVEMENTS: MovementCase[] = [
  payment('payment (card)', async (api, scenario) => ({ payment_order: (await newOrder(api)).id, payment_method: cardMethod(CARD_OF[scenario]) }), 'succeeded'),
  // A debit is always pending at first: the bank settles it later.
  payment('mandate debit (payment with a mandate)', debitBody, 'pending'),
  {
    name: 'refund',
    resource: 'refunds',
    simObject: 'refund',
    body: async (api) => ({ payment: (await orderAndPay(api, CARDS.success, { amount: 1500 })).payment.id, amount: 600 }),
    sentByWorker: false,
    created: { status: 'succeeded', events: ['refund.created', 'refund.succeeded'] },
    // The simulator counts no refund requests: the processors holding it (it dedupes by our id).
    sent: (sim, id) => sumHeld(sim, async (p) => ((await p.refunds.has(id)) ? 1 : 0)),
    crash: { scenario: 'success', crashAfter: 'refund_created', resumedBy: 'retry', status: 'succeeded' },
    // No crash point after the refund's answer, and a refund is never located: its resume sends it
    // again with the refund id as the processor's idempotency key. Booked first, it must be refunded once.
    adopt: {
      scenario: 'success',
      crashAfter: 'refund_created',
      book: (sim, id, body) => processor(sim, 'simulator_a').refunds.create({ merchant_reference: id, charge_reference: body.payment, amount_minor: body.amount }),
      resumedBy: 'retry',
      status: 'succeeded',
    },
    // Refunds have one connector and are sent again: the processor dedupes by the refund id.
    abandon: { strandedAt: 'refund_created', status: 'succeeded', sent: 1 },
    // The simulator answers refunds at once: only a crashed request leaves one pending.
    pendingBy: 'crash',
    settledAtProcessor: async (_sim, id) => ({
      refund_id: 'simulator_a_re_contract',
      merchant_reference: id,
      charge_id: null,
      amount_minor: 600,
      state: 'REFUNDED',
      refusal: null,
      created_at: new Date().toISOString(),
    }),
    settledStatus: 'succeeded',
    helper: { none: 'refunds have no test helper (none is documented): a pending one settles through the worker, asserted by the abandon step' },
  },
  {
    name: 'payout',
    resource: 'payouts',
    simObject: 'payout',
    body: async (api, scenario) => {
      await fund(api, 10_000);
      return { beneficiary: (await newBeneficiary(api, ENDING_OF[scenario])).id, amount: 2500, currency: 'EUR', reference: `po-${crypto.randomUUID()}` };
    },
    sentByWorker: true,
    created: { status: 'paid', events: ['payout.created', 'payout.processing', 'payout.paid'] },
    sent: async (sim, id) => sum(sim, (p) => p.payouts.requests.get(id) ?? 0),
    // No CRASH_AFTER point: the only window between its phases is the bank call, killed while the
    // bank (0004) has paid and not answered; the worker's recovery locates the payout and adopts it.
    crash: { scenario: 'timeout', requestsSoFar: (sim) => sum(sim, (p) => p.payouts.requests.size), resumedBy: 'worker', status: 'paid' },
    adopt: { none: 'a payout has one crash window, its bank call: the crash step kills it after the bank paid and asserts the adoption' },
    abandon: { strandedAt: 'payout_claimed', status: 'paid', sent: 1 },
    pendingBy: 'scenario',
    settledAtProcessor: async (sim, id, connector) => ({ ...(await processor(sim, connector).payouts.get(id))!, state: 'PAID' }),
    settledStatus: 'paid',
    helper: { outcome: 'paid', status: 'paid' },
  },
  {
    name: 'mandate set-up',
    resource: 'mandates',
    simObject: 'mandate',
    body: async (_api, scenario) => mandateBody('sepa_core', ENDING_OF[scenario]),
    sentByWorker: false,
    created: { status: 'active', events: ['mandate.created', 'mandate.active'] },
    sent: async (sim, id) => sum(sim, (p) => p.mandates.setupRequests.get(id) ?? 0),
    crash: { scenario: 'success', crashAfter: 'mandate_created', resumedBy: 'retry', status: 'active' },
    // No crash point after the bank's answer: the mandate is booked at the processor as a lost answer would leave it.
    adopt: {
      scenario: 'success',
      crashAfter: 'mandate_created',
      book: (sim, id, body) => bookMandate(processor(sim, 'simulator_a'), id, body),

      resumedBy: 'retry',
      status: 'active',
    },
    abandon: { strandedAt: 'mandate_created', status: 'failed', failureCode: 'processing_error', sent: 0 },
    pendingBy: 'scenario',
    settledAtProcessor: async (sim, id, connector) => ({ ...(await processor(sim, connector).mandates.get(id))!, state: 'ACTIVE' }),
    settledStatus: 'active',
    helper: { outcome: 'active', status: 'active' },
  },
];

/** The newest object of the resource: the one a crashed request left (each test has its own tenant). */
export async function newest(api: Api, resource: MovementCase['resource']): Promise<Record<string, any>> {
  const res = await api.get(`/v1/${resource}?limit=1`);
  expect(res.status, res.text).toBe(200);
  return res.body.data[0];
}
