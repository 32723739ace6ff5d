// The one place where a mandate's state changes after it was created, whoever learnt the news:
// the creating request, the worker, the processor's webhook, a test helper or the merchant
// revoking it. Inside the caller's transaction with the row locked; every change writes its event.
import { and, eq, type SQL } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { mandates } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import type { RequestContext } from '../../kernel/context.js';
import { bankAccountView } from '../../lib/bank-accounts.js';
import { recordEvent } from '../events/service.js';
import type { Attempt } from '../../connectors/router.js';
import { attemptsView } from '../../movement/kind.js';
import type { MandateFailureCode, MandateState } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import type { MandateView } from './schema.js';
import { mandateStates } from './state.js';

export type MandateRow = typeof mandates.$inferSelect;

export function mandateView(row: MandateRow): MandateView {
  return {
    id: toPublicId('mdt', row.id),
    object: 'mandate',
    livemode: row.livemode,
    status: row.status,
    scheme: row.scheme,
    currency: row.currency,
    reference: row.reference,
    max_amount: row.maxAmount,
    customer: { email: row.customerEmail, name: row.customerName ?? '' },
    bank_account: bankAccountView({
      country: row.bankCountry,
      currency: row.bankCurrency,
      last4: row.bankLast4,
      bic: row.bankBic,
      sortCode: row.bankSortCode,
      routingNumber: row.bankRoutingNumber,
      ifsc: row.bankIfsc,
      fingerprint: row.bankFingerprint,
    }),
    connector: row.connector,
    connector_reference: row.connectorReference,
    attempts: attemptsView(row.attempts),
    failure_code: row.failureCode as MandateFailureCode | null,
    failure_message: row.failureMessage,
    revoked_by: row.revokedBy,
    activated_at: row.activatedAt?.toISOString() ?? null,
    last_debit_at: row.lastDebitAt?.toISOString() ?? null,
    metadata: row.metadata,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}


export type MandateUpdate =
  | { kind: 'active'; connector: string; connectorReference: string }
  | { kind: 'pending'; connector: string; connectorReference: string | null }
  | { kind: 'failed'; connector: string | null; connectorReference: string | null; failureCode: MandateFailureCode; failureMessage: string }
  | { kind: 'revoked'; connector: string; connectorReference: string; by: 'bank' | 'merchant' };

export function updateFromMandateState(connector: string, state: MandateState): MandateUpdate {
  switch (state.kind) {
    case 'active':
    case 'pending':
      return { kind: state.kind, connector, connectorReference: state.connectorReference };
    case 'failed':
      return { kind: 'failed', connector, connectorReference: state.connectorReference, failureCode: state.failureCode, failureMessage: state.message };
    case 'revoked':
      return { kind: 'revoked', connector, connectorReference: state.connectorReference, by: state.by };
    default:
      return state satisfies never;
  }
}


export const ABANDONED_MANDATE: MandateUpdate = {
  kind: 'failed',
  connector: null,
  connectorReference: null,
  failureCode: 'processing_error',
  failureMessage: 'The request that created the mandate ended before any connector took it; nothing was registered.',
};


function byId(accountId: string, livemode: boolean, uuid: string): SQL {
  return and(eq(mandates.accountId, accountId), eq(mandates.livemode, livemode), eq(mandates.id, uuid))!;
}

export async function lockMandate(tx: Executor, accountId: string, livemode: boolean, uuid: string): Promise<MandateRow | undefined> {
  const [row] = await tx.select().from(mandates).where(byId(accountId, livemode, uuid)).for('update');
  return row;
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
  rt: Runtime,
): Promise<MandateRow> {
  const now = rt.now();
  const where = byId(row.accountId, row.livemode, row.id);
  const withAttempts = attempts.length ? [...row.attempts, ...(attempts as unknown as Record<string, unknown>[])] : row.attempts;
  const save = async (changes: Partial<MandateRow>) => {
    const [updated] = await tx
      .update(mandates)
      .set({ ...changes, attempts: withAttempts, version: row.version + 1, updatedAt: now })
      .where(where)
      .returning();
    return updated!;
  };

  if (update.kind === 'pending') {
    const firstAcceptance = row.status === 'pending' && row.connector === null;
    const referenceKnown = update.connectorReference === null || update.connectorReference === row.connectorReference;
    if (row.status !== 'pending' || (!firstAcceptance && referenceKnown)) return attempts.length ? save({}) : row;
    const updated = await save({
      connector: update.connector,
      connectorReference: update.connectorReference ?? row.connectorReference,
      nextStatusCheckAt: new Date(now.getTime() + rt.config.statusCheckIntervalMs),
    });
    if (firstAcceptance) await recordEvent(tx, ctx, 'mandate.pending', mandateView(updated), now);
    return updated;
  }

  if (!mandateStates.can(row.status, update.kind)) return attempts.length ? save({}) : row;
  if (update.kind === 'revoked' && row.connector !== null && row.connector !== update.connector) return row;
  const changes: Partial<MandateRow> = {
    status: update.kind,
    connector: update.connector ?? row.connector,
    connectorReference: update.connectorReference ?? row.connectorReference,
    nextStatusCheckAt: null,
  };
  if (update.kind === 'active') Object.assign(changes, { activatedAt: now, lastActivityAt: now });
  if (update.kind === 'failed') Object.assign(changes, { failureCode: update.failureCode, failureMessage: update.failureMessage });
  if (update.kind === 'revoked') changes.revokedBy = update.by;
  const updated = await save(changes);
  await recordEvent(tx, ctx, `mandate.${update.kind}`, mandateView(updated), now);
  return updated;
}

/** Applies a connector's report to a mandate in its own transaction (or the caller's). */
