// The movement saga after its first phase has committed the object with its recovery point:
//
//   phase 2 — no transaction open: the route's connectors are called (calls.ts), our id being
//             the processor's idempotency key;
//   phase 3 — one transaction: the outcome is applied and the answer stored (apply.ts).
//
// A retry of the request after a crash between the phases finds the recovery point and resumes:
// a movement settled meanwhile answers as it stands; otherwise the route's connectors are asked
// whether one already holds it (adopted if so, the status check standing for the lost attempt),
// and it is sent only when none does and it is not too late to start — past that, the worker may
// be declaring it abandoned, so the request abandons it itself. Where the one connector that may
// hold it cannot be asked but replays sends (Adyen), the same request goes to it again, alone.
import type { CrashPoint } from '../config.js';
import type { Attempt } from '../connectors/router.js';
import { ApiError } from '../kernel/errors.js';
import type { Outcome, RequestContext } from '../kernel/context.js';
import type { Runtime } from '../runtime.js';
import type { Db } from '../storage/db.js';
import { finishRequest } from './apply.js';
import { askStatus, fromExecution, locate, replaySend, routeCall, type Execution, type Located } from './calls.js';
import { mayCascade, type AnyKind } from './kind.js';
import type { MovementRow } from './row.js';
import { planted } from '../kernel/plants.js';

/**
 * A fresh movement's check after its first phase and before its first call, given by its
 * admission or its one-statement path (engine.ts): an outcome that ends it without calling anyone (an off-session payment
 * past the networks' reattempt limits), or undefined.
 */
export type BeforeSending = (row: MovementRow) => Promise<unknown>;

/** Phase 3 in one statement (a one-statement path); undefined when it wrote nothing and the apply step must run. */
export type FinishAtOnce = (update: { kind: string; connector?: string | null }, attempts: Attempt[]) => Promise<Outcome | undefined>;

/**
 * Phases 2 and 3 for a request whose first phase has just committed `row`. A request's own first
 * phase (`fresh`) runs them between the crash points that tests and the simulation aim at.
 */
export async function sendAndFinish(
  db: Db,
  rt: Runtime,
  kind: AnyKind,
  ctx: RequestContext,
  row: MovementRow,
  request: unknown,
  opts: { fresh?: boolean; finishAtOnce?: FinishAtOnce; before?: BeforeSending } = {},
): Promise<Outcome> {
  if (opts.fresh) rt.crashPoint(`${kind.object}_created` as CrashPoint);
  const stopped = opts.before ? await opts.before(row) : undefined;
  if (stopped) return finishRequest(db, rt, kind, ctx, row.id, { update: stopped });
  const execution = await routeCall(rt.callsFor(ctx), kind, kind.route(row), request);
  if (opts.fresh) rt.crashPoint(`${kind.object}_connector_answered` as CrashPoint);
  return cascadeAndFinish(db, rt, kind, ctx, row, () => request, execution, opts.finishAtOnce);
}

/**
 * Phase 3 after a call, or first the cascade of a decline the kind sends on (a payment's,
 * src/domain/payments/cascade.ts): each next attempt persisted, then sent, until one stands.
 */
async function cascadeAndFinish(
  db: Db,
  rt: Runtime,
  kind: AnyKind,
  ctx: RequestContext,
  row: MovementRow,
  request: () => unknown,
  execution: Execution<{ kind: string }>,
  finishAtOnce?: FinishAtOnce,
): Promise<Outcome> {
  let current = row;
  for (let step = await nextAttempt(db, rt, kind, ctx, current, request, execution); step; step = await nextAttempt(db, rt, kind, ctx, current, request, execution)) {
    if ('update' in step) return finishRequest(db, rt, kind, ctx, row.id, { update: step.update });
    current = step.row;
    const sent = step.request;
    request = () => sent;
    rt.crashPoint('payment_attempt_persisted');
    execution = await routeCall(rt.callsFor(ctx), kind, kind.route(current), sent);
    rt.crashPoint('payment_attempt_answered');
  }
  const update = fromExecution<{ kind: string; connector?: string | null }>(kind, execution);
  // The one-statement finish expects the row as its first phase wrote it: a cascaded one takes the apply step.
  const done = current === row && finishAtOnce && (await finishAtOnce(update, execution.attempts));
  if (done) {
    // The one status change that bypasses the apply step (apply.ts counts the rest).
    rt.metrics.movement(kind.object, update.kind, update.connector ?? null);
    return done;
  }
  return finishRequest(db, rt, kind, ctx, row.id, { update, attempts: execution.attempts });
}

/** The cascade's next step after a decline that may cascade (kind.ts, mayCascade); undefined: the call's outcome stands. */
function nextAttempt(db: Db, rt: Runtime, kind: AnyKind, ctx: RequestContext, row: MovementRow, request: () => unknown, execution: Execution<{ kind: string }>) {
  return mayCascade(kind, row, execution) ? kind.cascade!.next(db, rt, ctx, row, request, execution) : undefined;
}

