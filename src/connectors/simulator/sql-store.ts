// The simulated processors' books in the service's database (simulator_objects and
// simulator_reports, migration 0006), so that a restarted or second service process meets the same
// simulated processor as the first: pending charges, payouts and mandates are still held, and
// outcomes scheduled before a crash are still reported. A new object is one INSERT (no
// transaction), so that the simulator adds a single statement to a card payment; under load the
// inserts of concurrent payments share that statement and its commit (src/storage/batched.ts).
import { and, asc, count, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import type { RawStatement } from '../../storage/raw.js';
import { batchedStatement, unnestColumns } from '../../storage/batched.js';
import { simulatorObjects, simulatorReports } from '../../storage/schema.js';
import type { SimWebhook } from './protocol.js';
import { keyOf, type Books, type SimEntry, type SimKey, type SimKind, type SimulatorStore } from './store.js';

type ObjectRow = typeof simulatorObjects.$inferSelect;

const OBJECT_COLUMNS = [
  ['processor', 'text'],
  ['kind', 'text'],
  ['reference', 'text'],
  ['object_id', 'text'],
  ['body', 'text'],
  ['due_at', 'timestamptz'],
  ['due_state', 'text'],
] as const;

// ON CONFLICT without a target, as the single-row insert: a held key and a taken object id both
// insert nothing, and a row the batch itself already inserted counts as held (DO NOTHING, unlike DO
// UPDATE, accepts that). Rows go in key order so that two batches meeting the same keys (another
// process's) take their row locks in one order instead of deadlocking.
const INSERT_OBJECTS: RawStatement = {
  name: 'simulator_insert_objects_v1',
  text: `INSERT INTO simulator_objects (processor, kind, reference, object_id, body, due_at, due_state)
SELECT processor, kind, reference, object_id, body::jsonb, due_at, due_state
FROM ${unnestColumns(OBJECT_COLUMNS, 'i')}
ORDER BY processor, kind, reference
ON CONFLICT DO NOTHING
RETURNING processor, kind, reference, object_id, body, due_at, due_state`,
};

type BatchRow = Record<(typeof OBJECT_COLUMNS)[number][0], unknown>;

interface Returned extends Record<string, unknown> {
  processor: string;
  kind: ObjectRow['kind'];
  reference: string;
  object_id: string;
  body: Record<string, unknown>;
  due_at: Date | string | null;
  due_state: string | null;
}

/** The row as drizzle returns it: both drivers parse jsonb; a timestamp is taken as a Date or its text, whichever the driver's parsers give. */
const rowOf = (r: Returned): ObjectRow => ({
  processor: r.processor,
  kind: r.kind,
  reference: r.reference,
  objectId: r.object_id,
  body: r.body,
  dueAt: r.due_at === null ? null : new Date(r.due_at),
  dueState: r.due_state,
});

const insertBatched = batchedStatement<BatchRow, Returned, ObjectRow | undefined>({
  statement: INSERT_OBJECTS,
  columns: OBJECT_COLUMNS,
  // RETURNING gives only the rows this statement inserted, and a key is in a batch at most once
  // (`key`), so a call whose key came back is the one that inserted it.
  answer: (rows, batch) => {
    const inserted = new Map(rows.map((r) => [keyOf(r), r]));
    return batch.map((call) => {
      const row = inserted.get(keyOf(call as unknown as SimKey));
      return row && rowOf(row);
    });
  },
  key: (call) => keyOf(call as unknown as SimKey),
  // One group: the books are the simulated processors', not a tenant's, so nothing keeps one
  // statement to one account; splitting by processor would only make the batches smaller.
  group: () => 'simulator',
});

/** Inserts `entry` unless its key or object id is held: the inserted row, or undefined. */
type Add = (db: Executor, entry: SimEntry<unknown>) => Promise<ObjectRow | undefined>;

/** Inside a transaction: its calls cannot share a commit, so each is its own statement. */
const addAlone: Add = async (db, entry) => {
  const [row] = await db
    .insert(simulatorObjects)
    .values({ ...entry, body: entry.body as Record<string, unknown> })
    .onConflictDoNothing()
    .returning();
  return row;
};

const addBatched: Add = (db, entry) =>
  insertBatched(db, {
    processor: entry.processor,
    kind: entry.kind,
    reference: entry.reference,
    object_id: entry.objectId,
    body: JSON.stringify(entry.body),
    due_at: entry.dueAt?.toISOString() ?? null,
    due_state: entry.dueState,
  });

const entryOf = <T>(row: ObjectRow): SimEntry<T> => ({ ...row, body: row.body as T });

const keyIs = (key: SimKey) =>
  and(eq(simulatorObjects.processor, key.processor), eq(simulatorObjects.kind, key.kind), eq(simulatorObjects.reference, key.reference));

function books(db: Executor, add: Add = addAlone): Books {
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
      const row = await add(db, entry);
      if (row) return { entry: entryOf<T>(row), created: true };
      // Read by a statement of its own: the row the insert met may have been committed after the
      // insert's snapshot, where a read within it would not see it.
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
    ...books(db, addBatched),
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
