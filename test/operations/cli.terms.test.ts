// The onboarding commands for pricing and settlement: their argument checks (exit code 2 before
// any database is opened), and, on PostgreSQL, what they set reaching the very next payment.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAccount } from '../../src/domain/accounts/service.js';
import { isPostgres } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';
import { baseEnv, runCliHere, tempDir } from '../support/cli.js';
import { CARDS, balanceOf, orderAndPay } from '../support/payments.js';

const ACCT = 'acct_01jd8x3v0pe7wbz0m4k6f2n9qa';

describe('cli: accounts set-pricing and set-settlement, argument checks', () => {
  const env = baseEnv({ DATA_DIR: path.join(tempDir(), 'never-opened') });
  const usage = async (...args: string[]) => {
    const res = await runCliHere(args, env);
    expect(res.code, res.stderr).toBe(2);
    return res.stderr.split('\n')[0];
  };

  it('refuses what makes no schedule', async () => {
    expect(await usage('accounts', 'set-pricing', ACCT, '--bps', '290')).toBe('error: --method is required (card or mandate)');
    expect(await usage('accounts', 'set-pricing', ACCT, '--method', 'card')).toBe('error: give --bps, --fixed, --dispute-fee or several');
    expect(await usage('accounts', 'set-pricing', ACCT, '--method', 'wire', '--bps', '1')).toBe('error: --method must be card or mandate, got "wire"');
    expect(await usage('accounts', 'set-pricing', ACCT, '--method', 'card', '--payouts', '--fixed', '1')).toBe('error: give --method or --payouts, not both');
    expect(await usage('accounts', 'set-pricing', ACCT, '--method', 'card', '--bps', '10001')).toBe('error: --bps must be between 0 and 10000, got 10001');
    expect(await usage('accounts', 'set-pricing', ACCT, '--method', 'card', '--bps', '2.9')).toBe('error: --bps must be a whole number, got "2.9"');
    expect(await usage('accounts', 'set-pricing', ACCT, '--method', 'card', '--fixed', '30', '--currency', 'eur')).toMatch(/^error: --currency must be an ISO 4217 code/);
    expect(await usage('accounts', 'set-pricing', ACCT, '--payouts', '--fixed', '30', '--refund-fee', 'returned')).toBe(
      'error: --refund-fee applies to payment methods, not to --payouts',
    );
    expect(await usage('accounts', 'set-settlement', ACCT, '--method', 'card')).toBe('error: --days is required');
    expect(await usage('accounts', 'set-settlement', ACCT, '--method', 'card', '--days', '31')).toBe('error: --days must be between 0 and 30, got 31');
    expect(await usage('accounts', 'set-settlement', 'acct_nope', '--method', 'card', '--days', '1')).toMatch(/^error: ACCT_ID must be an account id/);
  });
});

describe.skipIf(!isPostgres)('cli: pricing and settlement against PostgreSQL', () => {
  const h = useService();
  const cli = (...args: string[]) => runCliHere(args, baseEnv({ DATABASE_URL: h.databaseUrl!, DATA_DIR: path.join(tempDir(), 'unused') }));

  it('sets and shows the terms, which the next payment is booked with', async () => {
    const tenant = await h.newTenant();
    const priced = await cli('accounts', 'set-pricing', tenant.accountId, '--method', 'card', '--bps', '290', '--fixed', '30', '--refund-fee', 'returned');
    expect(priced.code, priced.stderr).toBe(0);
    await cli('accounts', 'set-pricing', tenant.accountId, '--payouts', '--fixed', '25', '--currency', 'EUR');
    const settled = await cli('accounts', 'set-settlement', tenant.accountId, '--method', 'card', '--days', '2', '--currency', 'EUR');
    expect(settled.code, settled.stderr).toBe(0);
    const shown = await cli('accounts', 'terms', tenant.accountId);
    expect(shown.json).toEqual({
      account: tenant.accountId,
      terms: [
        { method: 'card', currency: null, pricing: { bps: 290, fixed: 30, minimum: null, refunds_return_fee: true }, dispute_fee: null, settlement_days: null },
        { method: 'card', currency: 'EUR', pricing: null, dispute_fee: null, settlement_days: 2 },
        { method: 'payout', currency: 'EUR', pricing: { bps: 0, fixed: 25, minimum: null, refunds_return_fee: false }, dispute_fee: null, settlement_days: null },
      ],
    });
    await orderAndPay(tenant.api, CARDS.success, { amount: 1000, currency: 'EUR' });
    expect(await balanceOf(tenant.api)).toEqual({ available: 0, pending: 941, reserved: 0 });

    const unknown = await cli('accounts', 'terms', (await createAccount(h.db, 'x')).id.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^error: no account/);
  });
});
