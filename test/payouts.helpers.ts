// Helpers of the beneficiaries and payouts tests: a service whose payments runtime runs on a clock
// the test moves, the payouts runtime the worker would use, test bank accounts and funding.
import crypto from 'node:crypto';
import { expect } from 'vitest';
import type { Config } from '../src/config.js';
import { createRuntime, type Runtime } from '../src/runtime.js';
import { runPayoutJobs } from '../src/domain/payouts/submission.js';
import { checkLedger } from '../src/ledger/check.js';
import { TEST_BANK_ACCOUNTS, type TestBankAccountEnding } from '../src/lib/test-bank-accounts.js';
import type { LogCapture, TestDatabase } from './helpers.js';
import { startPaymentsService, type Api, type PaymentsSettings, type PaymentsTestService } from './payments.helpers.js';

export interface PayoutsTestService extends PaymentsTestService {
  payouts: Runtime;
  clock: { advance(ms: number): void; now(): Date };
  /** One worker pass over payouts, as the worker would run it. */
  runPayouts(): Promise<{ submitted: number; checked: number }>;
}

export async function startPayoutsService(
  testDb: TestDatabase,
  opts: { submitOnCreate?: boolean; settings?: PaymentsSettings; overrides?: Partial<Config>; logs?: LogCapture } = {},
): Promise<PayoutsTestService> {
  let offsetMs = 0;
  const now = () => new Date(Date.now() + offsetMs);
  const overrides: Partial<Config> = {
    payouts: { submitOnCreate: opts.submitOnCreate ?? false, batchSize: 200 },
    ...opts.overrides,
  };
  const service = await startPaymentsService(testDb, { settings: opts.settings, overrides, runtime: { now }, logs: opts.logs });
  const payouts = service.payments;
  return {
    ...service,
    payouts,
    clock: { advance: (ms) => void (offsetMs += ms), now },
    runPayouts: () => runPayoutJobs(testDb.database.db, payouts),
  };
}

export type Format = 'iban' | 'gb' | 'us' | 'in';

export function bankAccount(ending: TestBankAccountEnding = '0000', format: Format = 'iban') {
  return { ...TEST_BANK_ACCOUNTS[ending][format] };
}

export const CURRENCY_OF: Record<Format, string> = { iban: 'EUR', gb: 'GBP', us: 'USD', in: 'INR' };

export async function newBeneficiary(api: Api, ending: TestBankAccountEnding = '0000', format: Format = 'iban', extra: Record<string, unknown> = {}) {
  const res = await api.post('/v1/beneficiaries', { name: 'Ada Lovelace', type: 'individual', bank_account: bankAccount(ending, format), ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function fund(api: Api, amount: number, currency = 'EUR') {
  const res = await api.post('/v1/test-helpers/balance/fund', { amount, currency });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function payout(api: Api, beneficiary: string, amount: number, currency = 'EUR', extra: Record<string, unknown> = {}) {
  return api.post('/v1/payouts', { beneficiary, amount, currency, reference: `po-${crypto.randomUUID()}`, ...extra });
}

export async function balanceOf(api: Api, currency = 'EUR') {
  const res = await api.get('/v1/balance');
  expect(res.status).toBe(200);
  const pick = (list: { currency: string; amount: number }[]) => list.find((b) => b.currency === currency)?.amount ?? 0;
  return { available: pick(res.body.available), reserved: pick(res.body.reserved), pending: pick(res.body.pending) };
}

export async function expectLedgerClean(testDb: TestDatabase, accountId?: string) {
  const { parseId } = await import('../src/kernel/ids.js');
  const report = await checkLedger(testDb.database.db, accountId ? { accountId: parseId('acct', accountId) } : {});
  expect(report, JSON.stringify(report, null, 2)).toMatchObject({ ok: true });
  return report;
}
