// What happens to a request's Idempotency-Key when the request ends in an error: a 4xx from
// executing is stored for replay; a 5xx, 409 or 429 lets the key go so that a retry may run it.
// When the database is away, the key cannot be let go now: it is let go as soon as the database
// answers again, so a client retrying with the same key gets in within seconds of the recovery
// instead of meeting 409 idempotency_key_in_use until the lock timeout. Letting go late is safe:
// both statements act only while this request still owns the key and nothing was stored on it.
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Db } from '../storage/db.js';
import { isDatabaseUnavailable } from '../kernel/outage.js';
import { keepOrReleaseKey } from '../idempotency/store.js';
import type { ApiError } from '../kernel/errors.js';
import type { Outcome, RequestContext } from '../kernel/context.js';

export interface KeyAfterError {
  /** `cause`: what was thrown (an outage makes the fate of the request's last statement unknown). */
  settle(req: FastifyRequest, outcome: Outcome, error: ApiError, cause: unknown): Promise<void>;
  /** Makes one last try at every key still owed, and stops trying. */
  close(): Promise<void>;
}

const FIRST_RETRY_MS = 250;
const LONGEST_RETRY_MS = 2000;

export function keyAfterError(db: Db, lockTimeoutS: number): KeyAfterError {
  const owed = new Map<NodeJS.Timeout, () => Promise<void>>();

  const settleNow = (ctx: RequestContext, outcome: Outcome) => keepOrReleaseKey(db, ctx, outcome);

  // Past the lock timeout another request may take the key over anyway: trying longer is pointless.
  const later = (ctx: RequestContext, outcome: Outcome, log: FastifyBaseLogger, untilMs: number, delayMs: number) => {
    if (Date.now() + delayMs > untilMs) return;
    const run = () =>
      settleNow(ctx, outcome).then(
        () => log.debug({ request_id: ctx.requestId }, 'idempotency key settled after the database came back'),
        (err: unknown) => {
          if (isDatabaseUnavailable(err)) later(ctx, outcome, log, untilMs, Math.min(delayMs * 2, LONGEST_RETRY_MS));
          else log.error({ err, request_id: ctx.requestId }, 'could not settle idempotency key');
        },
      );
    const timer = setTimeout(() => {
      owed.delete(timer);
      void run();
    }, delayMs);
    timer.unref();
    owed.set(timer, () => settleNow(ctx, outcome).catch(() => undefined));
  };

  return {
    async settle(req, outcome, error, cause) {
      const ctx = req.ctx;
      // A one-statement path claims its deferred key in the statement that does the work; cut off
      // from the database, it cannot know whether that statement committed: the key may be ours.
      if (ctx && !ctx.idempotency && ctx.deferredIdempotency && isDatabaseUnavailable(cause)) {
        ctx.idempotency = { key: ctx.deferredIdempotency.key, recoveryPoint: 'started' };
      }
      if (!ctx?.idempotency || error.code === 'idempotency_key_in_use' || error.code === 'idempotency_key_reused') return;
      try {
        await settleNow(ctx, outcome);
      } catch (err) {
        if (isDatabaseUnavailable(err)) later(ctx, outcome, req.log, Date.now() + lockTimeoutS * 1000, FIRST_RETRY_MS);
        // Otherwise the key stays locked; it becomes claimable again after the lock timeout.
        else req.log.error({ err }, 'could not settle idempotency key');
      }
    },
    async close() {
      const last = [...owed];
      owed.clear();
      for (const [timer] of last) clearTimeout(timer);
      await Promise.all(last.map(([, settle]) => settle()));
    },
  };
}
