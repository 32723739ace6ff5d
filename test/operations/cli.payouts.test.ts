// `accounts set-payouts`: arguments are checked before any database is opened; on PostgreSQL the
// command changes what the API allows (live payouts on/off, the maximum payout), run in process
// against this file's own database.
import { describe, expect, it } from 'vitest';
import { createAccount, getAccount } from '../../src/domain/accounts/service.js';
import { isPostgres, TEST_PREPARED_STATEMENTS } from '../support/helpers.js';
import { fund, newBeneficiary, payout } from '../support/payouts.js';
import { useService } from '../support/fixtures.js';
import { runCliHere } from '../support/cli.js';

const cli = runCliHere;

describe('accounts set-payouts: argument checks', () => {
  const env = { DATA_DIR: '/nonexistent/never-created' };
  it.each([
    [['accounts', 'set-payouts', 'acct_01h455vb4pex5vsknk084sn02q'], 'give --enabled, --max-amount or both'],
    [['accounts', 'set-payouts', 'acct_01h455vb4pex5vsknk084sn02q', '--enabled', 'yes'], '--enabled must be true or false, got "yes"'],
    [['accounts', 'set-payouts', 'acct_01h455vb4pex5vsknk084sn02q', '--max-amount', '0'], '--max-amount must be between 1 and 99999999999, got 0'],
    [['accounts', 'set-payouts', 'acct_01h455vb4pex5vsknk084sn02q', '--max-amount', '12.5'], '--max-amount must be a whole number, got "12.5"'],
    [['accounts', 'set-payouts', 'ben_01h455vb4pex5vsknk084sn02q', '--enabled', 'true'], 'ACCT_ID'],
  ])('%j → %s', async (args, message) => {
    const res = await cli(args as string[], env);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(message);
  });

  it('is listed in --help', async () => {
    const res = await cli(['--help'], env);
    expect(res.stdout).toContain('accounts set-payouts ACCT_ID [--enabled true|false] [--max-amount N|none]');
  });
});

describe.runIf(isPostgres)('accounts set-payouts against the database', () => {
  const h = useService({ submitOnCreate: false, postgresOnly: true });

  it('turns live payouts on and off and sets or clears the maximum', async () => {
    const env = { DATABASE_URL: h.databaseUrl!, DATABASE_PREPARED_STATEMENTS: TEST_PREPARED_STATEMENTS };
    const fresh = await createAccount(h.db, 'Fresh');
    expect(fresh.payouts).toEqual({ live_enabled: false, max_amount: null });

    const { tenant } = h;
    const set = await cli(['accounts', 'set-payouts', tenant.accountId, '--enabled', 'true', '--max-amount', '500'], env);
    expect(set.code, set.stderr).toBe(0);
    expect(set.json).toMatchObject({ id: tenant.accountId, payouts: { live_enabled: true, max_amount: 500 } });
    expect((await getAccount(h.db, tenant.accountId)).payouts).toEqual({ live_enabled: true, max_amount: 500 });

    const { api, live } = tenant;
    await fund(api, 10_000);
    const ben = await newBeneficiary(api);
    expect((await payout(api, ben.id, 501)).body.error.code).toBe('amount_above_limit');
    expect((await payout(api, ben.id, 500)).status).toBe(201);

    // Only the maximum changes; the switch keeps its value.
    const cleared = await cli(['accounts', 'set-payouts', tenant.accountId, '--max-amount', 'none'], env);
    expect(cleared.json.payouts).toEqual({ live_enabled: true, max_amount: null });
    expect((await payout(api, ben.id, 501)).status).toBe(201);

    const liveBen = await live.post('/v1/beneficiaries', { name: 'L', type: 'individual', bank_account: { country: 'DE', currency: 'EUR', iban: 'DE89370400440532013000' } });
    // Enabled: the next refusal is about routing (no live connector here), not eligibility.
    expect((await payout(live, liveBen.body.id, 100)).body.error.code).toBe('routing_no_match');
    const off = await cli(['accounts', 'set-payouts', tenant.accountId, '--enabled', 'false'], env);
    expect(off.json.payouts).toEqual({ live_enabled: false, max_amount: null });
    expect((await payout(live, liveBen.body.id, 100)).body.error.code).toBe('payouts_not_enabled');

    const unknown = await cli(['accounts', 'set-payouts', 'acct_01h455vb4pex5vsknk084sn02q', '--enabled', 'true'], env);
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toBe('error: no account acct_01h455vb4pex5vsknk084sn02q\n');
  });
});
