// Fees and settlement in the journal: a succeeded payment booked with its fee (its own lines,
// merchant balance → fee_revenue) and its net in pending until available_on; the move from pending
// to available; what refunds and reversals draw on pending; a payout's fee. The defaults (no fee,
// T+0) post exactly the entry paymentSucceeded posts, straight to available.
//
// Pending money is tracked per payment in ledger_settlements beside the merchant_pending lines, so
// that the worker knows what to move when, and a refund or a reversal knows what it may still take
// from pending. Whoever changes a settlement row holds its lock: the worker takes due rows with
// SKIP LOCKED; refunds and reversals lock the rows they draw on (before any available slot, the
// order every writer keeps, so none can deadlock another).
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../storage/db.js';
import { journalEntries, journalLines, ledgerSettlements } from '../storage/schema.js';
import { paymentLines, postJournalEntry, type JournalEntryInput, type JournalLine } from './journal.js';

type Movement = Omit<JournalEntryInput, 'lines' | 'type'> & { amount: number };
type PaymentMovement = Movement & { source: { type: 'payment'; id: string } };

export type SettlementRow = typeof ledgerSettlements.$inferSelect;

/** How a succeeded payment is booked: its fee, and when its net becomes available (null: at once). */
export interface PaymentBooking {
  fee: number;
  availableOn: Date | null;
}

/**
 * The lines of a succeeded payment of `amount` booked under `booking`: gross into the merchant's
 * balance (pending until available_on, else available), the fee out of it to fee_revenue. Also the
 * one-statement payment finish's lines (src/domain/payments/one-statement.ts), for the default booking.
 */
export function paymentBookingLines(amount: number, booking: PaymentBooking): JournalLine[] {
  const merchant = booking.availableOn ? 'merchant_pending' : 'merchant_available';
  const lines = paymentLines(amount, merchant);
  if (booking.fee > 0) lines.push({ ledgerAccount: merchant, amount: booking.fee }, { ledgerAccount: 'fee_revenue', amount: -booking.fee });
  return lines;
}

/** A payment succeeded: its lines (paymentBookingLines), and the net pending until available_on. */
export async function bookPayment(tx: Executor, m: PaymentMovement, booking: PaymentBooking): Promise<string> {
  const entryId = await postJournalEntry(tx, { ...m, type: 'payment', lines: paymentBookingLines(m.amount, booking) });
  const net = m.amount - booking.fee;
  if (booking.availableOn && net > 0) {
    await tx.insert(ledgerSettlements).values({
      accountId: m.accountId,
      paymentId: m.source.id,
      livemode: m.livemode,
      currency: m.currency,
      amount: net,
      originalAmount: net,
      availableOn: booking.availableOn,
      entryId,
    });
  }
  return entryId;
}

/**
 * Locks the open settlement rows of a currency, in a fixed order, and answers them in the order to
 * draw on: `first`'s own row, then the money that would become available last.
 */
export async function lockPending(tx: Executor, key: { accountId: string; livemode: boolean; currency: string }, first?: string): Promise<{ total: number; rows: SettlementRow[] }> {
  const rows = await tx
    .select()
    .from(ledgerSettlements)
    .where(
      and(
        eq(ledgerSettlements.accountId, key.accountId),
        eq(ledgerSettlements.livemode, key.livemode),
        eq(ledgerSettlements.currency, key.currency),
        isNull(ledgerSettlements.settledAt),
      ),
    )
    .orderBy(ledgerSettlements.paymentId)
    .for('update');
  const ordered = rows
    .filter((r) => r.amount > 0)
    .sort((a, b) => (a.paymentId === first ? -1 : b.paymentId === first ? 1 : b.availableOn.getTime() - a.availableOn.getTime()));
  return { total: ordered.reduce((sum, r) => sum + r.amount, 0), rows: ordered };
}

/** Takes up to `amount` from the locked rows, in their order; answers how much was taken. */
export async function drawPending(tx: Executor, rows: SettlementRow[], amount: number): Promise<number> {
  let drawn = 0;
  for (const row of rows) {
    if (drawn === amount) break;
    const take = Math.min(row.amount, amount - drawn);
    await tx
      .update(ledgerSettlements)
      .set({ amount: sql`${ledgerSettlements.amount} - ${take}` })
      .where(and(eq(ledgerSettlements.accountId, row.accountId), eq(ledgerSettlements.paymentId, row.paymentId)));
    drawn += take;
  }
  return drawn;
}

/** Claims one due settlement row (SKIP LOCKED: concurrent workers take different rows). */
export async function claimDueSettlement(tx: Executor, now: Date): Promise<SettlementRow | undefined> {
  const [row] = await tx
    .select()
    .from(ledgerSettlements)
    .where(and(isNull(ledgerSettlements.settledAt), sql`${ledgerSettlements.availableOn} <= ${now.toISOString()}`))
    .orderBy(ledgerSettlements.availableOn)
    .limit(1)
    .for('update', { skipLocked: true });
  return row;
}

/** Moves what is left of a claimed row from pending to available and closes it; the entry's id, if anything was left. */
export async function settle(tx: Executor, row: SettlementRow, now: Date): Promise<string | null> {
  const entryId =
    row.amount > 0
      ? await postJournalEntry(tx, {
          accountId: row.accountId,
          livemode: row.livemode,
          type: 'settlement',
          currency: row.currency,
          source: { type: 'payment', id: row.paymentId },
          lines: [
            { ledgerAccount: 'merchant_pending', amount: row.amount },
            { ledgerAccount: 'merchant_available', amount: -row.amount },
          ],
          createdAt: now,
        })
      : null;
  await tx
    .update(ledgerSettlements)
    .set({ settledAt: now, settledEntryId: entryId })
    .where(and(eq(ledgerSettlements.accountId, row.accountId), eq(ledgerSettlements.paymentId, row.paymentId), isNull(ledgerSettlements.settledAt)));
  return entryId;
}

