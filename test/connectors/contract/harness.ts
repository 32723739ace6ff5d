// What the connector contract suite needs from a processor: a "harness" wraps one processor's
// fake (or its real sandbox, for `npm run connectors:smoke`) behind one interface, so that the
// same scenarios (scenarios.ts) run through the service's HTTP API over every connector. A new
// connector joins the suite with one harness file, listed in harnesses.ts.
//
// A harness says what it can do with capabilities; a scenario needing one the harness lacks is
// skipped for it (a real sandbox has no fault controls, no books of its own to read, and cannot be
// told to send a webhook now).
import type { RuntimeOptions } from '../../../src/runtime.js';
import type { Api, PaymentsSettings } from '../../support/helpers.js';

export type Capability =
  /** Fault controls: refuse the next request before acting, refuse connections, 500 or hang after acting. */
  | 'faults'
  /** Its own books can be read (charges held and requests received under our id, amount refunded). */
  | 'books'
  /** Settles a pending payment at the processor now (a webhook then reports it). */
  | 'settle'
  /** Signs webhooks as the processor does (and badly, or with a stale timestamp, when told). */
  | 'webhooks'
  /** Runs beside a service process (env), for the SIGKILL crash scenarios. */
  | 'processes'
  /**
   * Learns a refund's outcome within the run: at once, or by a webhook the harness delivers. (Adyen's
   * own sandbox posts its REFUND notification to the URL set in its Customer Area, not to this run.)
   */
  | 'refund_outcome'
  /** Answers a status check (GET …?refresh=true) for a payment whose answer was lost; without it, its webhook tells. */
  | 'status_lookup'
  /** Customer actions (3-D Secure): see the requires-action scenarios in scenarios.ts. */
  | 'customer_actions'
  /** Direct debits: mandates and debits under them, moved at the processor on demand (mandates.ts scenarios). */
  | 'mandates'
  /** Sets mandates up and cancels them at our request (a real sandbox can, without moving them on demand). */
  | 'mandate_setup'
  /** A confirmed debit can still fail late or be charged back (GoCardless; the simulated banks never take the money back). */
  | 'late_debit_failures'
  /** Sends several events in one webhook (GoCardless; the simulators send one event a webhook). */
  | 'webhook_batches';

/** A webhook as the processor sends it. */
export interface Webhook {
  body: string;
  headers: Record<string, string>;
}

/** A payment as the API shows it, as far as a harness needs it. */
export interface PaymentLike {
  id: string;
  amount: number;
  currency: string;
  connector_reference: string | null;
}

/** One tenant's way to the processor: its connector account, or the configuration naming it. */
export interface Connected {
  /** How routing rules name it. */
  route: { name: string };
  /** What payments and attempts show as their connector. */
  connector: string;
  /** Where the processor posts its webhooks. */
  webhookUrl: string;
}

