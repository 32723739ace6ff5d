// Reconciliation runs (rec_…): one connector account's settlement records for a period against the
// ledger (docs/reconciliation.md). The records are fetched from the processor (Stripe, the
// simulators) or read from an uploaded report (Adyen) before any transaction opens: no database
// transaction is held across a processor call. Then, in one transaction, they are matched
// (match.ts), the processor fees they show are booked once each (processor_fees' key is the
// processor's id of the record, so running a period again books nothing twice), and the run, its
// event and the idempotency record are written.
import { eq } from 'drizzle-orm';
import type { Db, Tx } from '../../storage/db.js';
import { processorFees, reconciliationRuns } from '../../storage/schema.js';
import { ApiError } from '../../kernel/errors.js';
import { newId, toPublicId } from '../../kernel/ids.js';
import type { RequestContext } from '../../kernel/context.js';
import { idParam } from '../../kernel/pagination.js';
import { loadOne, type Resource, tenantReads } from '../../storage/tenant.js';
import { respond } from '../../idempotency/store.js';
import { recordEvent } from '../../events/service.js';
import { processorFeeBooked } from '../../ledger/journal.js';
import { callConnector } from '../../connectors/router.js';
import { openCredentials } from '../../connectors/account-credentials.js';
import type { SettlementPeriod, SettlementRecord } from '../../connectors/types.js';
import { SIMULATED_PROCESSORS } from '../../connectors/simulator/processor.js';
import type { Runtime } from '../../runtime.js';
import { CONNECTOR_ACCOUNTS } from '../connector-accounts/service.js';
import { readSettlementReport } from './adyen-report.js';
import { match } from './match.js';
import type { ListReconciliationRunsQuery, ReconciliationRunView } from './schema.js';

export const RECONCILIATION_RUNS: Resource<typeof reconciliationRuns> = { table: reconciliationRuns, prefix: 'rec', name: 'reconciliation run' };

type RunRow = typeof reconciliationRuns.$inferSelect;

