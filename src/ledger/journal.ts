// The double-entry journal: the one place that writes it (besides the one-statement payment
// finish, which takes its lines from settlement.ts, its balance changes from here and its SQL
// from journal-sql.ts, as postJournalEntry does). Every
// movement of money is an entry whose signed lines (debit positive, credit negative) sum to zero;
// this function refuses any other, and a deferred constraint trigger checks it again at commit
// (migration 0002), so not even hand-written SQL can leave an unbalanced entry behind. The journal
// is append-only.
//
// Balances are running sums of the lines, kept in ledger_balances in the same statement as the
// entry. Each posting adds to one of BALANCE_SLOTS rows per ledger account (picked at random), so
// that concurrent payments of one merchant do not queue on a single hot row; a balance is the sum
// of its slots. A debit that must not overdraw (payouts) locks every slot of the account first.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Executor } from '../storage/db.js';
import { rawQuery, type RawStatement } from '../storage/raw.js';
import { journalJson, journalWrites } from './journal-sql.js';
import { newId } from '../kernel/ids.js';

/**
 * Merchant accounts are liabilities (what the service owes the merchant): a credit raises them, so
 * the merchant's balance is the negated sum of their lines. The others are the service's own
 * assets and contra accounts.
 */
export const LEDGER_ACCOUNTS = [
  'merchant_available',
  'merchant_pending',
  'merchant_reserved',
  /** Money held for us at processors: debited when a payment succeeds, credited when a refund or a payout leaves. */
  'processor_clearing',
  /** The counterpart of test-mode balance funding. */
  'test_funding',
  /** Fees the service earned: credited out of the merchant's balance (src/ledger/settlement.ts). */
  'fee_revenue',
  /** What processors charged us, found in their settlement records (src/domain/reconciliation): fee_revenue less this is the margin. */
  'processor_fees',
] as const;
export type LedgerAccount = (typeof LEDGER_ACCOUNTS)[number];

export const MERCHANT_BALANCES = { merchant_available: 'available', merchant_pending: 'pending', merchant_reserved: 'reserved' } as const;
export type MerchantBalance = (typeof MERCHANT_BALANCES)[keyof typeof MERCHANT_BALANCES];

export const ENTRY_TYPES = [
  'payment',
  'refund',
  'refund_settlement',
  'refund_failure',
  'test_funding',
  'payout',
  'payout_paid',
  'payout_release',
  'payout_return',
  /** Pending money became available (src/ledger/settlement.ts). */
  'settlement',
  /** A succeeded payment taken back: a late debit failure, a charge-back. */
  'payment_reversal',
  /** A dispute's amount, and its fee, withdrawn by the processor (src/domain/disputes). */
  'dispute_withdrawal',
  /** A won dispute's amount given back (and its fee, where the processor gives it back). */
  'dispute_reinstatement',
  /** A processor's fee found in its settlement records, taken out of the money it holds for us (src/domain/reconciliation). */
  'processor_fee',
] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];

export const BALANCE_SLOTS = 16;

export interface JournalLine {
  ledgerAccount: LedgerAccount;
  /** Minor units; debit positive, credit negative. */
  amount: number;
}

export interface JournalEntryInput {
  accountId: string;
  livemode: boolean;
  type: EntryType;
  currency: string;
  /** The object behind the movement, if any. */
  source: { type: 'payment' | 'refund' | 'payout' | 'dispute'; id: string } | null;
  /** The entry's id (UUID), when the caller must know it before posting (a unique key naming it); else a new one. */
  id?: string;
  description?: string;
  lines: JournalLine[];
  createdAt: Date;
}

export class UnbalancedEntryError extends Error {}

/** Refuses anything but a balanced entry of at least two non-zero integer lines. */
export function assertBalanced(lines: readonly JournalLine[]): void {
  if (lines.length < 2) throw new UnbalancedEntryError('a journal entry needs at least two lines');
  let sum = 0;
  for (const line of lines) {
    if (!Number.isSafeInteger(line.amount) || line.amount === 0) {
      throw new UnbalancedEntryError(`journal line amounts are non-zero integers, got ${line.amount}`);
    }
    sum += line.amount;
  }
  if (sum !== 0) throw new UnbalancedEntryError(`journal entry lines sum to ${sum}, not 0`);
}

export interface BalanceChange {
  ledgerAccount: LedgerAccount;
  amount: number;
  slot: number;
}

/**
 * Checks an entry's lines and works out what it adds to the balances: one row per ledger account,
 * each on a random slot, in the order the journal's statement locks them (journal-sql.ts: ledger
 * account in byte order, then slot). Used by postJournalEntry and by the one-statement payment finish.
 */
