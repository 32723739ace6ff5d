// The simulated processors themselves — the far side of the simulator connector, as a processor's
// sandbox would behave: charges and refunds (charges.ts), mandates (mandates.ts) and payouts
// (payouts.ts) behind one HTTP-shaped API, their books in a store (store.ts: the service's
// database in process, memory in the simulator's own server), and what they do on their own later
// (reports.ts). Clock and webhook poster are injected.
import crypto from 'node:crypto';
import { ChargeDesk, RefundDesk } from './charges.js';
import { CaptureDesk } from './captures.js';
import { DisputeDesk } from './disputes.js';
import { MandateDesk } from './mandates.js';
import { PayoutDesk } from './payouts.js';
import type { Desk, ProcessorContext } from './objects.js';
import { SIMULATED_PROCESSORS, type ProcessorProfile } from './profiles.js';
import { ReportPump, systemClock, type SimulatorClock, type WebhookPoster } from './reports.js';
import { memoryStore, type SimKey, type SimulatorStore } from './store.js';
import { simError, type SimResponse } from './wire.js';
import { settlementReport } from './settlements.js';

export { SIMULATED_PROCESSORS, systemClock, type ProcessorProfile, type SimulatorClock, type SimResponse, type WebhookPoster };

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
  /** Where the processors keep their books (default: this process's memory). */
  store?: SimulatorStore;
}

export class SimulatedProcessor implements ProcessorContext {
  private sequence = 0;
  /** The charges this processor holds (charges.ts). */
  readonly charges: ChargeDesk;
  readonly refunds: RefundDesk;
  /** Captures of manual charges (captures.ts). */
  readonly captures: CaptureDesk;
  /** Direct debit mandates held by this processor (mandates.ts). */
  readonly mandates: MandateDesk;
  /** Payouts sent by this processor (payouts.ts). */
  readonly payouts: PayoutDesk;
  /** Cardholders' disputes of its charges (disputes.ts). */
  readonly disputes: DisputeDesk;
  private readonly desks: Record<string, Desk>;

  constructor(
    readonly profile: ProcessorProfile,
    private readonly host: SimulatorHost,
  ) {
    this.mandates = new MandateDesk(this);
    this.disputes = new DisputeDesk(this);
    this.charges = new ChargeDesk(this, (id) => this.mandates.getByObjectId(id), (charge) => this.disputes.open(charge));
    this.refunds = new RefundDesk(this);
    this.captures = new CaptureDesk(this);
    this.payouts = new PayoutDesk(this);
    this.desks = { charges: this.charges, refunds: this.refunds, captures: this.captures, mandates: this.mandates, payouts: this.payouts, disputes: this.disputes };
  }

  get name() {
    return this.profile.name;
  }

  get store() {
    return this.host.store;
  }

  get pendingDelayMs() {
    return this.host.options.pendingDelayMs;
  }

  /** Charge requests received per merchant reference, replays included (tests count them). */
  get chargeRequests() {
    return this.charges.requests;
  }

  now(): Date {
    return this.host.clock.now();
  }

  wake(at?: Date): void {
    this.host.pump.wake(at);
  }

  nextId(kind: string): string {
    this.sequence += 1;
    return `${this.name}_${kind}_${this.host.instanceId}${String(this.sequence).padStart(8, '0')}`;
  }

  /** What falls due on its own: pending objects settling, timed-out requests being reported. */
  runDue(key: SimKey): Promise<void> {
    const desk = { charge: this.charges, refund: this.refunds, capture: this.captures, mandate: this.mandates, payout: this.payouts, dispute: this.disputes }[key.kind];
    return desk.runDue(key.reference);
  }

  /** /{collection}, /{collection}/{reference} and /{collection}/{reference}/{action}, below the processor's name. */
  async dispatch(method: string, parts: readonly string[], body: unknown, query = new URLSearchParams()): Promise<SimResponse | undefined> {
    const [collection, reference, action] = parts;
    if (collection === 'stats' && method === 'GET' && parts.length === 1) return { status: 200, body: await this.stats() };
    if (collection === 'settlements' && method === 'GET' && parts.length === 1) return settlementReport(this.store, this.name, query, this.profile.fee);
    const desk = collection === undefined ? undefined : this.desks[collection];
    if (!desk) return undefined;
    if (method === 'POST' && parts.length === 1) return desk.create(body);
    if (method === 'GET' && parts.length === 2) return desk.read(reference!);
    if (method === 'POST' && parts.length === 3) return desk.act?.(action!, reference!, body);
    return undefined;
  }

  async stats() {
    return {
      charges: await this.store.count(this.name, 'charge'),
      charge_requests: Object.fromEntries(this.chargeRequests),
      refunds: await this.store.count(this.name, 'refund'),
    };
  }
}

/** The processors of one simulator, their books and what they do on their own. */
export class SimulatorHost {
  readonly processors = new Map<string, SimulatedProcessor>();
  readonly clock: SimulatorClock;
  readonly store: SimulatorStore;
  readonly pump: ReportPump;
  /** Makes this simulator's ids unique across restarts and instances, as a processor's are. */
  readonly instanceId: string;

  constructor(readonly options: SimulatorOptions) {
    this.instanceId = options.instanceId ?? crypto.randomBytes(4).toString('hex');
    this.clock = options.clock ?? systemClock;
    this.store = options.store ?? memoryStore();
    for (const profile of options.profiles ?? SIMULATED_PROCESSORS) this.processors.set(profile.name, new SimulatedProcessor(profile, this));
    this.pump = new ReportPump({
      store: this.store,
      clock: this.clock,
      processors: [...this.processors.keys()],
      familySecret: options.familySecret,
      postWebhook: options.postWebhook,
      runDue: (key) => this.processors.get(key.processor)!.runDue(key),
    });
    this.pump.setWebhookBaseUrl(options.webhookBaseUrl);
  }

  setWebhookBaseUrl(url: string | undefined): void {
    this.pump.setWebhookBaseUrl(url);
  }

  private async pause(): Promise<void> {
    const ms = this.options.latencyMs ?? 0;
    if (ms > 0) await new Promise<void>((resolve) => this.clock.schedule(ms, resolve));
  }

  /** The processors' HTTP API, shared by the in-process transport and the server. */
  async dispatch(method: string, path: string, body: unknown): Promise<SimResponse> {
    await this.pause();
    const [pathname, search] = path.split('?');
    const parts = pathname!.split('/').filter(Boolean).map(decodeURIComponent);
    const processor = this.processors.get(parts[0] ?? '');
    if (!processor) return simError(404, 'NOT_FOUND', `no processor ${parts[0] ?? ''}`);
    return (await processor.dispatch(method, parts.slice(1), body, new URLSearchParams(search ?? ''))) ?? simError(404, 'NOT_FOUND', `no route ${method} ${path}`);
  }

  close(): void {
    this.pump.close();
  }
}
