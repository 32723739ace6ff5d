// The event log, written as a transactional outbox: an event is inserted by the same transaction
// as the state change it reports, so no change goes unannounced and no event announces a change
// that rolled back. The delivery worker claims undispatched rows with FOR UPDATE SKIP LOCKED.
import { and, eq, like, type SQL } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { events } from '../../storage/schema.js';
import { newId, parseId, toPublicId } from '../../kernel/ids.js';
import type { RequestContext } from '../../kernel/context.js';
import { planPage, toPage, type ListParams, type Page } from '../../kernel/pagination.js';
import { notFound } from '../../kernel/lookup.js';

export interface EventView {
  id: string;
  object: 'event';
  type: string;
  livemode: boolean;
  created_at: string;
  data: { object: Record<string, unknown> };
  request: { id: string | null; idempotency_key: string | null };
}

type EventRow = typeof events.$inferSelect;

export function eventView(row: EventRow): EventView {
  return {
    id: toPublicId('evt', row.id),
    object: 'event',
    type: row.type,
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
  type: string,
  snapshot: { id: string } & Record<string, unknown>,
  at: Date,
): Promise<void> {
  await tx.insert(events).values({
    accountId: ctx.accountId,
    id: newId('evt').uuid,
    livemode: ctx.livemode,
    type,
    objectId: snapshot.id,
    data: { object: snapshot },
    requestId: ctx.requestId || null,
    idempotencyKey: ctx.idempotency?.key ?? null,
    createdAt: at,
  });
}

export async function retrieveEvent(db: Db, ctx: RequestContext, id: string): Promise<EventView> {
  const uuid = parseId('evt', id);
  if (uuid) {
    const [row] = await db
      .select()
      .from(events)
      .where(and(eq(events.accountId, ctx.accountId), eq(events.livemode, ctx.livemode), eq(events.id, uuid)));
    if (row) return eventView(row);
  }
  throw await notFound(db, ctx, events, uuid, 'event', id);
}

/** `payment.*` matches every payment event; `*` (or no filter) matches all. */
function typeFilter(pattern: string | undefined): SQL | undefined {
  if (!pattern || pattern === '*') return undefined;
  const escaped = pattern.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
  return like(events.type, escaped);
}

export async function listEvents(db: Db, ctx: RequestContext, params: ListParams & { type?: string }): Promise<Page<EventView>> {
  const plan = planPage('evt', events.id, events.createdAt, params);
  const rows = await db
    .select()
    .from(events)
    .where(and(eq(events.accountId, ctx.accountId), eq(events.livemode, ctx.livemode), typeFilter(params.type), plan.where))
    .orderBy(plan.orderBy)
    .limit(plan.fetch);
  return toPage(rows, plan, eventView);
}
