// The event log, written as a transactional outbox: an event is inserted by the same transaction
// as the state change it reports, so no change goes unannounced and no event announces a change
// that rolled back. The delivery worker claims undispatched rows with FOR UPDATE SKIP LOCKED.
import { inArray, like, type SQL } from 'drizzle-orm';
import type { Db, Executor } from '../storage/db.js';
import { events } from '../storage/schema.js';
import { insertRow } from '../storage/prepared.js';
import { newId, toPublicId } from '../kernel/ids.js';
import type { RequestContext } from '../kernel/context.js';
import type { ListParams, Page } from '../kernel/pagination.js';
import { listPage, loadOne, type Resource } from '../storage/tenant.js';
import type { EventType } from './types.js';
import { planted } from '../kernel/plants.js';

export interface EventView {
  id: string;
  object: 'event';
  type: EventType;
  livemode: boolean;
  created_at: string;
  data: { object: Record<string, unknown> };
  request: { id: string | null; idempotency_key: string | null };
}

type EventRow = typeof events.$inferSelect;

export const EVENTS: Resource<typeof events> = { table: events, prefix: 'evt', name: 'event' };

export function eventView(row: EventRow): EventView {
  return {
    id: toPublicId('evt', row.id),
    object: 'event',
    // Rows are written only by recordEvent and the fast paths, both held to the catalogue.
    type: row.type as EventType,
    livemode: row.livemode,
    created_at: row.createdAt.toISOString(),
    data: row.data,
    request: { id: row.requestId, idempotency_key: row.idempotencyKey },
  };
}

/** A request context for changes the service makes on its own (expiry, asynchronous outcomes). */
export function systemContext(accountId: string, livemode: boolean): RequestContext {
  return { accountId, livemode, requestId: '' };
}

export async function recordEvent(
  tx: Executor,
  ctx: RequestContext,
  type: EventType,
  snapshot: { id: string } & Record<string, unknown>,
  at: Date,
): Promise<void> {
  const write = () =>
    insertRow(tx, events, {
      accountId: ctx.accountId,
      id: newId('evt').uuid,
      livemode: ctx.livemode,
      type,
      objectId: snapshot.id,
      data: { object: snapshot },
      requestId: ctx.requestId || null,
      idempotencyKey: ctx.idempotency?.key ?? null,
      createdAt: at,
    }, false);
  // The planted defect (sim/): the event is written on its own, not as part of the change it reports.
  if (planted('event-outside-transaction')) return void setImmediate(() => void write().catch(() => undefined));
  await write();
}

export async function retrieveEvent(db: Db, ctx: RequestContext, id: string): Promise<EventView> {
  return eventView(await loadOne(db, ctx, EVENTS, id));
}

/** `payment.*` matches every payment event; `*` (or no filter) matches all. */
function typeFilter(pattern: string | undefined): SQL | undefined {
  if (!pattern || pattern === '*') return undefined;
  const escaped = pattern.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
  return like(events.type, escaped);
}

/** `objects`: only the events of these objects (public ids), e.g. a payment and its refunds. */
export async function listEvents(db: Db, ctx: RequestContext, params: ListParams & { type?: string; objects?: string[] }): Promise<Page<EventView>> {
  const objectFilter = params.objects ? inArray(events.objectId, params.objects.length ? params.objects : ['']) : undefined;
  return listPage(db, ctx, EVENTS, params, [typeFilter(params.type), objectFilter], eventView);
}
