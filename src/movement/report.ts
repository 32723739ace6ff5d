// How a report of a movement's state changes its row, written once for every kind. A resource
// hands the engine data — its transition table with effects (transition.ts) and the few facts
// below about its reports — and this step does the rest in the caller's transaction, with the row
// locked:
//
//   - a report the table does not allow from where the row stands (late, repeated, about another
//     connector's movement) keeps the outcome and only records the calls it came with;
//   - a report that the processor is still working on it (`working`: pending, a payout's
//     processing) is news only the first time (the processor's acceptance, with its event) or when
//     it brings a reference; otherwise only the next check moves;
//   - any other report moves the row along the table, through each status its path names, with
//     the columns every movement has, the status's own columns, its effects and its event.
import type { Attempt } from '../connectors/router.js';
import type { RequestContext } from '../kernel/context.js';
import { recordEvent } from '../events/service.js';
import type { EventObject } from '../events/types.js';
import type { StateMachine } from '../kernel/state-machine.js';
import type { Runtime } from '../runtime.js';
import type { Executor } from '../storage/db.js';
import type { MovementRow } from './row.js';
import { moveTo, save, statusEvent, viewIn, withAttempts, type Transitions } from './transition.js';

/** What any report carries, whatever its kind. */
export interface ReportedUpdate {
  kind: string;
  connector?: string | null;
  connectorReference?: string | null;
  failureCode?: string;
  failureMessage?: string;
}

export type ReportRuntime = Pick<Runtime, 'now' | 'config' | 'publicUrl'>;

export interface ReportRules<Row extends MovementRow, Status extends string, O extends EventObject, G extends string, U extends ReportedUpdate>
  extends Transitions<Row, Status, O> {
  states: StateMachine<Status, G>;
  /** The statuses in which reports still move it (the processor's outcome is to come), by the table's group. */
  open: G;
  /** The status (and report) that says the processor holds it and is still working on it. */
  working: Status;
  /** What makes a working report the processor's first acceptance: the row had no connector yet, no reference yet, or either. */
  firstWhen: 'no_connector' | 'no_reference' | 'either';
  /** Whether the first acceptance writes its `<object>.<working>` event (a payout's was written when it was sent). */
  acceptanceEvent: boolean;
  /** The column holding the row's next check. */
  check: 'nextStatusCheckAt' | 'nextActionAt';
  /** Reports that still move a row past its open statuses, from the statuses of the named group (a charge-back of a success). */
  late?: Partial<Record<string, G>>;
  /** Reports that reach another status than their name, or several in turn (a payout paid then returned). */
  reaches?: Partial<Record<string, readonly Status[]>>;
  /**
   * How a report lands on this kind's row, decided from the row and the report alone (no reads,
   * no writes): the report as it counts where the row stands (3-D Secure asked with no way back to
   * the customer is a failure) and the columns the status it ends in writes besides those every
   * movement has. Without it a report counts as sent and writes only those.
   */
  settle?(row: Row, update: U, now: Date, rt: ReportRuntime): Settled<Row, U>;
}

/** What a kind's `settle` decides: the report as it counts, and the columns of the status it ends in. */
export interface Settled<Row, U> {
  update: U;
  set?: Partial<Row>;
}

/**
 * The report facts of an internal movement sent to its parent's one connector (a void, a
 * dispute's answer): created with that connector, taken once it has a reference there, and
 * writing no event of its own (its parent's say it all).
 */
export const SENT_TO_PARENTS_CONNECTOR = {
  open: 'awaiting',
  working: 'pending',
  firstWhen: 'no_reference',
  acceptanceEvent: false,
  check: 'nextStatusCheckAt',
  events: { pending: null, succeeded: null, failed: null },
} as const;

// The engine works on any kind's rules; each resource keeps its own precise types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRules = ReportRules<any, any, any, any, any>;

type Row = MovementRow & { attempts?: Record<string, unknown>[] };

/** Applies `update` to the locked `row` by the kind's rules; the row as it now stands. */
export function applyReport<R extends MovementRow, U extends ReportedUpdate>(
  tx: Executor,
  ctx: RequestContext,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  rules: ReportRules<R, any, any, any, U>,
  row: R,
  update: U,
  attempts: Attempt[],
  rt: ReportRuntime,
): Promise<R> {
  return apply(tx, ctx, rules as AnyRules, row, update, attempts, rt) as Promise<R>;
}

async function apply(tx: Executor, ctx: RequestContext, t: AnyRules, row: Row, reported: ReportedUpdate, attempts: Attempt[], rt: ReportRuntime): Promise<Row> {
  const now = rt.now();
  const { update, set } = (t.settle?.(row, reported, now, rt) ?? { update: reported }) as Settled<Row, ReportedUpdate>;
  const recorded = 'attempts' in row && attempts.length ? { attempts: withAttempts(row as { attempts: Record<string, unknown>[] }, attempts) } : {};
  const keep = () => (recorded.attempts ? save(tx, t, row, now, recorded) : Promise.resolve(row));
  // Another connector's movement is not its to settle.
  if (row.connector !== null && update.connector && row.connector !== update.connector) return row;
  const taken = { connector: update.connector ?? row.connector, connectorReference: update.connectorReference ?? row.connectorReference, ...recorded };

  if (update.kind === t.working) {
    if (row.status !== t.working) return keep();
    const first =
      (t.firstWhen !== 'no_reference' && row.connector === null) ||
      (t.firstWhen !== 'no_connector' && row.connectorReference === null && update.connectorReference != null);
    const newReference = update.connectorReference != null && update.connectorReference !== row.connectorReference;
    const set = { ...taken, [t.check]: new Date(now.getTime() + rt.config.statusCheckIntervalMs) };
    // No new fact: only the next check moves, so no new version.
    if (!first && !newReference && !recorded.attempts) return save(tx, t, row, now, set, { version: false });
    const updated = await save(tx, t, row, now, set);
    if (first && t.acceptanceEvent) await recordEvent(tx, ctx, statusEvent(t.object, t.working as never), await viewIn(tx, t, updated), now);
    return updated;
  }

  const lateFrom = t.late?.[update.kind];
  if (!t.states.is(row.status, t.open) && !(lateFrom !== undefined && t.states.is(row.status, lateFrom))) return keep();
  const path = (t.reaches?.[update.kind] ?? [update.kind]).filter((to) => to !== row.status);
  if (path.length === 0 || !t.states.can(row.status, path[0])) return keep();
  let current = row;
  for (const [i, to] of path.entries()) {
    // A failure belongs to the status the report ends in, not to the ones it passes through.
    const last = i === path.length - 1;
    current = await moveTo(tx, t, ctx, current, to as never, `report ${update.kind}`, now, {
      ...taken,
      failureCode: (last && update.failureCode) || null,
      failureMessage: (last && update.failureMessage) || null,
      [t.check]: null,
      ...(last ? set : undefined),
    } as never);
  }
  return current;
}
