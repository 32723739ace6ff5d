// What charges, refunds, mandates and payouts have in common at a simulated processor: they are
// created once per merchant reference (a replay answers the object held, a different request under
// the same reference a conflict), read by reference, moved by the control endpoint, and may have
// an action of the processor's own due later (a pending object settling, a timed-out request's
// outcome being reported). Every change of state is reported by webhook through the store's
// outbox, but for a cancellation the merchant asked for (it has the answer).
import { accountScenario } from './cards.js';
import type { SimWebhook } from './protocol.js';
import type { ProcessorProfile } from './profiles.js';
import type { Books, SimKind, SimulatorStore } from './store.js';
import { HOLD_LIMIT_MS, simError, type SimResponse } from './wire.js';

/** What a processor's objects need from the processor. */
export interface ProcessorContext {
  readonly name: string;
  readonly profile: ProcessorProfile;
  readonly store: SimulatorStore;
  /** How long the processor takes to settle a pending object, or to report a request it never answered. */
  readonly pendingDelayMs: number;
  now(): Date;
  /** A new id of the processor's own, unique across its instances and restarts. */
  nextId(kind: string): string;
  /** Asks the host to run due actions and send due reports at `at` (default: now). */
  wake(at?: Date): void;
}

export interface ObjectSpec<T> {
  kind: SimKind;
  objectId(object: T): string;
  /** Moves `object` (in place) to `to`; false when its state does not allow it and nothing changed. */
  settle(object: T, to: string): boolean;
}

/** A new object, and what the processor does with it later. */
export interface Made<T> {
  object: T;
  /** Pending: the state it settles to after the delay. */
  settlesTo?: string;
  /** The processor acted but does not answer: the outcome is reported after the delay. */
  hang?: boolean;
}

/** The objects of one kind at one processor; each desk (charges.ts, mandates.ts, payouts.ts) is one. */
export class ProcessorObjects<T extends { merchant_reference: string; state: string }> {
  constructor(
    protected readonly p: ProcessorContext,
    private readonly spec: ObjectSpec<T>,
  ) {}

  private key(reference: string) {
    return { processor: this.p.name, kind: this.spec.kind, reference };
  }

  async get(reference: string): Promise<T | undefined> {
    return (await this.p.store.get<T>(this.key(reference)))?.body;
  }

  async has(reference: string): Promise<boolean> {
    return (await this.get(reference)) !== undefined;
  }

  async getByObjectId(objectId: string): Promise<T | undefined> {
    return (await this.p.store.getByObjectId<T>(this.p.name, this.spec.kind, objectId))?.body;
  }

  private notFound(): SimResponse {
    return simError(404, 'NOT_FOUND', `no ${this.spec.kind} with this merchant_reference`);
  }

  /** GET /{collection}/{reference} */
  async read(reference: string): Promise<SimResponse> {
    const object = await this.get(reference);
    return object ? { status: 200, body: object } : this.notFound();
  }

  private replay(held: T, same: (held: T) => boolean): SimResponse {
    return same(held) ? { status: 200, body: held } : simError(409, 'IDEMPOTENCY_CONFLICT', `this merchant_reference was used for another ${this.spec.kind}`);
  }

  /**
   * Creates the object `make` describes unless one is held under `reference`. `make` may refuse
   * with an answer of its own (an internal error), unless the reference is held already.
   */
  protected async createOnce(reference: string, same: (held: T) => boolean, make: () => Promise<Made<T> | SimResponse>): Promise<SimResponse> {
    const made = await make();
    if ('status' in made) {
      const held = await this.get(reference);
      return held ? this.replay(held, same) : made;
    }
    const pending = made.settlesTo !== undefined || made.hang === true;
    const dueAt = pending ? new Date(this.p.now().getTime() + (made.hang ? HOLD_LIMIT_MS : 0) + this.p.pendingDelayMs) : null;
    const dueState = made.settlesTo ?? (made.hang ? made.object.state : null);
    const { entry, created } = await this.p.store.insert({ ...this.key(reference), objectId: this.spec.objectId(made.object), body: made.object, dueAt, dueState });
    if (!created) return this.replay(entry.body, same);
    if (dueAt) this.p.wake(dueAt);
    if (made.hang) return { status: 0, body: undefined, hang: { hungUp: () => this.postpone(reference) } };
    return { status: 201, body: made.object };
  }