export function balanceChanges(lines: readonly JournalLine[], randomSlot = defaultSlot): BalanceChange[] {
  assertBalanced(lines);
  const perAccount = new Map<LedgerAccount, number>();
  for (const line of lines) perAccount.set(line.ledgerAccount, (perAccount.get(line.ledgerAccount) ?? 0) + line.amount);
  return [...perAccount.entries()]
    .filter(([, amount]) => amount !== 0)
    .map(([ledgerAccount, amount]) => ({ ledgerAccount, amount, slot: randomSlot() }))
    .sort((a, b) => (a.ledgerAccount < b.ledgerAccount ? -1 : a.ledgerAccount > b.ledgerAccount ? 1 : a.slot - b.slot));
}

const POST_ENTRY: RawStatement = {
  name: 'journal_post_entry_v2',
  text: `WITH ${journalWrites({
    account: '$1::uuid',
    livemode: '$2::boolean',
    id: '$3::uuid',
    type: '$4::text',
    currency: '$5::text',
    sourceType: '$6::text',
    sourceId: '$7::uuid',
    description: '$8::text',
    createdAt: '$9::timestamptz',
    lines: '$10::jsonb',
    balances: '$11::jsonb',
  })}
SELECT 1 AS posted`,
};

/** Posts one entry, its lines and the balance changes in a single statement of the caller's transaction. */
export async function postJournalEntry(tx: Executor, input: JournalEntryInput, randomSlot = defaultSlot): Promise<string> {
  const balances = balanceChanges(input.lines, randomSlot);
  const uuid = input.id ?? newId('txn').uuid;
  await rawQuery(tx, POST_ENTRY, [
    input.accountId,
    input.livemode,
    uuid,
    input.type,
    input.currency,
    input.source?.type ?? null,
    input.source?.id ?? null,
    input.description ?? null,
    input.createdAt.toISOString(),
    journalJson.lines(input.lines),
    journalJson.balances(balances),
  ]);
  return uuid;
}

function defaultSlot(): number {
  return crypto.randomInt(BALANCE_SLOTS);
}

// ---- the movements the service makes ------------------------------------------------------------

type Movement = Omit<JournalEntryInput, 'lines' | 'type'> & { amount: number };

/** A payment succeeded: the processor holds the money for us, the merchant's available balance grows. */
export function paymentSucceeded(tx: Executor, m: Movement) {
  return postJournalEntry(tx, { ...m, type: 'payment', lines: paymentLines(m.amount) });
}

/** A succeeded payment: the processor holds the money for us, and we owe it to the merchant (at once, unless `merchant` says pending). */
export function paymentLines(amount: number, merchant: 'merchant_available' | 'merchant_pending' = 'merchant_available'): JournalLine[] {
  return [
    { ledgerAccount: 'processor_clearing', amount },
    { ledgerAccount: merchant, amount: -amount },
  ];
}

/**
 * A refund was asked for: its amount leaves pending (`fromPending`, drawn by the caller from the
 * settlement rows it locked) and available (the rest), and is reserved until the processor
 * answers. Like a payout it must not overdraw, so the caller has locked the available balance
 * (lockAvailableBalance) and the debit goes to one of the locked slots.
 */
export function refundCreated(tx: Executor, m: Movement, debitSlot: number, fromPending = 0) {
  const lines: JournalLine[] = [];
  if (fromPending > 0) lines.push({ ledgerAccount: 'merchant_pending', amount: fromPending });
  if (m.amount > fromPending) lines.push({ ledgerAccount: 'merchant_available', amount: m.amount - fromPending });
  lines.push({ ledgerAccount: 'merchant_reserved', amount: -m.amount });
  return postJournalEntry(tx, { ...m, type: 'refund', lines }, () => debitSlot);
}

/** The processor refunded: the reserved amount leaves for good; `feeReturned` of the payment's fee comes back to available. */
export function refundSettled(tx: Executor, m: Movement, feeReturned = 0) {
  return postJournalEntry(tx, {
    ...m,
    type: 'refund_settlement',
    lines: [
      { ledgerAccount: 'merchant_reserved', amount: m.amount },
      { ledgerAccount: 'processor_clearing', amount: -m.amount },
      ...feeLines(-feeReturned),
    ],
  });
}

/** A fee as its own lines: positive out of available into fee_revenue, negative back. */
function feeLines(fee: number): JournalLine[] {
  return fee === 0
    ? []
    : [
        { ledgerAccount: 'merchant_available', amount: fee },
        { ledgerAccount: 'fee_revenue', amount: -fee },
      ];
}

