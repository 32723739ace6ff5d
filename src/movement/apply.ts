// Phase 3 and every later report: the one way an outcome reaches a movement, whoever learnt it —
// the request that created it, a resumed request, a refresh, the worker's status check, the
// processor's webhook or a test helper. Each locks the row and applies the report by the kind's
// rules (report.ts: its transition table and effects) in one transaction, so a late or repeated report is
// harmless and nothing is ever applied twice.
import type { Attempt } from '../connectors/router.js';
import type { Outcome, RequestContext } from '../kernel/context.js';
import { respond } from '../idempotency/store.js';
import type { Runtime } from '../runtime.js';
import type { Db, Executor } from '../storage/db.js';
import { selectOwnRow } from '../storage/tenant.js';
import type { AnyKind } from './kind.js';
import type { MovementRow, MovementTable } from './row.js';
import { applyReport, type ReportedUpdate } from './report.js';
import { viewIn } from './transition.js';

/** Locks a movement's row FOR UPDATE, scoped by account and mode (a request never locks the other mode's row). */
export function lockRow<Row>(tx: Executor, table: MovementTable, accountId: string, livemode: boolean, uuid: string): Promise<Row | undefined> {
  return selectOwnRow(tx, { accountId, livemode }, { table }, uuid, true) as Promise<Row | undefined>;
}

/** Runs `work` in the caller's transaction, or in a new one. */
export function inTransaction<T>(db: Db, tx: Executor | undefined, work: (tx: Executor) => Promise<T>): Promise<T> {
  return tx ? work(tx) : db.transaction(work);
}

export interface ApplyInput {
  /** Undefined: nothing new is known (a resumed request whose movement was settled meanwhile). */
  update: unknown;
  attempts?: Attempt[];
  /** Applies only if the locked row still passes (e.g. still pending at the connector seen when checked). */
  unless?: (row: MovementRow) => boolean;
}

/**
 * Locks the movement and applies `update`; the row as it now stands (undefined when it does not
 * exist). A change of status is counted in the metrics (payments_total, …) once its transaction
 * has committed — or, in a caller's transaction, once the apply step is done.
 */
export async function applyUpdate<Row extends MovementRow>(
  db: Db,
  rt: Runtime,
  kind: AnyKind,
  ctx: RequestContext,
  uuid: string,
  input: ApplyInput,
  tx?: Executor,
): Promise<Row | undefined> {
  let moved: Row | undefined;
  const after = await inTransaction(db, tx, async (t) => {
    const row = await lockRow<Row>(t, kind.rules.table, ctx.accountId, ctx.livemode, uuid);
    if (!row || input.update === undefined || input.unless?.(row)) return row;
    const applied = await applyReport<Row, ReportedUpdate>(t, ctx, kind.rules, row, input.update as ReportedUpdate, input.attempts ?? [], rt);
    if (applied.status !== row.status) moved = applied;
    return applied;
  });
  if (moved) rt.metrics.movement(kind.object, moved.status, moved.connector);
  return after;
}

/** A connector's report of the movement's state; another connector's movement is not its to settle. */
export async function applyState<Row extends MovementRow>(
  db: Db,
  rt: Runtime,
  kind: AnyKind,
  ctx: RequestContext,
  uuid: string,
  connector: string,
  state: { kind: string },
  opts: { attempts?: Attempt[]; tx?: Executor; unless?: (row: MovementRow) => boolean } = {},
): Promise<Row | undefined> {
  return applyUpdate<Row>(
    db,
    rt,
    kind,
    ctx,
    uuid,
    { update: kind.fromState(connector, state), attempts: opts.attempts, unless: (row) => (row.connector !== null && row.connector !== connector) || opts.unless?.(row) === true },
    opts.tx,
  );
}

/** Phase 3 of a request: the outcome and the stored answer on its Idempotency-Key, in one transaction. */
export async function finishRequest(db: Db, rt: Runtime, kind: AnyKind, ctx: RequestContext, uuid: string, input: ApplyInput, status = 201): Promise<Outcome> {
  return db.transaction(async (tx) => {
    const row = await applyUpdate(db, rt, kind, ctx, uuid, input, tx);
    if (!row) throw new Error(`${kind.object} ${uuid} vanished between phases`);
    const refused = kind.refusal?.(row);
    if (refused) return respond(tx, ctx, refused.status, refused.body(ctx.requestId));
    if (kind.answer) return respond(tx, ctx, kind.answer.status, await kind.answer.body(tx, row));
    return respond(tx, ctx, status, await viewIn(tx, kind.rules, row));
  });
}
