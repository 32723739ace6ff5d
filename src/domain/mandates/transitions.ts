// The one place where a mandate's state changes after it was created, whoever learnt the news:
// the creating request, the worker, the processor's webhook, a test helper or the merchant
// revoking it. Inside the caller's transaction with the row locked; every change writes its event.
import type { Executor } from '../../storage/db.js';
import { mandates } from '../../storage/schema.js';
import type { RequestContext } from '../../kernel/context.js';
import { bankAccountViewOfRow } from '../bank-accounts/columns.js';
import { recordEvent, systemContext } from '../../events/service.js';
import type { Attempt } from '../../connectors/router.js';
import { attemptsView, unbookedFailure, viewHead, viewTail } from '../../movement/kind.js';
import type { MandateFailureCode } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import type { MandateView } from './schema.js';
import { mandateStates, type MandateStatus } from './state.js';
import { moveTo, save, withAttempts, type Transitions } from '../../movement/transition.js';

export type MandateRow = typeof mandates.$inferSelect;

export function mandateView(row: MandateRow): MandateView {
  return {
    ...viewHead('mdt', 'mandate', row),
    scheme: row.scheme,
    currency: row.currency,
    reference: row.reference,
    max_amount: row.maxAmount,
    customer: { email: row.customerEmail, name: row.customerName ?? '' },
    bank_account: bankAccountViewOfRow(row),
    connector: row.connector,
    connector_reference: row.connectorReference,
    attempts: attemptsView(row.attempts),
    failure_code: row.failureCode as MandateFailureCode | null,
    failure_message: row.failureMessage,
    revoked_by: row.revokedBy,
    activated_at: row.activatedAt?.toISOString() ?? null,
    last_debit_at: row.lastDebitAt?.toISOString() ?? null,
    ...viewTail(row),
  };
}


export type MandateUpdate =
  | { kind: 'active'; connector: string; connectorReference: string }
  | { kind: 'pending'; connector: string; connectorReference: string | null }
  | { kind: 'failed'; connector: string | null; connectorReference: string | null; failureCode: MandateFailureCode; failureMessage: string }
  | { kind: 'revoked'; connector: string; connectorReference: string; by: 'bank' | 'merchant' }
  /** Lapsed at the processor (unused too long, or consumed). */
  | { kind: 'expired'; connector: string; connectorReference: string };

export const ABANDONED_MANDATE: MandateUpdate = {
  kind: 'failed',
  connector: null,
  connectorReference: null,
  failureCode: 'processing_error',
  failureMessage: 'The request that created the mandate ended before any connector took it; nothing was registered.',
};

/** A mandate sent without an answer whose processor still has no record of it once overdue: nothing will register it now. */
export const unbookedMandate = (connector: string): MandateUpdate => unbookedFailure(connector, 'the mandate', 'registered');

/** A mandate's transition table; reaching a status moves nothing else. */
const MANDATE_TRANSITIONS: Transitions<MandateRow, MandateStatus, 'mandate'> = { object: 'mandate', table: mandates, states: mandateStates, view: mandateView };

/** active → expired, by the worker's clock (jobs.ts). */
export function expireMandate(tx: Executor, row: MandateRow, now: Date): Promise<MandateRow> {
  return moveTo(tx, MANDATE_TRANSITIONS, systemContext(row.accountId, row.livemode), row, 'expired', 'expire', now);
}

/**
 * The one place where a mandate's outcome is applied, whoever learnt it (the creating request,
 * the worker, the processor's webhook, a test helper), inside the caller's transaction with the
 * row locked. A report the transition table does not allow from the current status (late,
 * repeated, or about a mandate revoked meanwhile) changes nothing but the recorded attempts.
 */
export async function applyMandateUpdate(
  tx: Executor,
  ctx: RequestContext,
  row: MandateRow,
  update: MandateUpdate,
  attempts: Attempt[],
  rt: Pick<Runtime, 'now' | 'config'>,
): Promise<MandateRow> {
  const now = rt.now();
  const t = MANDATE_TRANSITIONS;
  const recorded = { attempts: withAttempts(row, attempts) };
  const unchanged = () => (attempts.length ? save(tx, t, row, now, recorded) : row);

  if (update.kind === 'pending') {
    const firstAcceptance = mandateStates.is(row.status, 'awaiting') && row.connector === null;
    const referenceKnown = update.connectorReference === null || update.connectorReference === row.connectorReference;
    if (!mandateStates.is(row.status, 'awaiting') || (!firstAcceptance && referenceKnown)) return unchanged();
    const updated = await save(tx, t, row, now, {
      ...recorded,
      connector: update.connector,
      connectorReference: update.connectorReference ?? row.connectorReference,
      nextStatusCheckAt: new Date(now.getTime() + rt.config.statusCheckIntervalMs),
    });
    if (firstAcceptance) await recordEvent(tx, ctx, 'mandate.pending', mandateView(updated), now);
    return updated;
  }

  // Cancelled or lapsed at the processor before it ever became active: it failed to set up.
  if (mandateStates.is(row.status, 'awaiting') && (update.kind === 'revoked' || update.kind === 'expired')) {
    const message = `The processor reports the mandate ${update.kind} before it became active.`;
    return applyMandateUpdate(tx, ctx, row, { ...update, kind: 'failed', failureCode: 'mandate_declined', failureMessage: message }, attempts, rt);
  }
  // Late, repeated, or about a mandate revoked meanwhile: nothing changes but the recorded calls.
  if (!mandateStates.can(row.status, update.kind)) return unchanged();
  if ((update.kind === 'revoked' || update.kind === 'expired') && row.connector !== null && row.connector !== update.connector) return row;
  const changes: Partial<MandateRow> = {
    ...recorded,
    connector: update.connector ?? row.connector,
    connectorReference: update.connectorReference ?? row.connectorReference,
    nextStatusCheckAt: null,
  };
  if (update.kind === 'active') Object.assign(changes, { activatedAt: now, lastActivityAt: now });
  if (update.kind === 'failed') Object.assign(changes, { failureCode: update.failureCode, failureMessage: update.failureMessage });
  if (update.kind === 'revoked') changes.revokedBy = update.by;
  return moveTo(tx, t, ctx, row, update.kind, update.kind, now, changes);
}
