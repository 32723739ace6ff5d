// What the invariants (sim/invariants*.ts) share: raw rows from the database, the shape of an
// invariant, and the processor behind a route key (a built-in simulator's name, or a simulator
// connector account's ca_ id, whose movements the same simulated processor holds).
import { sql } from 'drizzle-orm';
import { toPublicId } from '../src/kernel/ids.js';
import type { Db } from '../src/storage/db.js';
import type { Model } from './ops.js';
import type { SimService } from './service.js';

export type Row = Record<string, any>;

export const rows = async (db: Db, q: ReturnType<typeof sql>): Promise<Row[]> => ((await db.execute(q)) as unknown as { rows: Row[] }).rows;

/** A jsonb value as read: parsed already, or (as some drivers hand it over) its text. */
export const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

/** Answers what it found wrong; empty: the invariant holds. */
export type Invariant = (s: SimService, model: Model) => Promise<string[]>;

/** Route key → simulated processor: the simulators by name, their connector accounts by id. */
export async function processorsByRouteKey(db: Db): Promise<(routeKey: string | null) => string | null> {
  const accounts = new Map((await rows(db, sql`SELECT id::text, connector FROM connector_accounts`)).map((a) => [toPublicId('ca', a.id), a.connector as string]));
  return (routeKey) => (routeKey === null ? null : (accounts.get(routeKey) ?? routeKey));
}
