// Idempotency keys, kept in the database so they hold across any number of processes.
//
// A request claims its key with INSERT … ON CONFLICT DO NOTHING (the unique key is the lock). The
// business transaction that finishes the work also writes the response into the key's row, and
// only while this request still owns it — so the record and the business rows commit together or
// not at all, and a request whose lock was taken over (it stalled past the lock timeout) rolls
// back instead of acting twice.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { rowsOf, type Db, type Executor } from '../storage/db.js';
import { deleteBatch } from '../storage/trim.js';
import { ApiError } from '../kernel/errors.js';
import type { Encryptor } from '../kernel/encryption.js';
import type { IdempotencyClaim, Outcome, RequestContext } from '../kernel/context.js';


export type ClaimResult = { kind: 'owner'; claim: IdempotencyClaim } | { kind: 'replay'; outcome: Outcome };

export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

// Keys sorted at every depth, so a retry that orders its fields otherwise has the same fingerprint.
// Loops rather than map and join: every request with a key computes it.
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  let s: string;
  if (Array.isArray(value)) {
    s = '[';
    for (let i = 0; i < value.length; i++) s += (i ? ',' : '') + canonicalJson(value[i]);
    return `${s}]`;
  }
  const keys = Object.keys(value).sort();
  s = '{';
  for (let i = 0; i < keys.length; i++) s += `${i ? ',' : ''}${JSON.stringify(keys[i])}:${canonicalJson((value as Record<string, unknown>)[keys[i]!])}`;
  return `${s}}`;
}

export function fingerprint(method: string, path: string, body: unknown): string {
  return crypto.hash('sha256', `${method} ${path}\n${canonicalJson(body ?? null)}`, 'base64url');
}

interface Settings {
  retentionS: number;
  lockTimeoutS: number;
  /** Opens answers stored sealed (those that carry a secret; see respond's `seal`). */
  encryptor?: Encryptor;
}

// A stored answer holding a secret (a webhook endpoint's signing secret) is kept encrypted, bound
// to its key, so the idempotency table never holds the secret in clear; a replay opens it and
// sends the same bytes.
const SEALED_PREFIX = 'sealed:';
const sealContext = (accountId: string, livemode: boolean, key: string) => `idempotency:${accountId}:${livemode}:${key}`;


export async function claimKey(db: Db, ctx: RequestContext, key: string, print: string, settings: Settings): Promise<ClaimResult> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = rowsOf(
      await db.execute(sql`
        INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, locked_at, request_id, expires_at)
        VALUES (${ctx.accountId}, ${ctx.livemode}, ${key}, ${print}, now(), ${ctx.requestId},
                now() + make_interval(secs => ${settings.retentionS}))
        ON CONFLICT DO NOTHING
        RETURNING recovery_point`),
    );
    if (inserted[0]) return { kind: 'owner', claim: { key, recoveryPoint: String(inserted[0].recovery_point) } };

    const [existing] = rowsOf(
      await db.execute(sql`
        SELECT fingerprint, response_status, response_body, expires_at <= now() AS expired,
               (locked_at IS NOT NULL AND locked_at > now() - make_interval(secs => ${settings.lockTimeoutS})) AS locked
        FROM idempotency_keys
        WHERE account_id = ${ctx.accountId} AND livemode = ${ctx.livemode} AND key = ${key}`),
    );
    if (!existing) continue; // swept between our two statements: claim it afresh
    if (existing.expired) {
      await db.execute(sql`
        DELETE FROM idempotency_keys
        WHERE account_id = ${ctx.accountId} AND livemode = ${ctx.livemode} AND key = ${key} AND expires_at <= now()`);
      continue;
    }
    if (existing.fingerprint !== print) throw new ApiError('idempotency_key_reused');
    if (existing.response_status !== null) {
      let body = String(existing.response_body);
      if (body.startsWith(SEALED_PREFIX)) {
        if (!settings.encryptor) throw new Error('a sealed idempotent answer needs an encryptor to replay');
        body = settings.encryptor.decrypt(body.slice(SEALED_PREFIX.length), sealContext(ctx.accountId, ctx.livemode, key));
      }
      return { kind: 'replay', outcome: { status: Number(existing.response_status), body } };
    }
    if (!existing.locked) {
      // The previous holder died (or stalled past the lock timeout): take over and resume at its
      // recovery point. The compare-and-set makes sure only one taker wins.
      const [taken] = rowsOf(
        await db.execute(sql`
          UPDATE idempotency_keys SET locked_at = now(), request_id = ${ctx.requestId}
          WHERE account_id = ${ctx.accountId} AND livemode = ${ctx.livemode} AND key = ${key}
            AND response_status IS NULL
            AND (locked_at IS NULL OR locked_at <= now() - make_interval(secs => ${settings.lockTimeoutS}))
          RETURNING recovery_point`),
      );
      if (taken) return { kind: 'owner', claim: { key, recoveryPoint: String(taken.recovery_point) } };
    }
    throw new ApiError('idempotency_key_in_use', { headers: { 'retry-after': '1' } });
  }
  throw new ApiError('idempotency_key_in_use', { headers: { 'retry-after': '1' } });
}

