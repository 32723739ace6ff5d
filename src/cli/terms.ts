// Onboarding's pricing and settlement commands (accounts set-pricing, set-settlement, terms): what
// an account pays per payment method, currency and payout, and how many business days its
// payments take to become available. Part of the command table in onboarding.ts.
import type { Db } from '../storage/db.js';
import { getAccount } from '../domain/accounts/service.js';
import { listTerms, setDisputeFee, setPricing, setSettlement, type TermsMethod } from '../domain/terms/service.js';
import { parseId } from '../kernel/ids.js';
import { CURRENCY_EXPONENTS, MAX_AMOUNT } from '../kernel/currencies.js';
import { UsageError, requireInteger } from './args.js';
import type { Command, Values } from './command.js';

const MAX_BPS = 10_000;
const MAX_SETTLEMENT_DAYS = 30;
const str = (values: Values, name: string) => values[name] as string | undefined;

function currencyOf(values: Values): string | undefined {
  const currency = str(values, 'currency');
  if (currency === undefined) return undefined;
  if (!CURRENCY_EXPONENTS.has(currency)) throw new UsageError(`--currency must be an ISO 4217 code in upper case (EUR, JPY, KWD…), got ${JSON.stringify(currency)}`);
  return currency;
}

function paymentMethodOf(values: Values): 'card' | 'mandate' {
  const method = str(values, 'method');
  if (method === undefined) throw new UsageError('--method is required (card or mandate)');
  if (method !== 'card' && method !== 'mandate') throw new UsageError(`--method must be card or mandate, got ${JSON.stringify(method)}`);
  return method;
}

/** Runs `work` on the account's uuid once the account is known to exist, then shows its terms. */
function onAccount(id: string, work: (db: Db, uuid: string) => Promise<void>) {
  return async (db: Db) => {
    await getAccount(db, id);
    const uuid = parseId('acct', id)!;
    await work(db, uuid);
    return { account: id, terms: await listTerms(db, uuid) };
  };
}

export const TERMS_COMMANDS: Command[] = [
  {
    name: 'accounts set-pricing',
    synopsis: 'ACCT_ID (--method card|mandate | --payouts) [--bps N] [--fixed N] [--minimum N|none] [--currency CUR] [--refund-fee returned|kept] [--dispute-fee N]',
    summary: "Set an account's fees: per payment method (or for payouts), for every currency or one",
    details:
      `--bps is the percentage part in basis points (290 = 2.9 %, 0..${MAX_BPS}); --fixed and --minimum are in the minor unit of the\n` +
      'currency (cents, yen, fils). The percentage part is rounded half up; the fee is at least --minimum and never more\n' +
      'than the amount. Without --currency the schedule applies to every currency that has none of its own.\n' +
      '--refund-fee (payments only) says whether a refund gives back its share of the fee (default kept).\n' +
      '--dispute-fee (cards only, minor units, default 0) is charged when a processor withdraws a disputed payment\'s funds;\n' +
      'a won dispute gives it back where the processor gives its own fee back (docs/disputes.md).\n' +
      'Payout fees are charged when a payout is created and given back if it fails or is cancelled.\n' +
      'Applies to payments that succeed, and payouts created, from then on.',
    positionals: ['ACCT_ID'],
    options: {
      method: { type: 'string' },
      payouts: { type: 'boolean' },
      bps: { type: 'string' },
      fixed: { type: 'string' },
      minimum: { type: 'string' },
      currency: { type: 'string' },
      'refund-fee': { type: 'string' },
      'dispute-fee': { type: 'string' },
    },
    prepare({ values, positionals: [id] }) {
      if (values.payouts && values.method !== undefined) throw new UsageError('give --method or --payouts, not both');
      const method: TermsMethod = values.payouts ? 'payout' : paymentMethodOf(values);
      const bps = str(values, 'bps');
      const fixed = str(values, 'fixed');
      const disputeFee = str(values, 'dispute-fee');
      if (disputeFee !== undefined && method !== 'card') throw new UsageError('--dispute-fee applies to --method card only');
      if (bps === undefined && fixed === undefined && disputeFee === undefined) throw new UsageError('give --bps, --fixed, --dispute-fee or several');
      const minimum = str(values, 'minimum');
      const refundFee = str(values, 'refund-fee');
      if (refundFee !== undefined && method === 'payout') throw new UsageError('--refund-fee applies to payment methods, not to --payouts');
      if (refundFee !== undefined && refundFee !== 'returned' && refundFee !== 'kept') {
        throw new UsageError(`--refund-fee must be returned or kept, got ${JSON.stringify(refundFee)}`);
      }
      const input = {
        method,
        currency: currencyOf(values),
        bps: bps === undefined ? 0 : requireInteger('bps', bps, 0, MAX_BPS),
        fixed: fixed === undefined ? 0 : requireInteger('fixed', fixed, 0, MAX_AMOUNT),
        minimum: minimum === undefined || minimum === 'none' ? null : requireInteger('minimum', minimum, 0, MAX_AMOUNT),
        refundsReturnFee: refundFee === undefined ? undefined : refundFee === 'returned',
      };
      const fee = disputeFee === undefined ? undefined : requireInteger('dispute-fee', disputeFee, 0, MAX_AMOUNT);
      const fees = bps !== undefined || fixed !== undefined;
      return {
        run: onAccount(id!, async (db, uuid) => {
          if (fees) await setPricing(db, uuid, input);
          if (fee !== undefined) await setDisputeFee(db, uuid, { currency: input.currency, fee });
        }),
      };
    },
  },
  {
    name: 'accounts set-settlement',
    synopsis: 'ACCT_ID --method card|mandate --days N [--currency CUR]',
    summary: "Set how many business days (Monday to Friday, UTC) an account's payments stay pending",
    details:
      `--days 0..${MAX_SETTLEMENT_DAYS}; 0 (the default) puts a payment's net in available at once. Otherwise it is pending until the\n` +
      'start (00:00 UTC) of the Nth business day after the payment succeeded, when the worker makes it available\n' +
      '(event balance.available). Without --currency it applies to every currency that has no delay of its own.',
    positionals: ['ACCT_ID'],
    options: { method: { type: 'string' }, days: { type: 'string' }, currency: { type: 'string' } },
    prepare({ values, positionals: [id] }) {
      const method = paymentMethodOf(values);
      const days = str(values, 'days');
      if (days === undefined) throw new UsageError('--days is required');
      const input = { method, currency: currencyOf(values), days: requireInteger('days', days, 0, MAX_SETTLEMENT_DAYS) };
      return { run: onAccount(id!, (db, uuid) => setSettlement(db, uuid, input)) };
    },
  },
  {
    name: 'accounts terms',
    synopsis: 'ACCT_ID',
    summary: "Show an account's pricing and settlement timelines (nothing listed: no fees, T+0)",
    positionals: ['ACCT_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({ run: onAccount(id!, async () => {}) }),
  },
];