/**
 * A payment taken back after it succeeded (a late direct-debit failure, a charge-back): the
 * processor takes the gross amount back; the merchant loses it out of the payment's own pending
 * money first, then out of available — booked even when available goes negative, since the money
 * is gone whatever the balance says. The fee is kept unless `returnFee` (then it comes back).
 */
export async function paymentReversed(tx: Executor, m: PaymentMovement, opts: { fee?: number; returnFee?: boolean } = {}): Promise<string> {
  const returned = opts.returnFee ? (opts.fee ?? (await feeOf(tx, m.accountId, 'payment', m.source.id))) : 0;
  return takenBack(tx, m, m.source.id, 'payment_reversal', { returned, charged: 0 });
}

/**
 * Money of a succeeded payment the processor took back, as paymentReversed books it: `returned`
 * of the payment's fee comes back, and `charged` (a dispute fee) is charged on top; the merchant's
 * loss comes out of the payment's own pending money first, then out of available (even negative).
 */
export async function takenBack(
  tx: Executor,
  m: Movement,
  paymentId: string,
  type: 'payment_reversal' | 'dispute_withdrawal',
  fee: { returned: number; charged: number },
): Promise<string> {
  const own = await tx
    .select()
    .from(ledgerSettlements)
    .where(and(eq(ledgerSettlements.accountId, m.accountId), eq(ledgerSettlements.paymentId, paymentId), isNull(ledgerSettlements.settledAt)))
    .for('update');
  const loss = m.amount - fee.returned + fee.charged;
  const fromPending = await drawPending(tx, own, loss);
  const fromAvailable = loss - fromPending;
  const lines: JournalLine[] = [{ ledgerAccount: 'processor_clearing', amount: -m.amount }];
  if (fromPending > 0) lines.push({ ledgerAccount: 'merchant_pending', amount: fromPending });
  if (fromAvailable !== 0) lines.push({ ledgerAccount: 'merchant_available', amount: fromAvailable });
  if (fee.returned !== fee.charged) lines.push({ ledgerAccount: 'fee_revenue', amount: fee.returned - fee.charged });
  return postJournalEntry(tx, { ...m, type, lines });
}

/** The fee an object's entry of `type` booked (what fee_revenue received), 0 when none. */
export async function feeOf(tx: Executor, accountId: string, type: 'payment' | 'payout', sourceId: string): Promise<number> {
  const [row] = await tx
    .select({ fee: sql<number>`coalesce(-sum(${journalLines.amount}), 0)::bigint`.mapWith(Number) })
    .from(journalLines)
    .innerJoin(journalEntries, and(eq(journalEntries.accountId, journalLines.accountId), eq(journalEntries.id, journalLines.entryId)))
    .where(
      and(
        eq(journalEntries.accountId, accountId),
        eq(journalEntries.sourceId, sourceId),
        eq(journalEntries.type, type),
        eq(journalLines.ledgerAccount, 'fee_revenue'),
      ),
    );
  return row?.fee ?? 0;
}

/** The fee already given back by the succeeded refunds `refundIds` (their refund_settlement entries). */
export async function feeReturnedBy(tx: Executor, accountId: string, refundIds: string[]): Promise<number> {
  if (refundIds.length === 0) return 0;
  const [row] = await tx
    .select({ fee: sql<number>`coalesce(sum(${journalLines.amount}), 0)::bigint`.mapWith(Number) })
    .from(journalLines)
    .innerJoin(journalEntries, and(eq(journalEntries.accountId, journalLines.accountId), eq(journalEntries.id, journalLines.entryId)))
    .where(
      and(
        eq(journalEntries.accountId, accountId),
        inArray(journalEntries.sourceId, refundIds),
        eq(journalEntries.type, 'refund_settlement'),
        eq(journalLines.ledgerAccount, 'fee_revenue'),
      ),
    );
  return row?.fee ?? 0;
}

/** The open settlements of a merchant, as GET /v1/balance shows pending: per currency and date. */
export async function pendingByDate(tx: Executor, key: { accountId: string; livemode: boolean }) {
  return tx
    .select({ currency: ledgerSettlements.currency, availableOn: ledgerSettlements.availableOn, amount: sql<number>`sum(${ledgerSettlements.amount})::bigint`.mapWith(Number) })
    .from(ledgerSettlements)
    .where(and(eq(ledgerSettlements.accountId, key.accountId), eq(ledgerSettlements.livemode, key.livemode), isNull(ledgerSettlements.settledAt)))
    .groupBy(ledgerSettlements.currency, ledgerSettlements.availableOn)
    .orderBy(ledgerSettlements.currency, ledgerSettlements.availableOn);
}

/** The settlement dates of the payment entries among `entryIds` that put money in pending. */
export async function settlementDates(tx: Executor, accountId: string, entryIds: string[]): Promise<Map<string, Date>> {
  if (entryIds.length === 0) return new Map();
  const rows = await tx
    .select({ entryId: ledgerSettlements.entryId, availableOn: ledgerSettlements.availableOn })
    .from(ledgerSettlements)
    .where(and(eq(ledgerSettlements.accountId, accountId), inArray(ledgerSettlements.entryId, entryIds)));
  return new Map(rows.map((r) => [r.entryId, r.availableOn]));
}
