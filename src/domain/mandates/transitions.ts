// A mandate's states as the engine applies them (src/movement/report.ts), whoever learnt the news:
// the creating request, the worker, the processor's webhook, a test helper or the merchant
// revoking it. A report the table does not allow from the current status (late, repeated, or
// about a mandate revoked meanwhile) changes nothing but the recorded attempts.
import type { Executor } from '../../storage/db.js';
import { mandates } from '../../storage/schema.js';
import { bankAccountViewOfRow } from '../bank-accounts/columns.js';
import { systemContext } from '../../events/service.js';
import { attemptsView, connectorView, unbookedFailure, viewHead, viewTail } from '../../movement/kind.js';
import type { MandateFailureCode } from '../../connectors/types.js';
import type { MandateView } from './schema.js';
import { mandateStates, type MandateGroup, type MandateStatus } from './state.js';
import { moveTo } from '../../movement/transition.js';
import type { ReportRules } from '../../movement/report.js';
import type { MandateUpdate } from '../../connectors/movements/mandate.js';

export function mandateView(row: MandateRow): MandateView {
  return {
    ...viewHead('mdt', 'mandate', row),
    scheme: row.scheme,
    currency: row.currency,
    reference: row.reference,
    max_amount: row.maxAmount,
    customer: { email: row.customerEmail, name: row.customerName ?? '' },
    bank_account: bankAccountViewOfRow(row),
    ...connectorView(row),
    attempts: attemptsView(row.attempts),
    failure_code: row.failureCode as MandateFailureCode | null,
    failure_message: row.failureMessage,
    revoked_by: row.revokedBy,
    activated_at: row.activatedAt?.toISOString() ?? null,
    last_debit_at: row.lastDebitAt?.toISOString() ?? null,
    ...viewTail(row),
  };
}

export type MandateRow = typeof mandates.$inferSelect;


export type { MandateUpdate };

export const ABANDONED_MANDATE: MandateUpdate = {
  kind: 'failed',
  connector: null,
  connectorReference: null,
  failureCode: 'processing_error',
  failureMessage: 'The request that created the mandate ended before any connector took it; nothing was registered.',
};

/** A mandate sent without an answer whose processor still has no record of it once overdue: nothing will register it now. */
export const unbookedMandate = (connector: string): MandateUpdate => unbookedFailure(connector, 'the mandate', 'registered');

/** A mandate's transition table (reaching a status moves nothing else) and how reports move it. */
export const MANDATE_RULES: ReportRules<MandateRow, MandateStatus, 'mandate', MandateGroup, MandateUpdate> = {
  object: 'mandate',
  table: mandates,
  states: mandateStates,
  view: mandateView,
  open: 'awaiting',
  working: 'pending',
  firstWhen: 'no_connector',
  acceptanceEvent: true,
  check: 'nextStatusCheckAt',
  // Revoked (by the merchant, or the customer through their bank) or lapsed once active.
  late: { revoked: 'debitable', expired: 'debitable' },
  settle: (row, reported, now) => {
    // Cancelled or lapsed at the processor before it ever became active: it failed to set up.
    const update: MandateUpdate =
      mandateStates.is(row.status, 'awaiting') && (reported.kind === 'revoked' || reported.kind === 'expired')
        ? { ...reported, kind: 'failed', failureCode: 'mandate_declined', failureMessage: `The processor reports the mandate ${reported.kind} before it became active.` }
        : reported;
    if (update.kind === 'active') return { update, set: { activatedAt: now, lastActivityAt: now } };
    if (update.kind === 'revoked') return { update, set: { revokedBy: update.by } };
    return { update };
  },
};

/** active → expired, by the worker's clock (jobs.ts). */
export function expireMandate(tx: Executor, row: MandateRow, now: Date): Promise<MandateRow> {
  return moveTo(tx, MANDATE_RULES, systemContext(row.accountId, row.livemode), row, 'expired', 'expire', now);
}
