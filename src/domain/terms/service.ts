// Pricing and settlement timelines per account, as onboarding sets them (CLI accounts
// set-pricing / set-settlement) and as bookings read them. A row per method (card, mandate,
// payout) and currency, '' being the method's default for every currency; the currency's own row
// wins, field by field. No row at all means the defaults: no fee, T+0.
import { and, eq, getTableName, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { prepared } from '../../storage/prepared.js';
import { accountTerms } from '../../storage/schema.js';
import { feeFor, availableOn, type FeeSchedule } from '../../ledger/fees.js';
import type { PaymentBooking } from '../../ledger/settlement.js';

export type TermsMethod = (typeof accountTerms.$inferSelect)['method'];
type TermsRow = typeof accountTerms.$inferSelect;

export interface PricingInput {
  method: TermsMethod;
  /** Undefined: the method's default for every currency. */
  currency?: string;
  bps: number;
  fixed: number;
  minimum: number | null;
  /** Payments only: whether refunds give back the fee. Undefined keeps what was set (default: kept). */
  refundsReturnFee?: boolean;
}

export interface ResolvedTerms {
  fee: FeeSchedule | null;
  refundsReturnFee: boolean;
  settlementDays: number;
  /** Cards: charged when a processor withdraws a disputed payment's funds. */
  disputeFee: number;
}

/** What an account without a row for the method and currency gets: no fee, T+0. */
export const DEFAULT_TERMS: ResolvedTerms = { fee: null, refundsReturnFee: false, settlementDays: 0, disputeFee: 0 };

/**
 * The SQL condition under which an account has no terms at all, so every booking of it is under
 * DEFAULT_TERMS: the one-statement payment finish (src/domain/payments/one-statement.ts) books only then,
 * without reading terms. `account`: the statement's parameter holding the account's id.
 */
export const noTermsSql = (account: string) => `NOT EXISTS (SELECT 1 FROM ${getTableName(accountTerms)} WHERE account_id = ${account})`;

async function upsert(db: Executor, accountUuid: string, method: TermsMethod, currency: string, set: Partial<TermsRow>): Promise<void> {
  await db
    .insert(accountTerms)
    .values({ accountId: accountUuid, method, currency, ...set })
    .onConflictDoUpdate({ target: [accountTerms.accountId, accountTerms.method, accountTerms.currency], set: { ...set, updatedAt: new Date() } });
}

export function setPricing(db: Executor, accountUuid: string, input: PricingInput): Promise<void> {
  return upsert(db, accountUuid, input.method, input.currency ?? '', {
    feeBps: input.bps,
    feeFixed: input.fixed,
    feeMinimum: input.minimum,
    ...(input.refundsReturnFee === undefined ? {} : { refundsReturnFee: input.refundsReturnFee }),
  });
}

export function setDisputeFee(db: Executor, accountUuid: string, input: { currency?: string; fee: number }): Promise<void> {
  return upsert(db, accountUuid, 'card', input.currency ?? '', { disputeFee: input.fee });
}

export function setSettlement(db: Executor, accountUuid: string, input: { method: Exclude<TermsMethod, 'payout'>; currency?: string; days: number }): Promise<void> {
  return upsert(db, accountUuid, input.method, input.currency ?? '', { settlementDays: input.days });
}

/** An account's rows for one method: its currency's and the default (`''`). Every booking reads them, so it is built once. */
const readTerms = prepared((db) =>
  db
    .select()
    .from(accountTerms)
    .where(
      and(
        eq(accountTerms.accountId, sql.placeholder('accountUuid')),
        eq(accountTerms.method, sql.placeholder('method')),
        inArray(accountTerms.currency, ['', sql.placeholder('currency')]),
      ),
    ),
);

/** The account's terms for one method and currency: its currency's row over the method's default row, field by field. */
export async function termsFor(db: Executor, accountUuid: string, method: TermsMethod, currency: string): Promise<ResolvedTerms> {
  const rows = await readTerms(db, { accountUuid, method, currency });
  const own = rows.find((r) => r.currency === currency);
  const fallback = rows.find((r) => r.currency === '');
  const pricing = own?.feeBps != null ? own : fallback?.feeBps != null ? fallback : undefined;
  return {
    fee: pricing ? { bps: pricing.feeBps!, fixed: pricing.feeFixed ?? 0, minimum: pricing.feeMinimum ?? null } : DEFAULT_TERMS.fee,
    refundsReturnFee: own?.refundsReturnFee ?? fallback?.refundsReturnFee ?? DEFAULT_TERMS.refundsReturnFee,
    settlementDays: own?.settlementDays ?? fallback?.settlementDays ?? DEFAULT_TERMS.settlementDays,
    disputeFee: own?.disputeFee ?? fallback?.disputeFee ?? DEFAULT_TERMS.disputeFee,
  };
}

/** How a payment of `amount` that succeeded at `now` is booked under `terms`. */
export function bookingUnder(terms: ResolvedTerms, amount: number, now: Date): PaymentBooking {
  return {
    fee: terms.fee ? feeFor(amount, terms.fee) : 0,
    availableOn: terms.settlementDays > 0 ? availableOn(now, terms.settlementDays) : null,
  };
}

/** How a payment of `amount` that succeeded at `now` is booked under the account's terms. */
export async function paymentBooking(db: Executor, accountUuid: string, method: 'card' | 'mandate', currency: string, amount: number, now: Date): Promise<PaymentBooking> {
  return bookingUnder(await termsFor(db, accountUuid, method, currency), amount, now);
}

/** The fee of a payout of `amount` (0 without payout pricing). */
export async function payoutFee(db: Executor, accountUuid: string, currency: string, amount: number): Promise<number> {
  const terms = await termsFor(db, accountUuid, 'payout', currency);
  return terms.fee ? feeFor(amount, terms.fee) : 0;
}

export interface TermsView {
  method: TermsMethod;
  currency: string | null;
  pricing: { bps: number; fixed: number; minimum: number | null; refunds_return_fee: boolean } | null;
  settlement_days: number | null;
  dispute_fee: number | null;
}

/** What onboarding set for the account, row by row (for the CLI). */
export async function listTerms(db: Executor, accountUuid: string): Promise<TermsView[]> {
  const rows = await db.select().from(accountTerms).where(eq(accountTerms.accountId, accountUuid)).orderBy(accountTerms.method, accountTerms.currency);
  return rows.map((r) => ({
    method: r.method,
    currency: r.currency || null,
    pricing: r.feeBps == null ? null : { bps: r.feeBps, fixed: r.feeFixed ?? 0, minimum: r.feeMinimum, refunds_return_fee: r.refundsReturnFee ?? false },
    settlement_days: r.settlementDays,
    dispute_fee: r.disputeFee,
  }));
}