/**
 * How long after its creation a movement no connector has taken is presumed abandoned by a
 * crashed request: past the send deadline of a resumed retry and the time its whole route could
 * then take, plus a safety margin of one more route time and status-check interval.
 *
 * Failing a movement as abandoned is irreversible, while waiting longer only delays it. Without
 * the margin, the gap between the last moment a retry may start sending and the abandonment is
 * exactly the route time, which assumes the worker's clock equals the API's (created_at is
 * written by the API) and that a processor books a request before our call's deadline fires.
 */
export function abandonAfterMs(rt: Runtime, routeLength: number): number {
  const routeMs = routeLength * rt.config.connectorTimeoutMs;
  const margin = routeMs + rt.config.statusCheckIntervalMs;
  return sendDeadlineMs(rt) + routeMs + margin;
}

/**
 * When the worker first checks a movement resumed by sending (a refund, a capture): past the last
 * moment a retry of its request may send it, and that call's time; sent again then if the request
 * never got an answer.
 */
export function resendCheckAt(rt: Runtime, now: Date): Date {
  return new Date(now.getTime() + sendDeadlineMs(rt) + rt.config.connectorTimeoutMs);
}

/** A resumed request may start sending only this long after the movement was created. */
export function sendDeadlineMs(rt: Runtime): number {
  return rt.idempotencyLockTimeoutS * 1000 + rt.config.statusCheckIntervalMs;
}

export interface ResumeOptions {
  /** The abandoned outcome: the request ended before any connector took it (the kind's own). */
  abandoned: unknown;
  /** The request to send again, rebuilt from what is stored (and what the retry carries). */
  request: (row: MovementRow) => Promise<unknown>;
}

/** A retry of a request whose first phase committed `row`, for a kind resumed by locating it (the default). */
export async function resume(db: Db, rt: Runtime, kind: AnyKind, ctx: RequestContext, row: MovementRow, opts: ResumeOptions): Promise<Outcome> {
  // A connector's answer was recorded meanwhile (webhook, worker): finish with what is known.
  if (row.status !== 'pending' || row.connector !== null) return finishRequest(db, rt, kind, ctx, row.id, { update: undefined });
  const calls = rt.callsFor(ctx);
  const located = planted('resume-recharges') ? ({ found: false, certain: true } as Located<unknown>) : await locate(calls, kind, row, kind.route(row), db);
  if (located.found) {
    const found = { attempts: [located.attempt], connector: located.connector, result: located.state as { kind: string }, unreached: false };
    // A decline found where the crashed request left it goes on cascading from there.
    if (kind.cascade && found.result.kind === 'declined') return cascadeAndFinish(db, rt, kind, ctx, row, () => opts.request(row), found);
    return finishRequest(db, rt, kind, ctx, row.id, { update: kind.fromState(located.connector, located.state), attempts: [located.attempt] });
  }
  // Sent again only where it may already be, whatever the deadline: the worker never abandons such a movement.
  const replayed = located.replay === undefined ? undefined : await replaySend(calls, kind, located.replay, await opts.request(row));
  if (replayed) return finishRequest(db, rt, kind, ctx, row.id, { update: fromExecution(kind, replayed), attempts: replayed.attempts });
  if (!located.certain || located.replay !== undefined) {
    throw new ApiError('service_unavailable', {
      message: `A connector of this ${kind.object} cannot tell whether it already holds ${kind.heldAs ?? 'it'}; retry later with the same Idempotency-Key.`,
      headers: { 'retry-after': '5' },
    });
  }
  if (rt.now().getTime() - row.createdAt.getTime() >= sendDeadlineMs(rt)) {
    return finishRequest(db, rt, kind, ctx, row.id, { update: opts.abandoned });
  }
  return sendAndFinish(db, rt, kind, ctx, row, await opts.request(row));
}

/**
 * A retry of a request whose first phase committed `row`, for a kind resumed by sending again: its
 * one connector dedupes by our id (a refund), so sending again is always safe. A movement the
 * connector answered meanwhile (webhook, worker) finishes with what is known.
 */
export async function resumeBySending<Row extends MovementRow>(
  db: Db,
  rt: Runtime,
  kind: AnyKind,
  ctx: RequestContext,
  row: Row,
  request: (row: Row) => Promise<unknown>,
): Promise<Outcome> {
  if (row.status !== 'pending' || row.connectorReference !== null) return finishRequest(db, rt, kind, ctx, row.id, { update: undefined });
  if (kind.locatesBeforeSending) {
    const asked = await askStatus(rt.callsFor(ctx), kind, row.connector!, row, db);
    if (asked && asked.report.kind !== 'not_found') {
      return finishRequest(db, rt, kind, ctx, row.id, { update: kind.fromState(row.connector!, asked.report), attempts: [asked.attempt] });
    }
  }
  return sendAndFinish(db, rt, kind, ctx, row, await request(row));
}
