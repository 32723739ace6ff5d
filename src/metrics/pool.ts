// The database pool's use, read at scrape time from node-postgres' own counters. drizzle keeps the
// pool it was built on as `$client`; the embedded database has no pool, and reports none.
import pg from 'pg';
import type { Database } from '../storage/db.js';
import type { PoolUse } from './registry.js';

export function poolUse(database: Database): (() => PoolUse) | undefined {
  const pool = (database.db as { $client?: unknown }).$client;
  if (!(pool instanceof pg.Pool)) return undefined;
  return () => ({
    inUse: pool.totalCount - pool.idleCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
    max: pool.options.max ?? 10,
  });
}
