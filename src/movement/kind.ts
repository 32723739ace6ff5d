// How a money movement describes itself to the core: payments, refunds, payouts and mandates each
// give one of these (src/domain/<resource>/kind.ts) and the core (this folder) does the rest —
// calling the route's connectors, recording attempts, locating a movement a crashed request left
// behind, applying every report through one step, the worker's checks and inbound events.
import type { Attempt } from '../connectors/router.js';
import type { ConnectorError } from '../connectors/types.js';
import type { MovementCalls } from '../connectors/movements/calls.js';
import { type IdPrefix, objectHead, toPublicId } from '../kernel/ids.js';
import type { EventType } from '../events/types.js';
import type { ApiError } from '../kernel/errors.js';
import type { AnyRules } from './report.js';
import type { RequestContext } from '../kernel/context.js';
import type { Runtime } from '../runtime.js';
import type { Db, Executor } from '../storage/db.js';
import type { MovementRow, MovementTable } from './row.js';

/** What a route's calls came to (calls.ts). */
export interface Execution<S> {
  attempts: Attempt[];
  /** The connector whose answer stands; null when none took it (all failed or skipped). */
  connector: string | null;
  result: S | ConnectorError;
  /** True when no connector was even asked (every circuit open). */
  unreached: boolean;
}

/**
 * A kind of money movement as the engine runs it: its calls at a connector and their readings
 * (src/connectors/movements/, spread into the descriptor), and the data below — its table and
 * rules, its route and references, how it resumes and answers.
 */
export interface MovementKind<Row extends MovementRow, State extends { kind: string }, Update extends { kind: string }, Request>
  extends MovementCalls<Row, State, Update, Request> {
  object: 'payment' | 'refund' | 'payout' | 'mandate' | 'capture' | 'void' | 'payment_method' | 'dispute_response';
  prefix: IdPrefix;
  /** The event phase 1 writes when it is not `<object>.created`; null: none (a payment method is announced when attached). */
  createdEvent?: EventType | null;
  /** Its table, transition table with effects, view, and how reports move it: data the engine applies (report.ts). */
  rules: AnyRules & { table: MovementTable };
  /** How a connector that cannot tell whether it holds it names it in the 503 of a resumed request. */
  heldAs?: string;
  /**
   * How a retry resumes a movement its request left between phases (saga.ts): by locating it on
   * the route first (the default), or by sending it again to its one connector, which dedupes by
   * our id (a refund).
   */
  resumeBy?: 'locating' | 'sending';
  /** Resumed by sending, but asked first whether its connector already holds it (a void: the authorisation's state tells). */
  locatesBeforeSending?: boolean;
  /** The request's answer when it is not the movement itself (a void answers with its payment). */
  answer?: { status: number; body(tx: Executor, row: Row): Promise<unknown> };
  /** A typed error the request answers instead, where the movement ended refused (a dispute's answer the processor would not take). */
  refusal?(row: Row): ApiError | undefined;
  /** The outcome of a movement located nowhere and resumed too late to send: nothing moved. */
  abandoned?: Update;
  /** The connectors that may hold it, in order: its fixed route, or the one connector it went to. */
  route(row: Row): readonly string[];
  /** The row as `status` reads it, completed from other rows before the call (a capture's or void's authorisation reference, where it was not recorded). */
  statusRow?(db: Executor, row: Row): Promise<Row>;
  /**
   * Declines sent on as new attempts (a payment's cascade, src/domain/payments/cascade.ts); unset: a
   * decline ends it. A kind that cascades numbers its attempts (`attemptNumber`): attempt n goes to
   * the processor as `<id>_<n>` (attemptReferenceOf).
   */
  cascade?: Cascade<Row, Request, Update>;
  /**
   * A route whose every connector was skipped (circuits open) reached nobody. A refund waits for
   * its one connector (`unknown`, sent again by the worker); the others fail, nothing having moved.
   */
  waitsWhenUnreached?: boolean;
}

/**
 * What a kind that cascades declines tells the engine between calls (saga.ts). Each step that
 * sends again first persists the new attempt (its number, the calls so far) in a short
 * transaction of its own, so a crash resumes at that attempt (docs/declines.md).
 *
 * Only a decline cascades, and only that of a movement whose row carries its cascade (`cascade`,
 * frozen when it was created): the engine reads both off the call and the row, so a movement
 * without one is never handed back to its resource between the calls.
 */
