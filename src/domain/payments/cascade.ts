// Cascading retries (API.md §7, docs/declines.md): a payment declined with a decline type its
// routing rule's cascade lists is sent, as a new attempt of the same payment in the same request,
// to the rule's next connector that has not declined it, until one takes it or max_attempts (the
// first included) run out. `authentication_required` on session with a return_url is first retried
// at the same connector with 3-D Secure requested. Only declines cascade: an unknown outcome is
// located and verified as every payment's is (src/movement/calls.ts).
//
// Attempt 1 is sent under the payment's id, as every payment before cascades was; attempt n > 1
// under `<id>_<n>`, a new idempotency key and reference at the processor. Before attempt n is sent,
// a short transaction of its own records it on the payment — its number, the connectors it may go
// to, the calls so far — with the networks' reattempt count (reattempts.ts). A request that crashes
// after that resumes at attempt n: its retry, or the worker, asks the attempt's connectors under
// its reference (the payment's `reference` and `route` below), and sends only if none holds it.
// The rule's cascade is frozen on the payment when it is created: a change of rules never changes
// where a payment in flight may go.
import type { CascadeRule, StoredCascade } from '../../storage/routing-rules.js';
import type { ChargeRequest, ChargeState } from '../../connectors/types.js';
import type { Attempt } from '../../connectors/router.js';
import { toPublicId } from '../../kernel/ids.js';
import type { RequestContext } from '../../kernel/context.js';
import type { Runtime } from '../../runtime.js';
import type { Db } from '../../storage/db.js';
import { attemptReferenceOf, attemptRoute, type Cascade } from '../../movement/kind.js';
import { lockRow } from '../../movement/apply.js';
import { abandonAfterMs } from '../../movement/saga.js';
import { save, withAttempts } from '../../movement/transition.js';
import { payments } from '../../storage/schema.js';
import { cardKeyOf, recordDecline, takeOffSessionReattempt, takeReattempt } from './reattempts.js';
import { savedCardUseOf } from './saved-cards.js';
import { markDeclined } from '../routing/strategy.js';
import { PAYMENT_RULES, type PaymentRow, type PaymentUpdate } from './transitions.js';

type Declined = Extract<ChargeState, { kind: 'declined' }>;

/** The processor's reference (and idempotency key) of the payment's current attempt. */
export function attemptReference(row: Pick<PaymentRow, 'id' | 'attemptNumber'>): string {
  return attemptReferenceOf(toPublicId('pay', row.id), row.attemptNumber);
}

/** The most calls one request of the payment makes: each connector once, and one more for a 3-D Secure retry. */
export function callsOf(route: readonly string[], cascade: CascadeRule | null | undefined): number {
  return route.length + (cascade?.on.includes('authentication_required') ? 1 : 0);
}

/** What the request of the current attempt adds: its reference, and 3-D Secure once a cascade asked for it. */
export function attemptFields(row: Pick<PaymentRow, 'id' | 'attemptNumber' | 'cascade'>): Pick<ChargeRequest, 'reference' | 'threeDSecure'> {
  return { reference: attemptReference(row), ...(row.cascade?.three_ds ? { threeDSecure: 'requested' as const } : {}) };
}

/**
 * The connectors that declined the payment in an earlier attempt (and in `calls`, not yet
 * recorded): a cascade never sends it to them again, and routing's explanation names them
 * "already declined".
 */
export function declinedConnectors(row: Pick<PaymentRow, 'attempts'>, calls: readonly Attempt[] = []): Set<string> {
  const all = [...(row.attempts as unknown as Attempt[]), ...calls];
  return new Set(all.filter((a) => a.outcome === 'declined').map((a) => a.connector));
}

const isOffSession = (row: PaymentRow) => (savedCardUseOf(row)?.off_session ?? null) !== null;

function retryLimited(connector: string | null, declined: Declined | undefined, why: string): PaymentUpdate {
  return {
    kind: 'failed',
    connector,
    connectorReference: declined?.connectorReference ?? null,
    failureCode: 'retry_limit_reached',
    failureMessage: why,
    ...(declined?.declineType ? { declineType: declined.declineType } : {}),
  };
}

/** Where attempt n + 1 may go after `connector` declined attempt n with `type`; empty: nowhere. */
function nextRoute(row: PaymentRow, connector: string, type: string, declinedBy: Set<string>): { route: string[]; threeDs: boolean } {
  const candidates = attemptRoute(row);
  const rest = candidates.slice(candidates.indexOf(connector) + 1).filter((name) => !declinedBy.has(name));
  const threeDs = type === 'authentication_required' && row.returnUrl !== null && !row.cascade?.three_ds && !isOffSession(row);
  return { route: threeDs ? [connector, ...rest] : rest, threeDs };
}

/**
 * An off-session payment of a card declined lately is a reattempt; a customer present is not:
 * past the networks' limits it fails before any call (the admission's check before sending).
 */
export async function offSessionReattempt(db: Db, rt: Runtime, ctx: RequestContext, row: PaymentRow): Promise<PaymentUpdate | undefined> {
  const key = cardKeyOf(row);
  if (!key || !isOffSession(row)) return undefined;
  const why = await takeOffSessionReattempt(db, ctx, key, row.id, rt.now());
  return why === undefined ? undefined : retryLimited(null, undefined, why);
}

export const paymentCascade: Cascade<PaymentRow, ChargeRequest, PaymentUpdate> = {
  async next(db, rt, ctx, row, request, execution) {
    const policy = row.cascade;
    const key = cardKeyOf(row);
    if (!policy || !key || execution.result.kind !== 'declined' || execution.connector === null) return undefined;
    const declined = execution.result as Declined;
    const type = declined.declineType;
    if (type === undefined || !policy.on.includes(type) || row.attemptNumber >= policy.max_attempts) return undefined;
    const connector = execution.connector;
    const declinedBy = declinedConnectors(row, execution.attempts);
    const { route, threeDs } = nextRoute(row, connector, type, declinedBy);
    if (route.length === 0) return undefined;
    const now = rt.now();
    // Built before the transaction: a saved card is unsealed in a short transaction of its own.
    const sent = await request();
    return db.transaction(async (tx) => {
      const locked = await lockRow<PaymentRow>(tx, payments, ctx.accountId, ctx.livemode, row.id);
      // Settled meanwhile (the worker, a webhook) or taken over by another request: what stands stands.
      if (!locked || locked.status !== 'pending' || locked.connector !== null || locked.attemptNumber !== row.attemptNumber) return undefined;
      const attempts = withAttempts(locked, execution.attempts);
      await recordDecline(tx, ctx, key, row.id, declined, now);
      const refused = await takeReattempt(tx, ctx, key, row.id, now, true);
      if (refused) {
        await save(tx, PAYMENT_RULES, locked, now, { attempts });
        return { update: retryLimited(connector, declined, refused) };
      }
      const cascade: StoredCascade = { ...policy, route, ...(threeDs || policy.three_ds ? { three_ds: true } : {}) };
      const next = await save(tx, PAYMENT_RULES, locked, now, {
        attemptNumber: locked.attemptNumber + 1,
        cascade,
        attempts,
        // The explanation the payment answers names why the connectors behind it were left.
        routing: locked.routing && [...declinedBy, connector].reduce(markDeclined, locked.routing),
        // The request still works on it: the worker looks only once its remaining calls are overdue.
        nextStatusCheckAt: new Date(now.getTime() + abandonAfterMs(rt, route.length)),
      });
      return { row: next, request: { ...sent, ...attemptFields(next) } };
    });
  },
};