export function reconciliationRunView(row: RunRow): ReconciliationRunView {
  return {
    id: toPublicId('rec', row.id),
    object: 'reconciliation_run',
    livemode: row.livemode,
    status: row.status,
    connector_account: toPublicId('ca', row.connectorAccountId),
    connector: row.connector,
    source: row.source,
    period_start: row.periodStart.toISOString(),
    period_end: row.periodEnd.toISOString(),
    records: row.records,
    matched: row.matched,
    exceptions: row.exceptions as ReconciliationRunView['exceptions'],
    fees_booked: row.feesBooked,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export const { retrieve: retrieveReconciliationRun, list: listReconciliationRuns } = tenantReads(RECONCILIATION_RUNS, reconciliationRunView, (q: ListReconciliationRunsQuery) => {
  const uuid = q.connector_account ? idParam('ca', 'connector_account', q.connector_account) : undefined;
  return [uuid ? eq(reconciliationRuns.connectorAccountId, uuid) : undefined];
});

const DAY_MS = 86_400_000;
const SIMULATORS = new Set(SIMULATED_PROCESSORS.map((p) => p.name));

/**
 * How long after a movement its processor may still not list it: within it, a movement missing
 * from the records is not an exception yet. The simulators settle at once (docs/test-mode.md).
 */
export function settlementDelayMs(connector: string): number {
  if (SIMULATORS.has(connector)) return 0;
  return connector === 'adyen' ? 3 * DAY_MS : 2 * DAY_MS;
}

/**
 * How long before the period the processor may have dated money for an object that reached us
 * within it: a processor dates a record when it moves the money, we date the object when we learn
 * of it (a chargeback opened before midnight whose webhook came after; a webhook retried for days —
 * Stripe retries for up to three). Records that old are read with the period's and count only for
 * the period's own objects (match.ts).
 */
export function lookbackMs(connector: string): number {
  return connector === 'stripe' ? 3 * DAY_MS : DAY_MS;
}

export interface RunInput {
  connector_account: string;
  period_start?: string;
  period_end?: string;
  /** An uploaded report's text (Adyen's Settlement details report); absent: the records are fetched. */
  report?: string;
}

interface Collected {
  source: string;
  records: SettlementRecord[];
  period: SettlementPeriod;
}

function periodOf(input: RunInput, now: Date, report?: { from: Date | null; to: Date | null }): SettlementPeriod {
  const to = input.period_end ? new Date(input.period_end) : report?.to ? new Date(+report.to + 1) : now;
  const from = input.period_start ? new Date(input.period_start) : (report?.from ?? new Date(+to - DAY_MS));
  if (from >= to) throw new ApiError('parameter_invalid', { param: 'period_start', message: 'period_start must be before period_end.' });
  return { from, to };
}

async function collect(rt: Runtime, ctx: RequestContext, account: { id: string; connector: string; row: Parameters<typeof openCredentials>[1] }, input: RunInput): Promise<Collected> {
  const now = rt.now();
  if (input.report !== undefined) {
    if (account.connector !== 'adyen') {
      throw new ApiError('parameter_invalid', { param: 'connector_account', message: `An uploaded report is read for adyen connector accounts; ${account.id} is ${account.connector}, whose records are fetched.` });
    }
    const merchantAccount = openCredentials(rt.encryptor, account.row).merchant_account ?? '';
    const report = readSettlementReport(input.report, merchantAccount);
    const period = periodOf(input, now, report);
    const earliest = +period.from - lookbackMs(account.connector);
    return { source: 'adyen_settlement_report', period, records: report.records.filter((r) => +r.at >= earliest && r.at < period.to) };
  }
  if (account.connector === 'adyen') {
    throw new ApiError('parameter_missing', { param: 'report', message: "Adyen's records are its Settlement details report: upload it as the text/csv body." });
  }
  if (!fetchable(account.connector)) {
    throw new ApiError('parameter_invalid', { param: 'connector_account', message: `${account.connector}'s settlement records can be neither fetched nor uploaded here; reconciliation takes stripe, adyen and simulator connector accounts.` });
  }
  const period = periodOf(input, now);
  const guarded = await callConnector(
    rt.callsFor({ accountId: ctx.accountId, livemode: ctx.livemode }),
    account.id,
    async (connector, signal) => {
      const records = await connector.settlementRecords!({ from: new Date(+period.from - lookbackMs(account.connector)), to: period.to }, signal);
      return Array.isArray(records) ? { kind: 'records' as const, records } : records;
    },
    'reconciliation.fetch',
  );
  if ('skipped' in guarded || guarded.result.kind === 'error') {
    throw new ApiError('processor_unavailable', { message: `The processor did not give its settlement records${'skipped' in guarded ? ' (its circuit is open)' : `: ${(guarded.result as { message: string }).message}`}; nothing was booked.` });
  }
  return { source: account.connector === 'stripe' ? 'stripe_balance_transactions' : 'simulator_report', period, records: (guarded.result as { records: SettlementRecord[] }).records };
}

/** Books each record's fee once; answers what this call booked, per currency. */
async function bookFees(tx: Tx, ctx: RequestContext, runId: string, routeKey: string, records: SettlementRecord[], objectOf: Map<SettlementRecord, { kind: string; uuid: string } | undefined>, at: Date) {
  const booked: Record<string, number> = {};
  for (const record of records) {
    if (record.fee <= 0) continue;
    const entryId = newId('txn').uuid;
    const inserted = await tx
      .insert(processorFees)
      .values({ accountId: ctx.accountId, livemode: ctx.livemode, connector: routeKey, recordId: record.recordId, runId, entryId, amount: record.fee, currency: record.currency, createdAt: at })
      .onConflictDoNothing()
      .returning({ entryId: processorFees.entryId });
    if (inserted.length === 0) continue;
    const object = objectOf.get(record);
    const source = object && object.kind !== 'dispute' ? { type: object.kind as 'payment' | 'refund' | 'payout', id: object.uuid } : object ? { type: 'dispute' as const, id: object.uuid } : null;
    await processorFeeBooked(tx, { id: entryId, accountId: ctx.accountId, livemode: ctx.livemode, currency: record.currency, source, amount: record.fee, description: `Processor fee (${record.recordId})`, createdAt: at });
    booked[record.currency] = (booked[record.currency] ?? 0) + record.fee;
  }
  return booked;
}

/** Runs a reconciliation for the caller's connector account; answers 201 with the run. */
export async function runReconciliation(db: Db, rt: Runtime, ctx: RequestContext, input: RunInput) {
  const row = await loadOne(db, ctx, CONNECTOR_ACCOUNTS, input.connector_account, 'connector_account');
  const id = toPublicId('ca', row.id);
  const collected = await collect(rt, ctx, { id, connector: row.connector, row }, input);
  const routeKeys = SIMULATORS.has(row.connector) ? [id, row.connector] : [id];
  const now = rt.now();
  return db.transaction(async (tx) => {
    const result = await match(tx, { accountId: ctx.accountId, livemode: ctx.livemode, routeKeys }, collected.period, collected.records, {
      settledBy: new Date(+now - settlementDelayMs(row.connector)),
      skipUnknown: collected.source === 'simulator_report',
    });
    const runId = newId('rec').uuid;
    const feesBooked = await bookFees(tx, ctx, runId, id, collected.records.filter((r) => !result.ignored.has(r)), result.objectOf, now);
    const [run] = await tx
      .insert(reconciliationRuns)
      .values({
        accountId: ctx.accountId, id: runId, livemode: ctx.livemode, connectorAccountId: row.id, connector: row.connector, source: collected.source,
        periodStart: collected.period.from, periodEnd: collected.period.to, status: 'completed', records: result.records, matched: result.matched,
        exceptions: result.exceptions as unknown as Record<string, unknown>[], feesBooked, createdAt: now, updatedAt: now,
      })
      .returning();
    const view = reconciliationRunView(run!);
    await recordEvent(tx, ctx, 'reconciliation_run.completed', view, now);
    return respond(tx, ctx, 201, view);
  });
}

/** The connectors whose records can be fetched (the worker's daily runs): Stripe and the simulators. */
export const FETCHABLE: readonly string[] = ['stripe', ...SIMULATORS];
const fetchable = (connector: string) => FETCHABLE.includes(connector);

