// The simulated processors' books in the service's database (simulator_objects and
// simulator_reports, migration 0006), so that a restarted or second service process meets the same
// simulated processor as the first: pending charges, payouts and mandates are still held, and
// outcomes scheduled before a crash are still reported. A new object is one INSERT (no
// transaction), so that the simulator adds a single statement to a card payment.
import { and, asc, count, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { simulatorObjects, simulatorReports } from '../../storage/schema.js';
import type { SimWebhook } from './protocol.js';
import type { Books, SimEntry, SimKey, SimKind, SimulatorStore } from './store.js';

type ObjectRow = typeof simulatorObjects.$inferSelect;

const entryOf = <T>(row: ObjectRow): SimEntry<T> => ({ ...row, body: row.body as T });

const keyIs = (key: SimKey) =>
  and(eq(simulatorObjects.processor, key.processor), eq(simulatorObjects.kind, key.kind), eq(simulatorObjects.reference, key.reference));

function books(db: Executor): Books {
  const get = async <T>(key: SimKey, opts: { lock?: boolean } = {}) => {
    const query = db.select().from(simulatorObjects).where(keyIs(key));
    const [row] = opts.lock ? await query.for('update') : await query;
    return row && entryOf<T>(row);
  };
  return {
    get,
    async getByObjectId<T>(processor: string, kind: SimKind, objectId: string) {
      const [row] = await db
        .select()
        .from(simulatorObjects)
        .where(and(eq(simulatorObjects.processor, processor), eq(simulatorObjects.kind, kind), eq(simulatorObjects.objectId, objectId)));
      return row && entryOf<T>(row);
    },
    async insert<T>(entry: SimEntry<T>) {
      const [row] = await db
        .insert(simulatorObjects)
        .values({ ...entry, body: entry.body as Record<string, unknown> })
        .onConflictDoNothing()
        .returning();
      if (row) return { entry: entryOf<T>(row), created: true };
      const held = await get<T>(entry);
      if (!held) throw new Error(`simulator ${entry.processor}: ${entry.kind} id ${entry.objectId} is taken by another reference`);
      return { entry: held, created: false };
    },
    async update(entry) {
      const { body, dueAt, dueState } = entry;
      await db.update(simulatorObjects).set({ body: body as Record<string, unknown>, dueAt, dueState }).where(keyIs(entry));
    },
    async report(report) {
      await db.insert(simulatorReports).values({ ...report, body: report.body as unknown as Record<string, unknown> });
    },
  };
}

export function sqlStore(db: Db): SimulatorStore {
  return {
    ...books(db),
    transaction: (fn) => db.transaction((tx) => fn(books(tx))),
    async due(processors, now, limit) {
      return db
        .select({ processor: simulatorObjects.processor, kind: simulatorObjects.kind, reference: simulatorObjects.reference })
        .from(simulatorObjects)
        .where(and(inArray(simulatorObjects.processor, [...processors]), lte(simulatorObjects.dueAt, now)))
        .orderBy(asc(simulatorObjects.dueAt))
        .limit(limit);
    },
    async claimReports(processors, now, leaseUntil, limit) {
      // SKIP LOCKED: processes sweeping at the same moment split the due reports between them.
      const due = db
        .select({ eventId: simulatorReports.eventId })
        .from(simulatorReports)
        .where(and(inArray(simulatorReports.processor, [...processors]), lte(simulatorReports.dueAt, now)))
        .orderBy(asc(simulatorReports.dueAt))
        .limit(limit)
        .for('update', { skipLocked: true });
      const rows = await db
        .update(simulatorReports)
        .set({ dueAt: leaseUntil, attempts: sql`${simulatorReports.attempts} + 1` })
        .where(inArray(simulatorReports.eventId, due))
        .returning();
      return rows.map((row) => ({ ...row, body: row.body as unknown as SimWebhook }));
    },
    async dropReport(eventId) {
      await db.delete(simulatorReports).where(eq(simulatorReports.eventId, eventId));
    },
    async retryReport(eventId, dueAt) {
      await db.update(simulatorReports).set({ dueAt }).where(eq(simulatorReports.eventId, eventId));
    },
    async count(processor, kind) {
      const [row] = await db
        .select({ n: count() })
        .from(simulatorObjects)
        .where(and(eq(simulatorObjects.processor, processor), eq(simulatorObjects.kind, kind)));
      return row?.n ?? 0;
    },
    async list(processor, kinds) {
      const rows = await db
        .select()
        .from(simulatorObjects)
        .where(and(eq(simulatorObjects.processor, processor), inArray(simulatorObjects.kind, [...kinds])));
      return rows.map((row) => ({ ...row, kind: row.kind as SimKind }));
    },
  };
}
