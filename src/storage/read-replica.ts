// Reads that may be answered by a streaming replica (DATABASE_READ_URL) without a caller ever
// missing its own writes (docs/operations.md#a-read-replica). Each writer (an API key, a dashboard
// session) is pinned to the primary from the moment a request of its that may write arrives until
// the replica has replayed the primary's WAL position read after that request finished; the
// positions are kept in this process's memory, so in a deployment of several API processes a
// writer's reads in a process that did not see its write are judged only by the replica's lag.
// A replica that lags past DATABASE_READ_MAX_LAG_MS, that cannot be reached or whose read fails
// is skipped for the primary: a read never fails because of the replica.
//
// No request waits on the bookkeeping: the replica's position is probed at most every PROBE_MS,
// in the background, and the read is decided on the last probe (an older probe only understates
// the replica's position, which sends a read to the primary, never a stale one to the caller);
// the primary's position is read after the response is sent, one query shared by every write that
// finished meanwhile. Without DATABASE_READ_URL none of this runs: reads go to the primary with no
// statement added (the embedded database has no replica, and ignores the setting).
import { sql } from 'drizzle-orm';
import { openPostgres, type Db, type Database, type PostgresOptions } from './db.js';
import { CircuitBreaker } from '../kernel/circuit-breaker.js';
import { ApiError } from '../kernel/errors.js';

/** Why a read went where it went (the `reason` of db_reads_total). */
export type ReadReason = 'caught_up' | 'own_write' | 'lagging' | 'replica_down' | 'replica_failed' | 'not_probed';