function ownedBy(ctx: RequestContext) {
  return sql`account_id = ${ctx.accountId} AND livemode = ${ctx.livemode} AND key = ${ctx.idempotency!.key}
             AND request_id = ${ctx.requestId} AND response_status IS NULL`;
}

/**
 * Finishes a request inside the caller's transaction: serialises the answer once and, when the
 * request holds an idempotency key, stores it in the same transaction (encrypted with `seal` when
 * the answer carries a secret). Throws (so the transaction
 * rolls back) if the key was taken over by another request meanwhile.
 */
export async function respond(
  tx: Executor,
  ctx: RequestContext,
  status: number,
  payload: unknown,
  opts: { seal?: Encryptor } = {},
): Promise<Outcome> {
  const body = JSON.stringify(payload);
  if (ctx.idempotency) {
    const stored = opts.seal
      ? SEALED_PREFIX + opts.seal.encrypt(body, sealContext(ctx.accountId, ctx.livemode, ctx.idempotency.key))
      : body;
    const updated = rowsOf(
      await tx.execute(sql`
        UPDATE idempotency_keys
        SET response_status = ${status}, response_body = ${stored}, recovery_point = 'finished', locked_at = NULL
        WHERE ${ownedBy(ctx)}
        RETURNING 1 AS ok`),
    );
    if (updated.length === 0) throw new ApiError('idempotency_key_in_use', { headers: { 'retry-after': '1' } });
  }
  return { status, body };
}

/** Records a recovery point reached by a multi-phase operation, inside that phase's transaction. */
export async function setRecoveryPoint(tx: Executor, ctx: RequestContext, point: string): Promise<void> {
  if (!ctx.idempotency) return;
  const updated = rowsOf(
    await tx.execute(sql`UPDATE idempotency_keys SET recovery_point = ${point} WHERE ${ownedBy(ctx)} RETURNING 1 AS ok`),
  );
  if (updated.length === 0) throw new ApiError('idempotency_key_in_use', { headers: { 'retry-after': '1' } });
  ctx.idempotency.recoveryPoint = point;
}

/** Stores a 4xx answer produced while executing, so a retry gets the same answer. */
export async function storeFailure(db: Db, ctx: RequestContext, outcome: Outcome): Promise<void> {
  await db.execute(sql`
    UPDATE idempotency_keys
    SET response_status = ${outcome.status}, response_body = ${outcome.body}, recovery_point = 'finished', locked_at = NULL
    WHERE ${ownedBy(ctx)}`);
}

/**
 * What a request that ended in an error does with its key: a 4xx from executing is stored, so a
 * retry gets the same answer; a 5xx, 409 or 429 lets the key go, so a retry runs again.
 */