  /**
   * Changes the object through `apply` (false: nothing to change). A change settles whatever was
   * due, and is reported by webhook unless `quiet` (the merchant asked for it and has the answer).
   */
  async change(reference: string, apply: (object: T) => boolean, quiet = false): Promise<SimResponse> {
    const answer = await this.p.store.transaction(async (books) => {
      const entry = await books.get<T>(this.key(reference), { lock: true });
      if (!entry) return this.notFound();
      if (apply(entry.body)) {
        await books.update({ ...entry, dueAt: null, dueState: null });
        if (!quiet) await this.report(books, entry.body);
      }
      return { status: 200, body: entry.body };
    });
    if (!quiet) this.p.wake();
    return answer;
  }

  /** Settles the object now as `to` (the processor's delay elapsed, or its control endpoint). */
  settle(reference: string, to: string): Promise<SimResponse> {
    return this.change(reference, (object) => this.spec.settle(object, to));
  }

  /** POST …/{reference}/resolve {state}: the control endpoint, for a state among `allowed`. */
  protected resolveControl(allowed: readonly string[], reference: string, body: unknown): Promise<SimResponse> {
    const state = (body as { state?: unknown } | undefined)?.state;
    if (typeof state === 'string' && allowed.includes(state)) return this.settle(reference, state);
    return Promise.resolve(simError(400, 'BAD_REQUEST', `state must be ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}`));
  }

  /** The processor's own action, once due: settles a still pending object, and reports the object either way. */
  async runDue(reference: string): Promise<void> {
    const now = this.p.now();
    await this.p.store.transaction(async (books) => {
      const entry = await books.get<T>(this.key(reference), { lock: true });
      if (!entry?.dueAt || entry.dueAt > now) return;
      if (entry.dueState !== null) this.spec.settle(entry.body, entry.dueState);
      await books.update({ ...entry, dueAt: null, dueState: null });
      await this.report(books, entry.body);
    });
    this.p.wake();
  }

  /** The caller of a request left unanswered gave up: its outcome is reported after the delay from now. */
  async postpone(reference: string): Promise<void> {
    const dueAt = new Date(this.p.now().getTime() + this.p.pendingDelayMs);
    const moved = await this.p.store.transaction(async (books) => {
      const entry = await books.get<T>(this.key(reference), { lock: true });
      if (!entry?.dueAt) return false;
      await books.update({ ...entry, dueAt });
      return true;
    });
    if (moved) this.p.wake(dueAt);
  }

  protected report(books: Books, object: T): Promise<void> {
    const now = this.p.now();
    const eventId = this.p.nextId('evt');
    const body = { event_id: eventId, event_type: `${this.spec.kind}.state_changed`, occurred_at: now.toISOString(), [this.spec.kind]: object } as SimWebhook;
    return books.report({ eventId, processor: this.p.name, body, dueAt: now, attempts: 0 });
  }
}

/**
 * What a mandate or payout to this account meets (docs/test-mode.md, by the account's ending): `object`
 * as made in its settled state, refused by the bank, pending in `pendingState`, never answered, or
 * an internal error of this processor (`nothingDone` says what was not done).
 */
export function byAccountEnding<T extends { state: string; rejection: string | null }>(
  p: ProcessorContext,
  accountNumber: string,
  nothingDone: string,
  pendingState: T['state'],
  object: () => T,
): Made<T> | SimResponse {
  const scenario = accountScenario(accountNumber);
  if (p.profile.errorsOn.includes(scenario)) return simError(500, 'INTERNAL_ERROR', `the processor could not process the request; ${nothingDone}`);
  const made = object();
  if (scenario === 'decline') return { object: { ...made, state: 'REJECTED', rejection: 'ACCOUNT_CLOSED' } };
  if (scenario === 'pending') return { object: { ...made, state: pendingState }, settlesTo: made.state };
  // Timeout: done, but the answer never comes; the merchant learns it by asking or by webhook.
  return { object: made, hang: scenario === 'timeout' };
}

/** One collection of a processor's HTTP API (charges, refunds, mandates, payouts). */
export interface Desk {
  create(body: unknown): Promise<SimResponse>;
  read(reference: string): Promise<SimResponse>;
  /** POST /{collection}/{reference}/{action}; undefined for an action it does not have. */
  act?(action: string, reference: string, body: unknown): Promise<SimResponse> | undefined;
}

/** Counts a request under its merchant reference: the desks keep these counts in memory, replays included, for tests. */
export function countRequest(requests: Map<string, number>, reference: string): void {
  requests.set(reference, (requests.get(reference) ?? 0) + 1);
}