export interface ReadRouting {
  /** Whether writes are followed at all: false when every read goes to the primary anyway. */
  readonly followsWrites: boolean;
  /** A request of `writer` that may write has arrived: its reads go to the primary from now on. */
  writeStarted(writer: string): void;
  /** That request has finished: its reads may go to the replica once it has replayed what the primary holds now. */
  writeEnded(writer: string): void;
  /** Runs a read on the replica when it may, on the primary otherwise (and when the replica fails it). */
  read<T>(writer: string | undefined, run: (db: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Every read on the primary: no replica configured, or the embedded database. */
export function primaryReads(primary: Db): ReadRouting {
  return { followsWrites: false, writeStarted() {}, writeEnded() {}, read: (_writer, run) => run(primary), close: async () => {} };
}

export interface ReplicaOptions {
  primary: Db;
  replica: Db;
  /** DATABASE_READ_MAX_LAG_MS: a replica further behind (by its own reckoning plus the probe's age) is skipped. */
  maxLagMs: number;
  /** Counts each read by the pool that served it and why. */
  served(pool: 'primary' | 'replica', reason: ReadReason): void;
  closeReplica(): Promise<void>;
  now?: () => number;
}

/**
 * The reads of a process: through a pool of its own to DATABASE_READ_URL on PostgreSQL, all on the
 * primary otherwise. Its connections give up sooner than the primary's, opening one and running a
 * statement (a replica gone silent would otherwise hold a list until the kernel gives up): one
 * slow failure opens the breaker, and the read it held up goes to the primary.
 */
export async function openReads(
  database: Database,
  settings: PostgresOptions & { readUrl: string | undefined; maxLagMs: number },
  served: ReplicaOptions['served'],
): Promise<ReadRouting> {
  if (!settings.readUrl || database.kind !== 'postgres') return primaryReads(database.db);
  const replica = await openPostgres(settings.readUrl, {
    ...settings,
    connectTimeoutMs: Math.min(settings.connectTimeoutMs ?? 1000, 1000),
    queryTimeoutMs: settings.queryTimeoutMs ?? REPLICA_QUERY_TIMEOUT_MS,
  });
  return replicaReads({ primary: database.db, replica: replica.db, maxLagMs: settings.maxLagMs, served, closeReplica: () => replica.close() });
}

const PROBE_MS = 100;
/** A read on the replica taking longer is given up and asked of the primary. */
const REPLICA_QUERY_TIMEOUT_MS = 5000;
/** After a failure the replica is left alone this long, then one probe decides. */
const REPLICA_RETRY_MS = 5000;
const RETRY_POSITION_MS = 1000;
/** Writers remembered at most; past it the oldest positions fold into one floor every reader must pass. */
const MAX_WRITERS = 100_000;
const BREAKER = 'replica';

/** A WAL position (`16/B374D848`) as a number that orders like it. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

interface Probe {
  replayed: bigint;
  lagMs: number;
  atMs: number;
}

interface Writer {
  /** The primary's position after the writer's last finished write. */
  position: bigint;
  /** Requests that may write, started and not yet given a position. */
  pending: number;
}

// A standby reports how far it has replayed and how old the last transaction it replayed is, which
// is its lag unless it has replayed all it received (then it is current by its own reckoning: an
// idle primary sends no transactions to age against). That reckoning cannot tell a standby that
// stopped receiving WAL: the primary's position, read alongside, can (`trailing` below). A server
// that is not a standby is as current as it gets.
const PROBE = sql.raw(
  `SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END::text AS replayed,
          CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
               ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000 END AS lag_ms`,
);
// Read after commit: a commit returns once its record is flushed (synchronous_commit on, the
// default), so the flush position covers it; the insert position may point past anything a
// replica ever replays while the primary is idle.
const POSITION = sql.raw('SELECT pg_current_wal_flush_lsn()::text AS position');

type Rows<R> = { rows: R[] };

export function replicaReads(opts: ReplicaOptions): ReadRouting {
  const now = opts.now ?? Date.now;
  const breaker = new CircuitBreaker({ failureThreshold: 1, openMs: REPLICA_RETRY_MS, now });
  const writers = new Map<string, Writer>();
  let floor = 0n;
  let probe: Probe | undefined;
  let probing = false;
  let closed = false;
  /** The newest primary position known, and since when. */
  let newest = { position: 0n, atMs: 0 };
  /** The oldest primary position known that the replica had not replayed at its last probe. */
  let trailing: { position: bigint; sinceMs: number } | undefined;

  function learned(position: bigint, atMs: number): void {
    if (position > newest.position) newest = { position, atMs };
    if (!trailing && (!probe || position > probe.replayed)) trailing = { position, sinceMs: atMs };
  }

  function refresh(): void {
    if (probing || closed || (probe && now() - probe.atMs < PROBE_MS) || !breaker.tryAcquire(BREAKER)) return;
    probing = true;
    const startedMs = now();
    // The primary's position is read with each probe: a replica that stopped receiving WAL is
    // caught by the writes of other processes too.
    positionNow().then((position) => learned(position, startedMs), ignore);
    opts.replica.execute(PROBE).then(
      (result) => {
        const row = (result as unknown as Rows<{ replayed: string | null; lag_ms: number | null }>).rows[0];
        breaker.onSuccess(BREAKER);
        // Nothing replayed yet, or no transaction to age against: not usable until it has.
        probe = row?.replayed ? { replayed: parseLsn(row.replayed), lagMs: row.lag_ms ?? Infinity, atMs: startedMs } : undefined;
        if (probe && trailing && probe.replayed >= trailing.position) {
          trailing = newest.position > probe.replayed ? { position: newest.position, sinceMs: newest.atMs } : undefined;
        }
        probing = false;
      },
      () => {
        breaker.onFailure(BREAKER);
        probe = undefined;
        probing = false;
      },
    );
  }

  function choose(writer: string | undefined): ReadReason {
    refresh();
    if (breaker.state(BREAKER) !== 'closed') return 'replica_down';
    if (!probe) return 'not_probed';
    if (probe.lagMs + (now() - probe.atMs) > opts.maxLagMs) return 'lagging';
    if (trailing && now() - trailing.sinceMs > opts.maxLagMs) return 'lagging';
    const own = writer === undefined ? undefined : writers.get(writer);
    if (own && (own.pending > 0 || own.position > probe.replayed)) return 'own_write';
    if (!own && floor > probe.replayed) return 'own_write';
    if (own && writer !== undefined) writers.delete(writer);
    return 'caught_up';
  }

  // One position query in flight at a time; writes finishing while it runs share the next one
  // (the one in flight may have been sent before they committed).
  let running: Promise<bigint> | undefined;
  let queued: Promise<bigint> | undefined;
  const ignore = () => {};
  function start(): Promise<bigint> {
    const query = opts.primary.execute(POSITION).then((r) => parseLsn((r as unknown as Rows<{ position: string }>).rows[0]!.position));
    running = query;
    query.then(ignore, ignore).then(() => {
      if (running === query) running = undefined;
    });
    return query;
  }
  function positionNow(): Promise<bigint> {
    if (!running) return start();
    queued ??= running.then(ignore, ignore).then(() => {
      queued = undefined;
      return start();
    });
    return queued;
  }

  function settle(writer: Writer): void {
    const askedMs = now();
    positionNow().then(
      (position) => {
        learned(position, askedMs);
        if (position > writer.position) writer.position = position;
        writer.pending -= 1;
      },
      // The primary did not answer: the writer stays on it until it does.
      () => {
        if (!closed) setTimeout(() => settle(writer), RETRY_POSITION_MS).unref();
      },
    );
  }

  function forgetOldest(): void {
    for (const [name, writer] of writers) {
      if (writers.size < MAX_WRITERS) return;
      if (writer.pending > 0) continue;
      if (writer.position > floor) floor = writer.position;
      writers.delete(name);
    }
  }

  async function read<T>(writer: string | undefined, run: (db: Db) => Promise<T>): Promise<T> {
    const reason = choose(writer);
    if (reason !== 'caught_up') {
      opts.served('primary', reason);
      return run(opts.primary);
    }
    let answer: T;
    try {
      answer = await run(opts.replica);
    } catch (err) {
      // A refusal (a missing object) may only mean the replica has not seen it yet: the primary
      // answers. Anything else is the replica failing, which keeps reads off it for a while.
      if (!(err instanceof ApiError)) breaker.onFailure(BREAKER);
      opts.served('primary', 'replica_failed');
      return run(opts.primary);
    }
    opts.served('replica', reason);
    return answer;
  }

  return {
    followsWrites: true,
    writeStarted(name) {
      let writer = writers.get(name);
      if (!writer) {
        if (writers.size >= MAX_WRITERS) forgetOldest();
        writer = { position: floor, pending: 0 };
        writers.set(name, writer);
      }
      writer.pending += 1;
    },
    writeEnded(name) {
      const writer = writers.get(name);
      if (writer) settle(writer);
    },
    read,
    async close() {
      closed = true;
      await opts.closeReplica();
    },
  };
}