export interface ProcessorHarness {
  readonly name: string;
  readonly capabilities: ReadonlySet<Capability>;
  /** A direct-debit processor (no card payments): only the mandate scenarios run over it. */
  readonly directDebitOnly?: boolean;
  /** Cards the processor answers as documented (its own test cards). */
  readonly cards: { success: string; declined: string; insufficientFunds: string };
  start(): Promise<void>;
  close(): Promise<void>;
  /** What a service in this process needs to reach the processor (never tenant input). */
  service(): { settings?: PaymentsSettings; runtime?: RuntimeOptions };
  /** The same, as the environment of a service process. */
  processEnv(): Record<string, string>;
  /** Creates the tenant's connector account (or configuration) on the service at `serviceUrl`. */
  connect(api: Api, serviceUrl: string): Promise<Connected>;
  /** A card whose next payment the processor answers pending (arranging it with the fake where needed). */
  pendingCard?(): string;
  books?: {
    /** Objects the processor holds under our payment id (one charge, declined or not). */
    chargesHeld(paymentId: string): Promise<number>;
    /** Of those, the ones it authorised (money held or taken); where the harness can tell. */
    authorisations?(paymentId: string): Promise<number>;
    /** Charge requests it received under our payment id, replays included. */
    chargeRequests(paymentId: string): Promise<number>;
    /** What it refunded of our payment, in minor units. */
    refunded(paymentId: string): Promise<number>;
    /** Manual capture: what it captured of our payment's authorisation (captures it confirmed), and whether it released it (voided). */
    authorisation?(paymentId: string): Promise<{ captured: number; voided: boolean }>;
    /** Capture objects it holds under our capture id, once confirmed or not (where it keeps one per capture). */
    capturesHeld?(captureId: string): Promise<number>;
  };
  faults?: {
    /** The next request is refused before acting, in the processor's words (Stripe: 429). */
    refuseNext(): void;
    /** The next request is acted on, then answered with a bare 500. */
    serverErrorAfterNext(): void;
    /** The next request is acted on and never answered. */
    hangAfterNext(): void;
    /** Connections are refused until the function returned is called. */
    refuseConnections(): Promise<() => Promise<void>>;
  };
  /** Settles a payment the processor holds pending (capability `settle`). */
  settle?(payment: PaymentLike, outcome: 'succeeded' | 'failed'): Promise<void>;
  /**
   * The processor's webhook about `payment` in `state` (capability `webhooks`); undefined for one
   * the processor never sends (Adyen: no notification for a payment still pending, no timestamp signed).
   */
  webhook?(connected: Connected, payment: PaymentLike, state: 'pending' | 'succeeded' | 'failed', signing?: 'wrong_secret' | 'stale'): Webhook | undefined;
  /** The fixed text the processor expects as the answer to a webhook (Adyen: [accepted]); unset: the service's JSON receipt. */
  readonly webhookAcknowledgement?: string;
  /**
   * Where refunds are taken pending and settled later (Adyen: by its REFUND notification): settles
   * the refund `refundId` at the processor and delivers its webhook. Unset: refunds succeed at once.
   */
  settleRefund?(connected: Connected, refundId: string): Promise<void>;
  /**
   * Where captures and voids are taken pending and confirmed by notification (Adyen): the processor
   * confirms our capture `capture` (or the void of `voidOf`) and its notification is delivered.
   * Unset: they settle in the processor's answer.
   */
  confirmAuthorisationChange?(connected: Connected, change: { capture: string } | { voidOf: PaymentLike }): Promise<void>;
  /** Direct debits (capability `mandates`): each moves the processor's object and answers the webhook it then sends, not delivered. */
  mandates?: {
    /**
     * The bank account ending (mandateBody's `ending`) a new mandate needs to be answered `pending`
     * (the simulated banks pick the outcome by the account, docs/test-mode.md); unset: any account.
     */
    readonly pendingAccount?: string;
    /** The processor's mandate of our mandate `mandateId` reaches `outcome` (`revoked`: cancelled by the payer through their bank). */
    mandate(connected: Connected, mandateId: string, outcome: 'active' | 'failed' | 'revoked'): Promise<Webhook>;
    /** The processor's debit of our payment `paymentId` reaches `outcome` (`late_failure`, `charged_back`: after it was confirmed; capability `late_debit_failures`). */
    debit(connected: Connected, paymentId: string, outcome: 'confirmed' | 'failed' | 'late_failure' | 'charged_back'): Promise<Webhook>;
    /** Several webhooks' events as one batch, as the processor may send them (capability `webhook_batches`). */
    batch?(webhooks: Webhook[]): Webhook;
    /** Mandates and debits the processor holds under our id. */
    held(ourId: string): Promise<number>;
  };
  /** Customer actions (capability `customer_actions`). */
  actions?: {
    /** A card the processor asks 3-D Secure for (given a return URL). */
    card: string;
    /** The customer answers the processor's challenge of `payment`: the URL the browser is then sent back to. */
    answer(payment: PaymentLike & { next_action: { url: string } }, outcome: 'completed' | 'failed'): Promise<string>;
  };
}

export async function postWebhook(url: string, webhook: Webhook) {
  const res = await fetch(url, { method: 'POST', headers: webhook.headers, body: webhook.body });
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('application/json');
  return { status: res.status, body: text && json ? JSON.parse(text) : undefined, text };
}

/** The fault controls of a fake processor whose faults are named as the fakes of test/support/fakes/ name them. */
export function fakeFaults(fake: {
  inject(fault: '429' | '500_after' | 'hang_after'): void;
  refuseConnections(): Promise<() => Promise<void>>;
}): NonNullable<ProcessorHarness['faults']> {
  return {
    refuseNext: () => fake.inject('429'),
    serverErrorAfterNext: () => fake.inject('500_after'),
    hangAfterNext: () => fake.inject('hang_after'),
    refuseConnections: () => fake.refuseConnections(),
  };
}
