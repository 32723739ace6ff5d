// Where the simulated processors keep their books: the objects each holds by the merchant's
// reference, and the webhooks they owe. Two stores behind one interface: the service's database
// (sql-store.ts), so that a restarted service process, or several of them, meet the same simulated
// processor; and memory, for the simulator running as its own server (`npm run simulator`: the
// processor's own process, which outlives service restarts and forgets everything when it stops,
// as a reset sandbox would) and for tests of the simulator alone.
import type { SimWebhook } from './protocol.js';

export type SimKind = 'charge' | 'refund' | 'capture' | 'mandate' | 'payout' | 'dispute';

export interface SimKey {
  processor: string;
  kind: SimKind;
  /** The merchant's reference (our id): the processor's idempotency key. */
  reference: string;
}

export interface SimEntry<T = Record<string, unknown>> extends SimKey {
  /** The processor's own id of the object. */
  objectId: string;
  body: T;
  /** When the processor acts on its own: settles the object to `dueState` if it is still unsettled, and reports it. */
  dueAt: Date | null;
  dueState: string | null;
}

/** A webhook the processor owes: sent when due, retried on failure until delivered or given up. */
export interface SimReport {
  eventId: string;
  processor: string;
  body: SimWebhook;
  dueAt: Date;
  /** Attempts started, the one just claimed included. */
  attempts: number;
}

/** The books as one transaction sees them. */
export interface Books {
  /** `lock`: held until the transaction ends, so that two changes of one object follow each other. */
  get<T>(key: SimKey, opts?: { lock?: boolean }): Promise<SimEntry<T> | undefined>;
  getByObjectId<T>(processor: string, kind: SimKind, objectId: string): Promise<SimEntry<T> | undefined>;
  /** Adds `entry` unless its reference is held already (a replay, or a concurrent request): then returns the one held. */
  insert<T>(entry: SimEntry<T>): Promise<{ entry: SimEntry<T>; created: boolean }>;
  update<T>(entry: SimEntry<T>): Promise<void>;
  report(report: SimReport): Promise<void>;
}

export interface SimulatorStore extends Books {
  transaction<R>(fn: (books: Books) => Promise<R>): Promise<R>;
  /** Objects of these processors whose own action is due by `now`. */
  due(processors: readonly string[], now: Date, limit: number): Promise<SimKey[]>;
  /** Due reports of these processors, each leased until `leaseUntil` (then another sender may take it over) with its attempt counted. */
  claimReports(processors: readonly string[], now: Date, leaseUntil: Date, limit: number): Promise<SimReport[]>;
  /** Delivered, or given up. */
  dropReport(eventId: string): Promise<void>;
  retryReport(eventId: string, dueAt: Date): Promise<void>;
  count(processor: string, kind: SimKind): Promise<number>;
  /** Every object of these kinds the processor holds (its settlement report reads them: a sandbox's books are small). */
  list(processor: string, kinds: readonly SimKind[]): Promise<SimEntry[]>;
}

/** One text per key, for maps and queues (sql-store.ts keys its batches by it too). */
export const keyOf = (k: SimKey) => JSON.stringify([k.processor, k.kind, k.reference]);
const idOf = (processor: string, kind: SimKind, objectId: string) => JSON.stringify([processor, kind, objectId]);

/**
 * Books in this process's memory. Every call runs alone (a queue stands in for the database's row
 * locks) and hands out copies, so that callers change the books only through update, as with SQL.
 */
export function memoryStore(): SimulatorStore {
  const objects = new Map<string, SimEntry<unknown>>();
  const byObjectId = new Map<string, string>();
  const reports = new Map<string, SimReport>();
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <R>(fn: () => Promise<R> | R): Promise<R> => {
    const run = queue.then(fn);
    queue = run.catch(() => undefined);
    return run;
  };
  const copy = <T>(value: T): T => structuredClone(value);
  const books: Books = {
    async get<T>(key: SimKey) {
      const entry = objects.get(keyOf(key));
      return entry && (copy(entry) as SimEntry<T>);
    },
    async getByObjectId<T>(processor: string, kind: SimKind, objectId: string) {
      const key = byObjectId.get(idOf(processor, kind, objectId));
      return key === undefined ? undefined : (copy(objects.get(key)) as SimEntry<T>);
    },
    async insert<T>(entry: SimEntry<T>) {
      const held = objects.get(keyOf(entry));
      if (held) return { entry: copy(held) as SimEntry<T>, created: false };
      objects.set(keyOf(entry), copy(entry));
      byObjectId.set(idOf(entry.processor, entry.kind, entry.objectId), keyOf(entry));
      return { entry, created: true };
    },
    async update(entry) {
      objects.set(keyOf(entry), copy(entry));
    },
    async report(report) {
      reports.set(report.eventId, copy(report));
    },
  };
  const dueReports = (processors: readonly string[], now: Date) =>
    [...reports.values()].filter((r) => processors.includes(r.processor) && r.dueAt <= now).sort((a, b) => +a.dueAt - +b.dueAt);
  return {
    get: (key) => serially(() => books.get(key)),
    getByObjectId: (processor, kind, objectId) => serially(() => books.getByObjectId(processor, kind, objectId)),
    insert: (entry) => serially(() => books.insert(entry)),
    update: (entry) => serially(() => books.update(entry)),
    report: (report) => serially(() => books.report(report)),
    transaction: (fn) => serially(() => fn(books)),
    due: (processors, now, limit) =>
      serially(() =>
        [...objects.values()]
          .filter((o) => processors.includes(o.processor) && o.dueAt !== null && o.dueAt <= now)
          .slice(0, limit)
          .map(({ processor, kind, reference }) => ({ processor, kind, reference })),
      ),
    claimReports: (processors, now, leaseUntil, limit) =>
      serially(() =>
        dueReports(processors, now)
          .slice(0, limit)
          .map((report) => {
            Object.assign(report, { dueAt: leaseUntil, attempts: report.attempts + 1 });
            return copy(report);
          }),
      ),
    dropReport: (eventId) => serially(() => void reports.delete(eventId)),
    retryReport: (eventId, dueAt) =>
      serially(() => {
        const report = reports.get(eventId);
        if (report) report.dueAt = dueAt;
      }),
    count: (processor, kind) => serially(() => [...objects.values()].filter((o) => o.processor === processor && o.kind === kind).length),
    list: (processor, kinds) => serially(() => [...objects.values()].filter((o) => o.processor === processor && kinds.includes(o.kind)).map((o) => copy(o) as SimEntry)),
  };
}
