// The worker's part of every movement. claimDue takes the rows whose check time has come, with
// FOR UPDATE SKIP LOCKED so that workers in any number of processes split them, and pushes the
// time forward as a lease in the same short transaction. checkMovement then asks the processor
// for the truth, outside any transaction, and applies it like any other report — how a movement
// whose call timed out learns its outcome when no webhook comes, and how one a crashed request
// left behind is found (adopted), sent again, or abandoned.
import { and, asc, eq, inArray, lte, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { systemContext } from '../events/service.js';
import type { Runtime } from '../runtime.js';
import type { Db, Executor } from '../storage/db.js';
import { applyState, applyUpdate } from './apply.js';
import { askStatus, fromExecution, locate, replaySend, routeCall } from './calls.js';
import type { AnyKind } from './kind.js';
import type { MovementRow, MovementTable } from './row.js';
import { abandonAfterMs } from './saga.js';

export interface ClaimQuery<Row> {
  table: MovementTable;
  /** The column holding the row's check (or action) time. */
  due: 'nextStatusCheckAt' | 'nextActionAt';
  status: string | readonly string[];
  now: Date;
  batch: number;
  /** Just this row, whatever its time (a submission right after create). */
  only?: { accountId: string; id: string };
  /** The time the row is due again (its lease): written to `due` in the claim's transaction. */
  leaseUntil?: (row: Row) => Date;
  /** Or takes the claimed row inside the claim's transaction some other way (moves it on). */
  take?: (tx: Executor, row: Row) => Promise<Row>;
}

export async function claimDue<Row>(db: Db, q: ClaimQuery<Row>): Promise<Row[]> {
  const { table } = q;
  const dueAt = (table as unknown as Record<string, PgColumn>)[q.due]!;
  const when: SQL | undefined = q.only ? and(eq(table.accountId, q.only.accountId), eq(table.id, q.only.id)) : lte(dueAt, q.now);
  return db.transaction(async (tx) => {
    const due = (await tx
      .select()
      .from(table)
      .where(and(typeof q.status === 'string' ? eq(table.status, q.status) : inArray(table.status, [...q.status]), when))
      .orderBy(asc(dueAt))
      .limit(q.batch)
      .for('update', { skipLocked: true })) as Row[];
    const taken: Row[] = [];
    for (const row of due) {
      if (q.take) taken.push(await q.take(tx, row));
      else {
        const { accountId, id } = row as MovementRow;
        await tx
          .update(table)
          .set({ [q.due]: q.leaseUntil!(row) } as never)
          .where(and(eq(table.accountId, accountId), eq(table.id, id)));
        taken.push(row);
      }
    }
    return taken;
  });
}

/**
 * Claims movements of `table` in `statuses` (pending, or also waiting for the customer) whose
 * next_status_check_at has come, the next check one interval on as their lease.
 */
export function claimPendingChecks<Row>(db: Db, rt: Runtime, table: MovementTable, batch: number, statuses: readonly string[] = ['pending']): Promise<Row[]> {
  const now = rt.now();
  const next = new Date(now.getTime() + rt.config.statusCheckIntervalMs);
  return claimDue<Row>(db, { table, due: 'nextStatusCheckAt', status: statuses, now, batch, leaseUntil: () => next });
}

export interface CheckPolicy {
  /** Overdue: its request is certainly over, and any retry past its deadline. */
  overdue: boolean;
  /** Found at no connector of its route, and everyone could tell: abandon it once overdue, or send it again. */
  whenNowhere: 'abandon' | 'send';
  /** Its connector has no record of it: fail it once overdue (unbooked), send it again, or keep waiting. */
  whenUnknown: 'fail' | 'send' | 'wait';
  abandoned?: unknown;
  unbooked?: (connector: string) => unknown;
  /** The request to send again, rebuilt from what is stored. */
  request?: (row: MovementRow) => Promise<unknown>;
  /**
   * Past its deadline for something outside the processor (a customer action): applied when the
   * processor answered and the check left the movement where it was.
   */
  expired?: unknown;
}

/**
 * The check of a movement the worker never sends again (a mandate's set-up, a card verification:
 * its request held what is not stored): adopted where a connector holds it; once its request is
 * certainly over, abandoned where none does, and failed where its connector has no record of it.
 */
export function checkNeverResent(
  db: Db,
  rt: Runtime,
  kind: AnyKind,
  row: MovementRow & { route: string[] },
  outcomes: { unbooked: (connector: string) => unknown; abandoned: unknown },
): Promise<void> {
  const overdue = rt.now().getTime() - row.createdAt.getTime() >= abandonAfterMs(rt, row.route.length);
  return checkMovement(db, rt, kind, row, { overdue, whenNowhere: 'abandon', whenUnknown: 'fail', ...outcomes });
}

/** Verifies one claimed movement with its processor(s) and applies what they say. */
export async function checkMovement(db: Db, rt: Runtime, kind: AnyKind, row: MovementRow, policy: CheckPolicy): Promise<void> {
  const ctx = systemContext(row.accountId, row.livemode);
  const calls = rt.callsFor(ctx);
  // Applies only if the movement is still where the check found it: a report meanwhile wins.
  const unlessMoved = (locked: MovementRow) => locked.status !== row.status || locked.connector !== row.connector;
  const send = async (plan: readonly string[]) => {
    const execution = await routeCall(calls, kind, plan, await policy.request!(row));
    await applyUpdate(db, rt, kind, ctx, row.id, { update: fromExecution(kind, execution), attempts: execution.attempts });
  };
  if (row.connector === null) {
    const located = await locate(calls, kind, row, kind.route(row), db);
    // The check that found it stands for the attempt the crashed request could not record.
    if (located.found) await applyState(db, rt, kind, ctx, row.id, located.connector, located.state, { attempts: [located.attempt] });
    else if (located.replay !== undefined) {
      // It may be there: sent again there alone, when the request can be rebuilt (a card payment
      // from the card it kept in the vault; one that kept none waits for a webhook or its retry). Never abandoned.
      const replayed = policy.request ? await replaySend(calls, kind, located.replay, await policy.request(row)) : undefined;
      if (replayed) await applyUpdate(db, rt, kind, ctx, row.id, { update: fromExecution(kind, replayed), attempts: replayed.attempts, unless: unlessMoved });
    } else if (!located.certain) return;
    else if (policy.whenNowhere === 'send') await send(kind.route(row));
    else if (policy.overdue) await applyUpdate(db, rt, kind, ctx, row.id, { update: policy.abandoned, unless: unlessMoved });
    return;
  }
  const connector = row.connector;
  const asked = await askStatus(calls, kind, connector, row, db);
  if (!asked) return;
  if (asked.report.kind !== 'not_found') await applyState(db, rt, kind, ctx, row.id, connector, asked.report);
  // This was the last check: the processor's answer, if final, has just won.
  if (policy.expired !== undefined) await applyUpdate(db, rt, kind, ctx, row.id, { update: policy.expired, unless: unlessMoved });
  if (asked.report.kind !== 'not_found' || policy.expired !== undefined) return;
  // The request went out (a timeout) but the processor never booked it.
  if (policy.whenUnknown === 'send') await send([connector]);
  // Until overdue it may still be on its way; after that, waiting longer would leave it pending forever.
  else if (policy.whenUnknown === 'fail' && policy.overdue) await applyUpdate(db, rt, kind, ctx, row.id, { update: policy.unbooked!(connector), unless: unlessMoved });
}

/** Checks claimed rows side by side: one processor that does not answer must not hold up the others. */
export async function checkAll<Row>(rows: Row[], check: (row: Row) => Promise<unknown>): Promise<void> {
  const settled = await Promise.allSettled(rows.map(check));
  const failures = settled.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown);
  if (failures.length) throw new AggregateError(failures, `${failures.length} checks failed; they are retried at their next check time`);
}
