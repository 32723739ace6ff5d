// The simulated processors themselves — the far side of the simulator connector, as a processor's
// sandbox would behave. Outcomes are chosen by the test card (cards.ts); charges and refunds are
// idempotent by the merchant's reference (our payment or refund id), so a repeated call returns
// the charge already made instead of charging again. Pending charges settle after a configured
// delay (or when told to, through the control endpoint) and are reported by signed webhook.
//
// Clock, timers and the webhook poster are injected; state is in memory (one host per process, or
// its own process with `npm run simulator`).
import crypto from 'node:crypto';
import { testCard, type TestCardScenario } from './cards.js';
import type {
  SimCharge,
  SimChargeRequest,
  SimError,
  SimErrorCode,
  SimRefund,
  SimRefundRequest,
  SimWebhook,
} from './protocol.js';
import { SIM_SIGNATURE_HEADER } from './protocol.js';
import { processorSecret, signPayload } from './signing.js';
import { SimulatedMandates } from './mandates.js';
import { SimulatedPayouts } from './payouts.js';

export interface SimResponse {
  status: number;
  body: unknown;
  /** The processor acted but never answers (the timeout scenario). */
  hang?: boolean;
}

export interface ProcessorProfile {
  name: string;
  /** Card scenarios this processor answers with an internal error instead of processing. */
  errorsOn: readonly TestCardScenario[];
}

/** The built-in family: two processors, so that routing and fallback can be seen. */
export const SIMULATED_PROCESSORS: readonly ProcessorProfile[] = [
  { name: 'simulator_a', errorsOn: ['processor_error'] },
  { name: 'simulator_b', errorsOn: [] },
];

export interface SimulatorClock {
  now(): Date;
  /** Runs fn after delayMs; returns a cancel function. */
  schedule(delayMs: number, fn: () => void): () => void;
}

