// The one entry point of a request that starts a money movement (a payment, a refund, a mandate's
// set-up; the captures, voids and verifications to come): every phase is run here, and a resource
// gives only its descriptor (kind.ts: connector mapping, transitions, view) and its admit rule.
//
//   phase 1 — one transaction: the resource's admit rule locks the parent, admits the movement
//             through the parent's state table and inserts the pending row with whatever moves
//             with it (an order to processing, a reservation in the ledger); then the movement's
//             `<object>.created` event and the recovery point `<object>_created:<id>` on the
//             request's Idempotency-Key;
//   phase 2 — no transaction open: the route's connectors, our id as the processor's idempotency
//             key (calls.ts);
//   phase 3 — one transaction: the outcome applied by the kind's rules (report.ts) and the stored
//             answer (apply.ts).
//
// A retry of the request whose key holds the recovery point resumes instead (saga.ts). Where a
// resource also has a one-statement path for its most common case, the engine tries it first and
// falls back to the general path whenever that path wrote nothing.
import { claimDeferred, setRecoveryPoint } from '../idempotency/store.js';
import type { Outcome, RequestContext } from '../kernel/context.js';
import { and, eq } from 'drizzle-orm';
import { recordEvent } from '../events/service.js';
import type { EventType } from '../events/types.js';
import type { Runtime } from '../runtime.js';
import type { Db, Executor } from '../storage/db.js';
import type { AnyKind } from './kind.js';
import type { MovementRow } from './row.js';
import { resume, resumeBySending, sendAndFinish, type BeforeSending, type FinishAtOnce } from './saga.js';

/** The recovery point a movement's first phase leaves on the request's key. */
export const recoveryPointOf = (kind: Pick<AnyKind, 'object'>, uuid: string) => `${kind.object}_created:${uuid}`;

/** The event a movement's first phase writes (also in the one-statement payment's SQL). */
export const createdEventOf = (kind: Pick<AnyKind, 'object'>) => `${kind.object}.created` as EventType;

/** The movement a retried request's key says its first phase committed, if any. */
function committedMovement(kind: AnyKind, ctx: RequestContext): string | undefined {
  const point = ctx.idempotency?.recoveryPoint;
  const prefix = recoveryPointOf(kind, '');
  return point?.startsWith(prefix) ? point.slice(prefix.length) : undefined;
}

/** What the fresh path of a new movement does in its first phase and sends in its second. */
export interface Admission<Row extends MovementRow, Request> {
  /**
   * The resource's admit rule, inside phase 1's transaction: lock the parent, admit through its
   * state table (a typed error otherwise), insert the pending row and what moves with it.
   * Undefined when the parent does not exist.
   */
  admit(tx: Executor, now: Date): Promise<Row | undefined>;
  /** The typed error for a parent that does not exist (or is another tenant's); a movement without a parent has none. */
  missing?(): Promise<Error>;
  /** What phase 2 sends (it may hold what is kept in memory only: a card, an account number). */
  request(row: Row): Request | Promise<Request>;
  /** A check between phase 1 and the first call, where the admission needs one (saga.ts, BeforeSending). */
  beforeSending?: BeforeSending;
}

/** A one-statement path: phase 1 (claiming the deferred key) and, when it can, phase 3 as single statements. */
export interface OneStatement<Row extends MovementRow, Request> {
  row: Row;
  request: Request;
  /** As an admission's beforeSending: run after phase 1, before the call. */
  before?: BeforeSending;
  finish: FinishAtOnce;
}

/**
 * A request's new movement as its resource's admit rule describes it: its kind (the descriptor:
 * calls, transitions with their effects, view) and how it is admitted, sent and resumed. A route
 * hands it to `runMovement`, which runs everything else.
 */
export interface NewMovement<Row extends MovementRow, Request> {
  kind: AnyKind;
  /** Reads and checks before phase 1 (routing, a mandate), then the admission; run only when nothing was committed yet. */
  plan(): Promise<Admission<Row, Request>>;
  /** What a resumed retry sends again, rebuilt from the stored row and what the retry carries. */
  resend(row: Row): Promise<Request>;
  /** The one-statement path, tried first; undefined when it does not apply or wrote nothing. */
  oneStatement?(): Promise<OneStatement<Row, Request> | undefined>;
}

/** Runs a request that starts a movement, all three phases, and answers it. */
export async function runMovement<Row extends MovementRow, Request>(db: Db, rt: Runtime, ctx: RequestContext, movement: NewMovement<Row, Request>): Promise<Outcome> {
  const { kind } = movement;
  const fast = await movement.oneStatement?.();
  if (fast) return sendAndFinish(db, rt, kind, ctx, fast.row, fast.request, { fresh: true, finishAtOnce: fast.finish, before: fast.before });
  const replay = await claimDeferred(ctx);
  if (replay) return replay;
  const committed = committedMovement(kind, ctx);
  if (committed !== undefined) return resumeMovement(db, rt, kind, ctx, committed, movement.resend);

  const admission = await movement.plan();
  const now = rt.now();
  const row = await db.transaction(async (tx) => {
    const admitted = await admission.admit(tx, now);
    if (!admitted) return undefined;
    const created = kind.createdEvent === undefined ? createdEventOf(kind) : kind.createdEvent;
    if (created) await recordEvent(tx, ctx, created, kind.rules.view(admitted) as { id: string }, now);
    await setRecoveryPoint(tx, ctx, recoveryPointOf(kind, admitted.id));
    return admitted;
  });
  if (!row) throw admission.missing ? await admission.missing() : new Error(`the ${kind.object}'s admit rule admitted nothing`);
  return sendAndFinish(db, rt, kind, ctx, row, await admission.request(row), { fresh: true, before: admission.beforeSending });
}

async function resumeMovement<Row extends MovementRow, Request>(
  db: Db,
  rt: Runtime,
  kind: AnyKind,
  ctx: RequestContext,
  uuid: string,
  resend: (row: Row) => Promise<Request>,
): Promise<Outcome> {
  const { table } = kind.rules;
  const [row] = (await db
    .select()
    .from(table)
    .where(and(eq(table.accountId, ctx.accountId), eq(table.livemode, ctx.livemode), eq(table.id, uuid)))) as Row[];
  if (!row) throw new Error(`the recovery point names a ${kind.object} that does not exist`);
  if (kind.resumeBy === 'sending') return resumeBySending(db, rt, kind, ctx, row, resend);
  return resume(db, rt, kind, ctx, row, { abandoned: kind.abandoned, request: resend as (row: MovementRow) => Promise<unknown> });
}
