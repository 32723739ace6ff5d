// How a movement's row changes, written once. A resource gives its transition table (which
// status may follow which) and the effects of reaching a status — the order paid or reopened, a
// ledger entry, a reservation released, a mandate's last debit — and `moveTo` does the rest in the
// caller's transaction: the table's check, the row with its version bumped, the effects, then the
// object's event. `save` writes a change that moves no status (a connector's acceptance, attempt
// records), `withAttempts` appends the calls a report comes with.
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Attempt } from '../connectors/router.js';
import type { RequestContext } from '../kernel/context.js';
import type { StateMachine } from '../kernel/state-machine.js';
import { recordEvent } from '../events/service.js';
import type { EventObject, EventStatus, EventType } from '../events/types.js';
import type { Executor } from '../storage/db.js';
import type { MovementRow, MovementTable } from './row.js';
import { updateOwnRow } from '../storage/tenant.js';

/**
 * What moves with a status change: `row` as it now stands, `before` as it stood (a charge-back is
 * a failure of a success). An effect that changes the row itself answers it as it then stands,
 * so that the event shows it (a payment naming the card it saved).
 */
export type Effect<Row> = (tx: Executor, ctx: RequestContext, row: Row, now: Date, before: Row) => Promise<void | Row>;

/** The statuses of `Status` that have an event `${O}.${status}` in the catalogue: what `moveTo` may reach. */
export type EventfulStatus<O extends EventObject, Status extends string> = Extract<Status, EventStatus<O>>;

export interface Transitions<Row extends MovementRow, Status extends string, O extends EventObject> {
  object: O;
  table: MovementTable & { version: PgColumn };
  states: StateMachine<Status>;
  view(row: Row): { id: string } & Record<string, unknown>;
  /** The view where it shows other rows as well (a payment lists its captures), read in the caller's transaction; `view` otherwise. */
  viewIn?(tx: Executor, row: Row): Promise<{ id: string } & Record<string, unknown>>;
  /** What else moves when the row reaches a status, in the same transaction, before its event. */
  effects?: Partial<Record<Status, Effect<Row>>>;
  /**
   * The event a move to a status writes when it is not `<object>.<status>` (a payment's
   * requires_capture: payment.authorized); null: none (a payment method is announced once, when attached).
   */
  events?: Partial<Record<Status, EventType | null>>;
}

/** Writes `set` on the locked row, a new version unless told it is no new fact (a check rescheduled); no status change, no event. */
export async function save<Row extends MovementRow>(
  tx: Executor,
  t: Transitions<Row, string, EventObject>,
  row: Row,
  now: Date,
  set: Partial<Row>,
  opts: { version: boolean } = { version: true },
): Promise<Row> {
  const updated = await updateOwnRow(tx, t.table, { accountId: row.accountId, id: row.id }, opts.version ? { ...set, updatedAt: now } : set, opts.version);
  return updated as unknown as Row;
}

/** Moves the locked row to `to` as the table allows (a typed invalid_state otherwise), with its effects and event. */
export async function moveTo<Row extends MovementRow, Status extends string, O extends EventObject>(
  tx: Executor,
  t: Transitions<Row, Status, O>,
  ctx: RequestContext,
  row: Row,
  to: EventfulStatus<O, Status>,
  operation: string,
  now: Date,
  set: Partial<Row> = {},
): Promise<Row> {
  t.states.assert(row.status as Status, to, operation);
  const saved = await save(tx, t as Transitions<Row, string, O>, row, now, { ...set, status: to } as Partial<Row>);
  const after = (await t.effects?.[to]?.(tx, ctx, saved, now, row)) ?? saved;
  const event = t.events && to in t.events ? t.events[to] : statusEvent<O, Status>(t.object, to);
  if (event) await recordEvent(tx, ctx, event, await viewIn(tx, t, after), now);
  return after;
}

/** The row as the API shows it now, with whatever other rows its view lists. */
export function viewIn<Row extends MovementRow>(tx: Executor, t: Pick<Transitions<Row, string, EventObject>, 'view' | 'viewIn'>, row: Row) {
  return t.viewIn ? t.viewIn(tx, row) : Promise.resolve(t.view(row));
}

/** The event a move to `to` writes (also in the one-statement payment's SQL, src/domain/payments/one-statement.ts). */
export function statusEvent<O extends EventObject, Status extends string>(object: O, to: EventfulStatus<O, Status>): EventType {
  // `to` is typed so that this name is in the catalogue; the compiler cannot follow a generic template.
  return `${object}.${to}` as EventType;
}

/** The row's attempt records followed by `attempts`. */
export function withAttempts(row: { attempts: Record<string, unknown>[] }, attempts: Attempt[]): Record<string, unknown>[] {
  return attempts.length ? [...row.attempts, ...(attempts as unknown as Record<string, unknown>[])] : row.attempts;
}

/** A movement's amount as the ledger books it (journal.ts), sourced to the movement. */
export function ledgerEntry<T extends 'payment' | 'refund' | 'payout'>(
  type: T,
  row: { accountId: string; livemode: boolean; currency: string; amount: number; id: string },
  now: Date,
) {
  return { accountId: row.accountId, livemode: row.livemode, currency: row.currency, amount: row.amount, source: { type, id: row.id }, createdAt: now };
}

/** The effect of posting the movement's amount to the ledger with `post` (a journal.ts entry). */
export function booking<Row extends { accountId: string; livemode: boolean; currency: string; amount: number; id: string }>(
  post: (tx: Executor, entry: ReturnType<typeof ledgerEntry>) => Promise<unknown>,
  type: 'payment' | 'refund' | 'payout',
): Effect<Row> {
  return async (tx, _ctx, row, now) => {
    await post(tx, ledgerEntry(type, row, now));
  };
}
