// The simulated processors acting on their own: settling pending objects once their delay has
// passed, reporting timed-out requests, and sending the webhooks they owe (retried on failure).
//
// Everything due is a row in the books (an object's due_at, a report's due_at), never only a timer
// in some process, so a crash loses nothing. Whoever hosts the simulator runs it, with its own
// timers rather than in the worker's pass: the simulated processor is an outside party whose clock
// must not depend on our worker being configured (ROLES=api processes, tests without a worker),
// and a timer set for the exact due time of what this process scheduled keeps outcomes as prompt
// as SIMULATOR_PENDING_DELAY_MS says. A periodic sweep re-reads due rows as well, for those a
// process left behind when it died, or that another process scheduled. Reports go to this
// process's own service (or SIMULATOR_WEBHOOK_URL): a process that does not know where to send
// them (no api role) leaves them to one that does. Several processes split due reports between
// them (claimed with a lease, SKIP LOCKED); the service dedupes a report sent twice by its event id.
import { SIM_SIGNATURE_HEADER } from './protocol.js';
import { processorSecret, signPayload } from './signing.js';
import type { SimKey, SimReport, SimulatorStore } from './store.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

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

// One connection per report: a kept-alive socket would hold the receiving service's shutdown for
// its keep-alive timeout whenever a report was in flight as it began to close.
const defaultPoster: WebhookPoster = async (url, headers, body) => {
  const res = await fetch(url, { method: 'POST', headers: { ...headers, connection: 'close' }, body, signal: AbortSignal.timeout(10_000) });
  await res.arrayBuffer();
  return res.status;
};

/** Pause before each further attempt of a webhook; after the last, it is given up. */
const WEBHOOK_RETRY_DELAYS_MS = [250, 1000, 5000, 30_000];
/** How often due rows are looked for besides this process's own timers. */
const SWEEP_INTERVAL_MS = 1000;
/** A report being sent is left alone this long (beyond the poster's 10 s timeout); then another process may send it. */
const DELIVERY_LEASE_MS = 15_000;
const BATCH = 100;

export interface PumpOptions {
  store: SimulatorStore;
  clock: SimulatorClock;
  processors: readonly string[];
  familySecret: string;
  postWebhook?: WebhookPoster;
  /** The processor's own action on an object whose due time has come. */
  runDue(key: SimKey): Promise<void>;
}

export class ReportPump {
  private readonly timers = new Set<() => void>();
  private running = false;
  private again = false;
  private closed = false;
  private webhookBaseUrl: string | undefined;
  private readonly post: WebhookPoster;

  constructor(private readonly opts: PumpOptions) {
    this.post = opts.postWebhook ?? defaultPoster;
    const sweep = () => {
      this.run();
      this.after(SWEEP_INTERVAL_MS, sweep);
    };
    this.after(SWEEP_INTERVAL_MS, sweep);
  }

  /** Base URL of the service that receives the webhooks (…/v1/connectors/{name}/webhooks); unset: none sent from here. */
  setWebhookBaseUrl(url: string | undefined): void {
    this.webhookBaseUrl = url;
    if (url) this.wake();
  }

  /** Runs a pass at `at` (default: now). */
  wake(at?: Date): void {
    this.after(at ? at.getTime() - this.opts.clock.now().getTime() : 0, () => this.run());
  }

  private after(delayMs: number, fn: () => void): void {
    if (this.closed) return;
    // Node fires a timer set past 2^31 - 1 ms (about 24.8 days) at once; something due that far
    // out (an authorisation's expiry) is found by a later sweep anyway.
    const cancel = this.opts.clock.schedule(Math.min(Math.max(0, delayMs), MAX_TIMER_MS), () => {
      this.timers.delete(cancel);
      if (!this.closed) fn();
    });
    this.timers.add(cancel);
  }

  /** One pass at a time; a wake during a pass runs another right after it. */
  private run(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.pass()
      // A failed pass (the database restarting, the store closed under it) is retried by the next sweep.
      .catch(() => undefined)
      .finally(() => {
        this.running = false;
        if (this.again && !this.closed) {
          this.again = false;
          this.run();
        }
      });
  }

  private async pass(): Promise<void> {
    const { store, processors, clock } = this.opts;
    const now = clock.now();
    const due = await store.due(processors, now, BATCH);
    for (const key of due) {
      if (this.closed) return;
      await this.opts.runDue(key).catch(() => undefined);
    }
    const base = this.webhookBaseUrl;
    if (this.closed || !base) return;
    const reports = await store.claimReports(processors, now, new Date(now.getTime() + DELIVERY_LEASE_MS), BATCH);
    await Promise.all(reports.map((report) => this.deliver(base, report)));
    if (due.length === BATCH || reports.length === BATCH) this.again = true;
  }

  private async deliver(base: string, report: SimReport): Promise<void> {
    const { clock, familySecret, store } = this.opts;
    const body = JSON.stringify(report.body);
    const url = `${base.replace(/\/$/, '')}/v1/connectors/${report.processor}/webhooks`;
    const signature = signPayload(processorSecret(familySecret, report.processor), Math.floor(clock.now().getTime() / 1000), body);
    const status = await this.post(url, { 'content-type': 'application/json', [SIM_SIGNATURE_HEADER]: signature }, body).catch(() => undefined);
    // Delivered, or refused for good (a 4xx other than conflict or rate limit): nothing more to send.
    const done = status !== undefined && ((status >= 200 && status < 300) || (status >= 400 && status < 500 && status !== 409 && status !== 429));
    const delay = WEBHOOK_RETRY_DELAYS_MS[report.attempts - 1];
    if (done || delay === undefined) return store.dropReport(report.eventId);
    const dueAt = new Date(clock.now().getTime() + delay);
    await store.retryReport(report.eventId, dueAt);
    this.wake(dueAt);
  }

  close(): void {
    this.closed = true;
    for (const cancel of this.timers) cancel();
    this.timers.clear();
  }
}
