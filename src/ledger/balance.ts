// The merchant's balance and balance transactions: read models over the journal, tenant-scoped.
import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import type { Db } from '../storage/db.js';
import { journalEntries, journalLines, ledgerBalances } from '../storage/schema.js';
import { ID_PREFIXES, parseId, toPublicId, type IdPrefix } from '../kernel/ids.js';
import { ApiError } from '../kernel/errors.js';
import { respond } from '../idempotency/store.js';
import type { Outcome, RequestContext } from '../kernel/context.js';
import type { Page } from '../kernel/pagination.js';
import { listPage, type Resource } from '../storage/tenant.js';
import { pendingByDate, settlementDates } from './settlement.js';
import { MERCHANT_BALANCES, testFunding, type EntryType, type MerchantBalance } from './journal.js';
import type { BalanceTransactionView, BalanceView, FundBalanceBody, ListBalanceTransactionsQuery } from './schema.js';

// Processor fees are the service's cost, not the merchant's money (src/domain/reconciliation): not shown.
const BALANCE_TRANSACTIONS: Resource<typeof journalEntries> = { table: journalEntries, prefix: 'txn', name: 'balance transaction', visible: ne(journalEntries.type, 'processor_fee') };

const MERCHANT_ACCOUNTS = Object.keys(MERCHANT_BALANCES) as (keyof typeof MERCHANT_BALANCES)[];

export async function retrieveBalance(db: Db, ctx: RequestContext): Promise<BalanceView> {
  const rows = await db
    .select({
      ledgerAccount: ledgerBalances.ledgerAccount,
      currency: ledgerBalances.currency,
      total: sql<number>`sum(${ledgerBalances.balance})::bigint`.mapWith(Number),
    })
    .from(ledgerBalances)
    .where(
      and(
        eq(ledgerBalances.accountId, ctx.accountId),
        eq(ledgerBalances.livemode, ctx.livemode),
        inArray(ledgerBalances.ledgerAccount, MERCHANT_ACCOUNTS),
      ),
    )
    .groupBy(ledgerBalances.ledgerAccount, ledgerBalances.currency)
    .orderBy(ledgerBalances.currency);
  const view: BalanceView = { object: 'balance', livemode: ctx.livemode, available: [], pending: [], reserved: [] };
  const currencies = [...new Set(rows.map((r) => r.currency))];
  const dated = await pendingByDate(db, ctx);
  // Every currency the merchant has ever held appears in all three lists, zero where nothing is held.
  for (const currency of currencies) {
    for (const account of MERCHANT_ACCOUNTS) {
      const row = rows.find((r) => r.currency === currency && r.ledgerAccount === account);
      // Liabilities: the merchant's balance is the negated sum of the lines.
      const amount = row ? -row.total : 0;
      const dates = account === 'merchant_pending' && amount !== 0 ? dated.filter((d) => d.currency === currency && d.amount !== 0) : [];
      if (dates.length) view.pending.push(...dates.map((d) => ({ currency, amount: d.amount, available_on: d.availableOn.toISOString() })));
      else view[MERCHANT_BALANCES[account]].push({ currency, amount });
    }
  }
  return view;
}

type EntryRow = typeof journalEntries.$inferSelect;

export function transactionView(row: EntryRow, lines: { ledgerAccount: string; amount: number }[], availableOn?: Date): BalanceTransactionView {
  const changes: Record<MerchantBalance, number> = { available: 0, pending: 0, reserved: 0 };
  let fee = 0;
  for (const line of lines) {
    const part = MERCHANT_BALANCES[line.ledgerAccount as keyof typeof MERCHANT_BALANCES];
    if (part) changes[part] -= line.amount;
    if (line.ledgerAccount === 'fee_revenue') fee -= line.amount;
  }
  const net = changes.available + changes.pending + changes.reserved;
  return {
    id: toPublicId('txn', row.id),
    object: 'balance_transaction',
    livemode: row.livemode,
    type: row.type,
    currency: row.currency,
    amount: net + fee,
    fee,
    net,
    balance_changes: changes,
    source: row.sourceId && row.sourceType ? toPublicId(SOURCE_PREFIXES[row.sourceType], row.sourceId) : null,
    available_on: (availableOn ?? row.createdAt).toISOString(),
    description: row.description,
    created_at: row.createdAt.toISOString(),
  };
}

