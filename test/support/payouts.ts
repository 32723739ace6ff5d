// Helpers of the beneficiaries and payouts tests: test bank accounts, beneficiaries, funding,
// payouts, and the ledger's invariant check.
import crypto from 'node:crypto';
import { expect } from 'vitest';
import { checkLedger } from '../../src/ledger/check.js';
import { parseId } from '../../src/kernel/ids.js';
import type { Db } from '../../src/storage/db.js';
import { TEST_BANK_ACCOUNTS, type TestBankAccountEnding } from '../../src/domain/bank-accounts/test-accounts.js';
import { created, type Api } from './helpers.js';

export type Format = 'iban' | 'gb' | 'us' | 'in';

export function bankAccount(ending: TestBankAccountEnding = '0000', format: Format = 'iban') {
  return { ...TEST_BANK_ACCOUNTS[ending][format] };
}

export const CURRENCY_OF: Record<Format, string> = { iban: 'EUR', gb: 'GBP', us: 'USD', in: 'INR' };

export const newBeneficiary = (api: Api, ending: TestBankAccountEnding = '0000', format: Format = 'iban', extra: Record<string, unknown> = {}) =>
  created(api, '/v1/beneficiaries', { name: 'Ada Lovelace', type: 'individual', bank_account: bankAccount(ending, format), ...extra });

export const fund = (api: Api, amount: number, currency = 'EUR') => created(api, '/v1/test-helpers/balance/fund', { amount, currency });

export async function payout(api: Api, beneficiary: string, amount: number, currency = 'EUR', extra: Record<string, unknown> = {}) {
  return api.post('/v1/payouts', { beneficiary, amount, currency, reference: `po-${crypto.randomUUID()}`, ...extra });
}

/** The ledger's invariant check (of one account, or all) finds nothing wrong. */
export async function expectLedgerClean(db: Db, accountId?: string) {
  const report = await checkLedger(db, accountId ? { accountId: parseId('acct', accountId) } : {});
  expect(report, JSON.stringify(report, null, 2)).toMatchObject({ ok: true });
  return report;
}