export const systemClock: SimulatorClock = {
  now: () => new Date(),
  schedule(delayMs, fn) {
    const timer = setTimeout(fn, delayMs);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export type WebhookPoster = (url: string, headers: Record<string, string>, body: string) => Promise<number>;

const defaultPoster: WebhookPoster = async (url, headers, body) => {
  const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  await res.arrayBuffer();
  return res.status;
};

export interface SimulatorOptions {
  familySecret: string;
  pendingDelayMs: number;
  latencyMs?: number;
  clock?: SimulatorClock;
  /** Base URL of the service that receives the webhooks (…/v1/connectors/{name}/webhooks); unset: none sent. */
  webhookBaseUrl?: string;
  postWebhook?: WebhookPoster;
  profiles?: readonly ProcessorProfile[];
  /** Prefix of this instance's ids (default: random). */
  instanceId?: string;
}

const WEBHOOK_RETRY_DELAYS_MS = [250, 1000, 5000, 30_000];

function error(status: number, code: SimErrorCode, detail: string): SimResponse {
  const body: SimError = { error: { code, detail } };
  return { status, body };
}

function isChargeRequest(body: unknown): body is SimChargeRequest {
  const b = body as SimChargeRequest | undefined;
  return (
    typeof b?.merchant_reference === 'string' &&
    Number.isSafeInteger(b.amount_minor) &&
    b.amount_minor > 0 &&
    typeof b.currency === 'string' &&
    // A direct debit names its mandate instead of a card.
    ((typeof b.mandate_id === 'string' && b.card === undefined) ||
      (typeof b.card?.pan === 'string' &&
        Number.isInteger(b.card.expiry_month) &&
        Number.isInteger(b.card.expiry_year) &&
        typeof b.card.security_code === 'string'))
  );
}

function isRefundRequest(body: unknown): body is SimRefundRequest {
  const b = body as SimRefundRequest | undefined;
  return typeof b?.merchant_reference === 'string' && typeof b.charge_reference === 'string' && Number.isSafeInteger(b.amount_minor) && b.amount_minor > 0;
}

export class SimulatedProcessor {
  readonly charges = new Map<string, SimCharge>();
  readonly refunds = new Map<string, SimRefund>();
  /** Charge requests received per merchant reference, replays included (tests count them). */
  readonly chargeRequests = new Map<string, number>();
  private sequence = 0;
  /** Direct debit mandates held by this processor (mandates.ts). */
  readonly mandates: SimulatedMandates;
  /** Payouts sent by this processor (payouts.ts). */
  readonly payouts: SimulatedPayouts;

  constructor(
    readonly profile: ProcessorProfile,
    private readonly host: SimulatorHost,
  ) {
    this.mandates = new SimulatedMandates(this, host);
    this.payouts = new SimulatedPayouts(this, host);
  }

  get name() {
    return this.profile.name;
  }

  nextId(kind: string): string {
    this.sequence += 1;
    return `${this.name}_${kind}_${this.host.instanceId}${String(this.sequence).padStart(8, '0')}`;
  }

  createCharge(body: unknown): SimResponse {
    if (!isChargeRequest(body)) return error(400, 'BAD_REQUEST', 'merchant_reference, amount_minor, currency and card are required');
    this.chargeRequests.set(body.merchant_reference, (this.chargeRequests.get(body.merchant_reference) ?? 0) + 1);
    const existing = this.charges.get(body.merchant_reference);
    if (existing) {
      if (existing.amount_minor !== body.amount_minor || existing.currency !== body.currency) {
        return error(409, 'IDEMPOTENCY_CONFLICT', 'this merchant_reference was used for another charge');
      }
      return { status: 200, body: existing };
    }
    if (body.mandate_id !== undefined) {
      const debit = this.mandates.debit(body as SimChargeRequest & { mandate_id: string }, {
        charge_id: this.nextId('ch'),
        merchant_reference: body.merchant_reference,
        amount_minor: body.amount_minor,
        currency: body.currency,
        state: 'PENDING',
        refusal: null,
        refunded_minor: 0,
        created_at: this.host.clock.now().toISOString(),
      });
      this.charges.set(debit.merchant_reference, debit);
      return { status: 201, body: debit };
    }
    const card = testCard(body.card!.pan);
    const scenario = card?.scenario;
    if (scenario && this.profile.errorsOn.includes(scenario)) {
      return error(500, 'INTERNAL_ERROR', 'the processor could not process the request; nothing was charged');
    }
    const now = this.host.clock.now();
    const expired = body.card!.expiry_year * 12 + body.card!.expiry_month < now.getUTCFullYear() * 12 + now.getUTCMonth() + 1;
    const charge: SimCharge = {
      charge_id: this.nextId('ch'),
      merchant_reference: body.merchant_reference,
      amount_minor: body.amount_minor,
      currency: body.currency,
      state: 'CAPTURED',
      refusal: null,
      refunded_minor: 0,
      created_at: now.toISOString(),
    };
    if (!card) {
      charge.state = 'REFUSED';
      charge.refusal = 'UNKNOWN_CARD';
    } else if (expired) {
      charge.state = 'REFUSED';
      charge.refusal = 'EXPIRED_CARD';
    } else if (card.scenario === 'decline') {
      charge.state = 'REFUSED';
      charge.refusal = card.decline === 'insufficient_funds' ? 'NOT_ENOUGH_BALANCE' : 'DO_NOT_HONOUR';
    } else if (card.scenario === 'pending') {
      charge.state = 'PENDING';
      this.host.later(() => this.settleCharge(charge.merchant_reference, 'CAPTURED'));
    }
    this.charges.set(charge.merchant_reference, charge);
    if (card?.scenario === 'timeout') {
      // Charged, but the answer never comes: the merchant learns it by asking or by webhook.
      this.host.later(() => this.host.notify(this.name, { event_type: 'charge.state_changed', charge }));
      return { status: 0, body: undefined, hang: true };
    }
    return { status: 201, body: charge };
  }

  getCharge(reference: string): SimResponse {
    const charge = this.charges.get(reference);
    return charge ? { status: 200, body: charge } : error(404, 'NOT_FOUND', 'no charge with this merchant_reference');
  }

  /** Settles a pending charge (delay elapsed or control call) and reports it by webhook. */
  settleCharge(reference: string, state: 'CAPTURED' | 'REFUSED'): SimResponse {
    const charge = this.charges.get(reference);
    if (!charge) return error(404, 'NOT_FOUND', 'no charge with this merchant_reference');
    if (charge.state !== 'PENDING') return { status: 200, body: charge };
    charge.state = state;
    charge.refusal = state === 'REFUSED' ? (charge.mandate_id ? 'DEBIT_RETURNED' : 'DO_NOT_HONOUR') : null;
    this.host.notify(this.name, { event_type: 'charge.state_changed', charge });
    return { status: 200, body: charge };
  }

  createRefund(body: unknown): SimResponse {
    if (!isRefundRequest(body)) return error(400, 'BAD_REQUEST', 'merchant_reference, charge_reference and amount_minor are required');
    const existing = this.refunds.get(body.merchant_reference);
    if (existing) return { status: 200, body: existing };
    const charge = this.charges.get(body.charge_reference);
    if (!charge) return error(404, 'NOT_FOUND', 'no charge with this charge_reference');
    const refund: SimRefund = {
      refund_id: this.nextId('re'),
      merchant_reference: body.merchant_reference,
      charge_id: charge.charge_id,
      amount_minor: body.amount_minor,
      state: 'REFUNDED',
      refusal: null,
      created_at: this.host.clock.now().toISOString(),
    };
    if (charge.state !== 'CAPTURED') {
      refund.state = 'REFUND_REFUSED';
      refund.refusal = 'CHARGE_NOT_CAPTURED';
    } else if (charge.refunded_minor + body.amount_minor > charge.amount_minor) {
      refund.state = 'REFUND_REFUSED';
      refund.refusal = 'AMOUNT_EXCEEDS_CHARGE';
    } else {
      charge.refunded_minor += body.amount_minor;
    }
    this.refunds.set(refund.merchant_reference, refund);
    return { status: 201, body: refund };
  }

  getRefund(reference: string): SimResponse {
    const refund = this.refunds.get(reference);
    return refund ? { status: 200, body: refund } : error(404, 'NOT_FOUND', 'no refund with this merchant_reference');
  }

  stats() {
    return {
      charges: this.charges.size,
      charge_requests: Object.fromEntries(this.chargeRequests),
      refunds: this.refunds.size,
    };
  }
}

/** The processors of one simulator, their timers and their webhook sending. */
export class SimulatorHost {
  readonly processors = new Map<string, SimulatedProcessor>();
  readonly clock: SimulatorClock;
  private readonly cancels = new Set<() => void>();
  private webhookSequence = 0;
  private webhookBaseUrl: string | undefined;
  private readonly postWebhook: WebhookPoster;
  private closed = false;
  /** Makes this simulator's ids unique across restarts and instances, as a processor's are. */
  readonly instanceId: string;

  constructor(readonly options: SimulatorOptions) {
    this.instanceId = options.instanceId ?? crypto.randomBytes(4).toString('hex');
    this.clock = options.clock ?? systemClock;
    this.webhookBaseUrl = options.webhookBaseUrl;
    this.postWebhook = options.postWebhook ?? defaultPoster;
    for (const profile of options.profiles ?? SIMULATED_PROCESSORS) this.processors.set(profile.name, new SimulatedProcessor(profile, this));
  }

  setWebhookBaseUrl(url: string | undefined): void {
    this.webhookBaseUrl = url;
  }

  /** Runs fn once the pending delay has passed. */
  later(fn: () => void, delayMs = this.options.pendingDelayMs): void {
    if (this.closed) return;
    const cancel = this.clock.schedule(delayMs, () => {
      this.cancels.delete(cancel);
      if (!this.closed) fn();
    });
    this.cancels.add(cancel);
  }

  notify(processor: string, event: Pick<SimWebhook, 'event_type' | 'charge' | 'refund' | 'mandate' | 'payout'>): void {
    const base = this.webhookBaseUrl;
    if (!base || this.closed) return;
    this.webhookSequence += 1;
    const webhook: SimWebhook = {
      event_id: `${processor}_evt_${this.instanceId}${String(this.webhookSequence).padStart(8, '0')}`,
      occurred_at: this.clock.now().toISOString(),
      ...event,
      ...(event.charge ? { charge: { ...event.charge } } : {}),
      ...(event.mandate ? { mandate: { ...event.mandate } } : {}),
    };
    const body = JSON.stringify(webhook);
    const url = `${base.replace(/\/$/, '')}/v1/connectors/${processor}/webhooks`;
    const secret = processorSecret(this.options.familySecret, processor);
    const send = (attempt: number) => {
      const headers = {
        'content-type': 'application/json',
        [SIM_SIGNATURE_HEADER]: signPayload(secret, Math.floor(this.clock.now().getTime() / 1000), body),
      };
      this.postWebhook(url, headers, body).then(
        (status) => {
          if (status >= 200 && status < 300) return;
          if (status >= 400 && status < 500 && status !== 409 && status !== 429) return;
          retry(attempt);
        },
        () => retry(attempt),
      );
    };
    const retry = (attempt: number) => {
      const delay = WEBHOOK_RETRY_DELAYS_MS[attempt];
      if (delay !== undefined) this.later(() => send(attempt + 1), delay);
    };
    send(0);
  }

  private async pause(): Promise<void> {
    const ms = this.options.latencyMs ?? 0;
    if (ms > 0) await new Promise<void>((resolve) => this.clock.schedule(ms, resolve));
  }

  /** The processors' HTTP API, shared by the in-process transport and the server. */
  async dispatch(method: string, path: string, body: unknown): Promise<SimResponse> {
    await this.pause();
    const parts = path.split('?')[0]!.split('/').filter(Boolean).map(decodeURIComponent);
    const processor = this.processors.get(parts[0] ?? '');
    if (!processor) return error(404, 'NOT_FOUND', `no processor ${parts[0] ?? ''}`);
    const [, collection, reference, action] = parts;
    if (collection === 'charges') {
      if (method === 'POST' && parts.length === 2) return processor.createCharge(body);
      if (method === 'GET' && parts.length === 3) return processor.getCharge(reference!);
      if (method === 'POST' && action === 'resolve' && parts.length === 4) {
        const state = (body as { state?: string } | undefined)?.state;
        if (state !== 'CAPTURED' && state !== 'REFUSED') return error(400, 'BAD_REQUEST', 'state must be CAPTURED or REFUSED');
        return processor.settleCharge(reference!, state);
      }
    }
    if (collection === 'refunds') {
      if (method === 'POST' && parts.length === 2) return processor.createRefund(body);
      if (method === 'GET' && parts.length === 3) return processor.getRefund(reference!);
    }
    if (collection === 'mandates') {
      const answer = processor.mandates.dispatch(method, parts.slice(2), body);
      if (answer) return answer;
    }
    if (collection === 'payouts') {
      const answer = processor.payouts.dispatch(method, parts.slice(2), body);
      if (answer) return answer;
    }
    if (collection === 'stats' && method === 'GET') return { status: 200, body: processor.stats() };
    return error(404, 'NOT_FOUND', `no route ${method} ${path}`);
  }

  close(): void {
    this.closed = true;
    for (const cancel of this.cancels) cancel();
    this.cancels.clear();
  }
}