/** A won dispute: the processor gives the amount back to available, with `feeReturned` of the dispute fee. */
export function disputeReinstated(tx: Executor, m: Movement, feeReturned: number) {
  return postJournalEntry(tx, {
    ...m,
    type: 'dispute_reinstatement',
    lines: [
      { ledgerAccount: 'processor_clearing', amount: m.amount },
      { ledgerAccount: 'merchant_available', amount: -m.amount },
      ...feeLines(-feeReturned),
    ],
  });
}

/** A processor kept `amount` of the money it holds for us as its fee: the service's cost, not the merchant's. */
export function processorFeeBooked(tx: Executor, m: Movement) {
  return postJournalEntry(tx, {
    ...m,
    type: 'processor_fee',
    lines: [
      { ledgerAccount: 'processor_fees', amount: m.amount },
      { ledgerAccount: 'processor_clearing', amount: -m.amount },
    ],
  });
}

/** The refund failed: the reserved amount returns to available. */
export function refundFailed(tx: Executor, m: Movement) {
  return postJournalEntry(tx, {
    ...m,
    type: 'refund_failure',
    lines: [
      { ledgerAccount: 'merchant_reserved', amount: m.amount },
      { ledgerAccount: 'merchant_available', amount: -m.amount },
    ],
  });
}

/** Test mode only: credit available out of thin (test) air. */
export function testFunding(tx: Executor, m: Movement) {
  return postJournalEntry(tx, {
    ...m,
    type: 'test_funding',
    lines: [
      { ledgerAccount: 'test_funding', amount: m.amount },
      { ledgerAccount: 'merchant_available', amount: -m.amount },
    ],
  });
}

// ---- payouts: available → reserved → out (or back) ------------------------------------------------

/**
 * Locks every slot of the merchant's available balance in this currency (in slot order, so that
 * concurrent callers cannot deadlock) and answers the balance with the slot to debit. The debit
 * must go to a locked slot: a slot row created by a concurrent transaction after this statement's
 * snapshot would be invisible here, and a debit there could overdraw unseen.
 */
export async function lockAvailableBalance(
  tx: Executor,
  key: { accountId: string; livemode: boolean; currency: string },
): Promise<{ available: number; debitSlot: number | undefined }> {
  const result = await tx.execute(sql`
    SELECT slot, balance FROM ledger_balances
    WHERE account_id = ${key.accountId} AND livemode = ${key.livemode} AND ledger_account = 'merchant_available' AND currency = ${key.currency}
    ORDER BY slot
    FOR UPDATE`);
  const rows = (result as unknown as { rows: { slot: number; balance: number | string }[] }).rows;
  let sum = 0;
  for (const row of rows) sum += Number(row.balance);
  return { available: -sum, debitSlot: rows[0]?.slot };
}

/** A payout was created: its amount leaves available and is reserved until the bank answers; its fee leaves available at once. */
export function payoutCreated(tx: Executor, m: Movement, debitSlot: number, fee = 0) {
  return postJournalEntry(
    tx,
    {
      ...m,
      type: 'payout',
      lines: [
        { ledgerAccount: 'merchant_available', amount: m.amount },
        { ledgerAccount: 'merchant_reserved', amount: -m.amount },
        ...feeLines(fee),
      ],
    },
    () => debitSlot,
  );
}

/** The bank paid the beneficiary: the reserved amount leaves, out of the funds held at processors. */
export function payoutPaid(tx: Executor, m: Movement) {
  return postJournalEntry(tx, {
    ...m,
    type: 'payout_paid',
    lines: [
      { ledgerAccount: 'merchant_reserved', amount: m.amount },
      { ledgerAccount: 'processor_clearing', amount: -m.amount },
    ],
  });
}

/** The payout failed or was cancelled before it left: the reserved amount, and its fee, return to available. */
export function payoutReleased(tx: Executor, m: Movement, fee = 0) {
  return postJournalEntry(tx, {
    ...m,
    type: 'payout_release',
    lines: [
      { ledgerAccount: 'merchant_reserved', amount: m.amount },
      { ledgerAccount: 'merchant_available', amount: -m.amount },
      ...feeLines(-fee),
    ],
  });
}

/** The beneficiary's bank sent a paid payout back: the money is available again. */
export function payoutReturned(tx: Executor, m: Movement) {
  return postJournalEntry(tx, {
    ...m,
    type: 'payout_return',
    lines: [
      { ledgerAccount: 'processor_clearing', amount: m.amount },
      { ledgerAccount: 'merchant_available', amount: -m.amount },
    ],
  });
}