async function withLines(db: Db, accountId: string, rows: EntryRow[]) {
  if (rows.length === 0) return new Map<string, { ledgerAccount: string; amount: number }[]>();
  const lines = await db
    .select({ entryId: journalLines.entryId, ledgerAccount: journalLines.ledgerAccount, amount: journalLines.amount })
    .from(journalLines)
    .where(
      and(
        eq(journalLines.accountId, accountId),
        inArray(
          journalLines.entryId,
          rows.map((r) => r.id),
        ),
      ),
    );
  const byEntry = new Map<string, { ledgerAccount: string; amount: number }[]>();
  for (const line of lines) byEntry.set(line.entryId, [...(byEntry.get(line.entryId) ?? []), line]);
  return byEntry;
}

/** The public prefix of each kind of journal entry's source: one list for the balance's filter and `ledger check`. */
export const SOURCE_PREFIXES = {
  payment: ID_PREFIXES.payment,
  refund: ID_PREFIXES.refund,
  payout: ID_PREFIXES.payout,
  dispute: ID_PREFIXES.dispute,
} as const satisfies Record<NonNullable<typeof journalEntries.$inferSelect.sourceType>, IdPrefix>;

function sourceFilter(source: string) {
  const type = (Object.keys(SOURCE_PREFIXES) as (keyof typeof SOURCE_PREFIXES)[]).find((t) => source.startsWith(`${SOURCE_PREFIXES[t]}_`));
  const uuid = type && parseId(SOURCE_PREFIXES[type], source);
  if (!type || !uuid) {
    throw new ApiError('parameter_invalid', { param: 'source', message: 'source must be a payment (pay_…), refund (ref_…), payout (po_…) or dispute (dp_…) id.' });
  }
  return and(eq(journalEntries.sourceType, type), eq(journalEntries.sourceId, uuid));
}

export async function listBalanceTransactions(
  db: Db,
  ctx: RequestContext,
  params: ListBalanceTransactionsQuery,
): Promise<Page<BalanceTransactionView>> {
  const filters = () => [
    params.type ? eq(journalEntries.type, params.type as EntryType) : undefined,
    params.currency ? eq(journalEntries.currency, params.currency) : undefined,
    params.source ? sourceFilter(params.source) : undefined,
  ];
  const page = await listPage(db, ctx, BALANCE_TRANSACTIONS, params, filters, (row) => row);
  const lines = await withLines(db, ctx.accountId, page.data);
  const dates = await settlementDates(db, ctx.accountId, page.data.map((r) => r.id));
  return { ...page, data: page.data.map((row) => transactionView(row, lines.get(row.id) ?? [], dates.get(row.id))) };
}

/** POST /v1/test-helpers/balance/fund: credits available through a journal entry (test mode only). */
export async function fundTestBalance(db: Db, ctx: RequestContext, input: FundBalanceBody, now = new Date()): Promise<Outcome> {
  if (ctx.livemode) throw testHelpersOnly();
  return db.transaction(async (tx) => {
    const id = await testFunding(tx, {
      accountId: ctx.accountId,
      livemode: ctx.livemode,
      currency: input.currency,
      source: null,
      description: 'Test-mode balance funding',
      amount: input.amount,
      createdAt: now,
    });
    const view = transactionView(
      { accountId: ctx.accountId, id, livemode: ctx.livemode, type: 'test_funding', currency: input.currency, sourceType: null, sourceId: null, description: 'Test-mode balance funding', createdAt: now },
      [{ ledgerAccount: 'merchant_available', amount: -input.amount }],
    );
    return respond(tx, ctx, 201, view);
  });
}

export function testHelpersOnly(): ApiError {
  return new ApiError('permission_denied', { message: 'Test helpers are available with test-mode keys only.' });
}