export function keepOrReleaseKey(db: Db, ctx: RequestContext, outcome: Outcome): Promise<void> {
  return outcome.status < 500 && outcome.status !== 429 && outcome.status !== 409 ? storeFailure(db, ctx, outcome) : releaseKey(db, ctx);
}

/**
 * Lets go of the key after a 5xx (nothing is stored for those). With nothing committed the key is
 * forgotten; after a committed phase it is unlocked, so a retry resumes at the recovery point.
 * What was committed is read from the row, not from the request's memory: after a connection cut
 * the request cannot know whether its last commit (or even its claim) went through.
 */
export async function releaseKey(db: Db, ctx: RequestContext): Promise<void> {
  await db.execute(sql`
    WITH forgotten AS (
      DELETE FROM idempotency_keys WHERE ${ownedBy(ctx)} AND recovery_point = 'started' RETURNING 1
    )
    UPDATE idempotency_keys SET locked_at = NULL WHERE ${ownedBy(ctx)} AND recovery_point <> 'started'`);
}

export async function sweepExpiredKeys(db: Db, batch = 1000): Promise<number> {
  return deleteBatch(db, sql`idempotency_keys`, ['account_id', 'livemode', 'key'], sql`expires_at <= now()`, batch);
}

/**
 * After a one-statement path wrote nothing: claims the request's deferred key the general way.
 * A finished key's answer comes back for replay; undefined means the request now owns the key.
 */
export function claimDeferred(ctx: RequestContext): Promise<Outcome | undefined> {
  return ctx.deferredIdempotency ? ctx.deferredIdempotency.claim() : Promise.resolve(undefined);
}

/**
 * The key's parts of the one-statement fast paths (payment order create, card payment), so that
 * what a claimed, finished or answered key row holds is written down here only. Each argument is
 * a placeholder (`$n`) or a CTE name in the caller's statement.
 */
export const fastPathKeySql = {
  /**
   * Keys inserted already finished with their answers, one per row of `from` in the order of
   * `orderBy` (concurrent batches then take the unique index's entries in one order, and cannot
   * deadlock on each other); inserts nothing for a key that exists.
   */
  insertFinished: (
    from: string,
    orderBy: string,
    p: { account: string; livemode: string; key: string; fingerprint: string; status: number; body: string; requestId: string; retentionS: string },
  ) =>
    `INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, recovery_point, locked_at, response_status, response_body, request_id, expires_at)
  SELECT ${p.account}, ${p.livemode}, ${p.key}, ${p.fingerprint}, 'finished', NULL, ${p.status}, ${p.body}, ${p.requestId}, now() + make_interval(secs => ${p.retentionS}::int)
  FROM ${from} ORDER BY ${orderBy}
  ON CONFLICT DO NOTHING`,
  /** A key claimed (locked by this request) at `recoveryPoint`, once per row of `from`; a key that exists raises a unique violation. */
  insertClaimed: (from: string, p: { account: string; livemode: string; key: string; fingerprint: string; recoveryPoint: string; requestId: string; retentionS: string }) =>
    `INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, recovery_point, locked_at, request_id, expires_at)
SELECT ${p.account}, ${p.livemode}, ${p.key}, ${p.fingerprint}, ${p.recoveryPoint}, now(), ${p.requestId}, now() + make_interval(secs => ${p.retentionS}::int) FROM ${from}`,
  /** Stores the answer on a key this request still owns (as respond() does), once per row of `from`; the key's row is `k`. */
  answer: (from: string, p: { account: string; livemode: string; key: string; status: number; body: string; requestId: string }) =>
    `UPDATE idempotency_keys k SET response_status = ${p.status}, response_body = ${p.body}, recovery_point = 'finished', locked_at = NULL
  FROM ${from} WHERE k.account_id = ${p.account} AND k.livemode = ${p.livemode} AND k.key = ${p.key} AND k.request_id = ${p.requestId} AND k.response_status IS NULL`,
};