export interface Cascade<Row, Request, Update> {
  /**
   * After a decline: the next attempt (its row as persisted and its request), an outcome that ends
   * it without calling anyone, or undefined — the decline stands.
   */
  next(
    db: Db,
    rt: Runtime,
    ctx: RequestContext,
    row: Row,
    /** The request last sent (rebuilt from the row, for a resumed request: only when a next attempt needs it). */
    request: () => Request | Promise<Request>,
    execution: Execution<{ kind: string }>,
  ): Promise<{ row: Row; request: Request } | { update: Update } | undefined>;
}

// The core works on any kind; each resource keeps its own precise types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyKind = MovementKind<any, any, any, any>;

/** Whether `execution` is a decline that `row`'s cascade may send on (Cascade). */
export function mayCascade(kind: AnyKind, row: MovementRow, execution: Execution<{ kind: string }>): boolean {
  return kind.cascade !== undefined && execution.result.kind === 'declined' && execution.connector !== null && (row as { cascade?: unknown }).cascade != null;
}

/** Stored attempt records as the API shows them, keys in the documented order (jsonb keeps its own). */
export function attemptsView(stored: readonly Record<string, unknown>[]): Attempt[] {
  return (stored as unknown as Attempt[]).map((a) => ({
    connector: a.connector,
    outcome: a.outcome,
    error_code: a.error_code,
    // Attempts recorded before decline types existed have none.
    decline_type: a.decline_type ?? null,
    duration_ms: a.duration_ms,
    started_at: a.started_at,
  }));
}

/** The reference of a movement's attempt n: its public id for the first, `<id>_<n>` after (a payment's cascade). */
export function attemptReferenceOf(publicId: string, n: number): string {
  return n > 1 ? `${publicId}_${n}` : publicId;
}

/** The public id inside the reference of any of its attempts (a processor's webhook names the attempt). */
export function publicIdOfReference(reference: string): string {
  return reference.replace(/_[2-9]$/, '');
}

/** The processor's reference of a movement's current attempt: its public id, with the attempt's number where the kind cascades. */
export function referenceOf(kind: AnyKind, row: MovementRow): string {
  const id = toPublicId(kind.prefix, row.id);
  return kind.cascade ? attemptReferenceOf(id, (row as MovementRow & { attemptNumber: number }).attemptNumber) : id;
}

// The routes a descriptor names (`route`), read off the row by the engine.

/** A movement sent to the one connector holding its parent (a refund, a capture, a void, a dispute's answer). */
export const parentsConnector = (row: { connector: string }): string[] => [row.connector];

/** Its route as planned when it was created (a mandate, a payout, a card verification). */
export const plannedRoute = (row: { route: string[] }): string[] => row.route;

/** A movement whose declines cascade (a payment): its planned route for the first attempt, its cascade's for the others. */
export const attemptRoute = (row: { route: string[]; cascade: { route?: string[] } | null }): string[] => row.cascade?.route ?? row.route;

/** The fields every movement's view opens with, in the documented order. */
export function viewHead<O extends string, R extends { id: string; livemode: boolean; status: string }>(prefix: IdPrefix, object: O, row: R) {
  return { ...objectHead(prefix, object, row), status: row.status as R['status'] };
}

/** The opening fields of a movement of money: the head, then its amount and currency. */
export function moneyViewHead<O extends string, R extends { id: string; livemode: boolean; status: string; amount: number; currency: string }>(
  prefix: IdPrefix,
  object: O,
  row: R,
) {
  return { ...viewHead(prefix, object, row), amount: row.amount, currency: row.currency };
}

/** Where it went: the connector that took it and the processor's own id of it. */
export function connectorView<C extends string | null>(row: { connector: C; connectorReference: string | null }) {
  return { connector: row.connector, connector_reference: row.connectorReference };
}

/** …and the ones it closes with. */
export function viewTail(row: { metadata: Record<string, string>; version: number; createdAt: Date; updatedAt: Date }) {
  return { metadata: row.metadata, version: row.version, created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString() };
}

/**
 * The update for a movement sent without an answer whose processor still has no record of it once
 * overdue (the worker's `unbooked`): it fails, and nothing moved — `record` names what the
 * processor would hold ("the charge"), `nothing` what did not happen ("charged").
 */
export function unbookedFailure(connector: string, record: string, nothing: string) {
  return {
    kind: 'failed' as const,
    connector,
    connectorReference: null,
    failureCode: 'processing_error' as const,
    failureMessage: `The request to ${connector} got no answer and ${connector} has no record of ${record}; nothing was ${nothing}.`,
  };
}
