// `npm run connectors:smoke` (scripts/connectors-smoke.ts) is not part of npm test — it needs a
// processor's real sandbox — so this proves the script itself: it skips cleanly without
// credentials, runs green against the fake Stripe when STRIPE_API_BASE_URL points at it and against
// the fake Adyen when ADYEN_CHECKOUT_BASE_URL does (the fakes' books show the scenarios really went there), and
// fails when the scenarios fail (Stripe unreachable: the payments land on the backup connector).
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeAdyen } from '../support/fakes/adyen.js';
import { FakeGoCardless } from '../support/fakes/gocardless.js';
import { FakeAdyenTransfers } from '../support/fakes/adyen-transfers.js';
import { FakeStripe } from '../support/fakes/stripe.js';
import { isPostgres } from '../support/helpers.js';
import { ROOT } from '../support/processes.js';
import { closedPort } from '../support/sockets.js';

function smoke(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; output: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('STRIPE_') && !key.startsWith('ADYEN_') && !key.startsWith('GOCARDLESS_') && !key.startsWith('VITEST') && !['TEST_DB', 'FORCE_COLOR'].includes(key)));
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/connectors-smoke.ts', ...args], { cwd: ROOT, env: { ...clean, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

// The script runs on its own embedded database whichever project runs this file: once is enough.
describe.skipIf(!isPostgres)('npm run connectors:smoke', () => {
  let fake: FakeStripe;
  let adyenFake: FakeAdyen;
  beforeAll(async () => {
    fake = await new FakeStripe().start();
    adyenFake = await new FakeAdyen().start();
  });
  afterAll(async () => {
    await fake?.close();
    await adyenFake?.close();
  });

  it('skips, saying so, without credentials; refuses an unknown name', async () => {
    const [skipped, adyen, unknown] = await Promise.all([smoke(['stripe'], {}), smoke(['adyen'], { ADYEN_API_KEY: 'AQE_only_the_key' }), smoke(['paypal'], {})]);
    expect(skipped).toEqual({ code: 0, output: 'stripe: skipped: no credentials (set STRIPE_SECRET_KEY)\n' });
    expect(adyen).toEqual({ code: 0, output: 'adyen: skipped: no credentials (set ADYEN_MERCHANT_ACCOUNT, ADYEN_HMAC_KEY)\n' });
    expect(unknown.code).toBe(2);
    expect(unknown.output).toMatch(/usage: npm run connectors:smoke -- <stripe\|adyen\|gocardless\|adyen-payouts>/);
  }, 120_000);

  it('runs green against the fake Stripe named by STRIPE_API_BASE_URL', async () => {
    const run = await smoke(['stripe'], { STRIPE_SECRET_KEY: `sk_test_smoke${'0'.repeat(16)}`, STRIPE_API_BASE_URL: fake.url });
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/stripe: smoke passed\n$/);
    expect(run.output).toMatch(/✓ .*success: succeeded at once/);
    expect(run.output).toMatch(/✓ .*refunds: partial, then the rest/);
    // The scenarios that need a fake's controls are not in the smoke run.
    expect(run.output).not.toMatch(/connection refused|settled by the processor/);
    // The card scenarios, the saved cards' (saved while paying, charged off session, declined) among them.
    expect([...fake.intents.values()].map((pi) => pi.status).sort()).toEqual([...Array(3).fill('requires_payment_method'), ...Array(8).fill('succeeded')]);
    expect(fake.refunds.size).toBe(2);
  }, 180_000);

  it('runs green against the fake Adyen named by ADYEN_CHECKOUT_BASE_URL', async () => {
    const credentials = { ADYEN_API_KEY: `AQE_smoke_${'k'.repeat(16)}`, ADYEN_MERCHANT_ACCOUNT: 'SmokeECOM', ADYEN_HMAC_KEY: '7b'.repeat(32) };
    const run = await smoke(['adyen'], { ...credentials, ADYEN_CHECKOUT_BASE_URL: adyenFake.url });
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/adyen: smoke passed\n$/);
    expect(run.output).toMatch(/✓ .*success: succeeded at once/);
    expect(run.output).toMatch(/✓ .*decline: failed card_declined/);
    // No refund outcome without Adyen's REFUND notification, which a sandbox sends elsewhere.
    expect(run.output).not.toMatch(/refunds: partial|connection refused|settled by the processor/);
    expect(adyenFake.invalid).toEqual([]);
    // Card verifications are zero-value /payments at Adyen: one verified, one declined among them.
    expect([...adyenFake.payments.values()].map((p) => [p.merchantAccount, p.resultCode]).sort()).toEqual([
      ...Array(7).fill(['SmokeECOM', 'Authorised']),
      ...Array(4).fill(['SmokeECOM', 'Refused']),
    ]);
  }, 180_000);

  it('runs green against the fake GoCardless named by GOCARDLESS_API_BASE_URL: the mandate set-up only', async () => {
    const gocardless = await new FakeGoCardless().start();
    try {
      const run = await smoke(['gocardless'], { GOCARDLESS_ACCESS_TOKEN: `sandbox_smoke${'0'.repeat(16)}`, GOCARDLESS_API_BASE_URL: gocardless.url });
      expect(run.code, run.output).toBe(0);
      expect(run.output).toMatch(/gocardless: smoke passed\n$/);
      expect(run.output).toMatch(/✓ .*mandate: set up at the processor under our id/);
      expect(run.output).not.toMatch(/success: succeeded at once|debit confirmed/);
      const mandates = [...gocardless.objects.mandates.values()].map((m) => [(m as { status?: string }).status, Object.keys(m.metadata ?? {})]);
      expect(mandates).toEqual([['pending_submission', ['mandate_id']]]);
    } finally {
      await gocardless.close();
      }
    }, 180_000);

  it('adyen-payouts: skips without its credentials; runs green against the fake Transfers API named by ADYEN_PAYOUT_BASE_URL', async () => {
    const skipped = await smoke(['adyen-payouts'], { ADYEN_API_KEY: 'AQE_only_the_key', ADYEN_MERCHANT_ACCOUNT: 'SmokeECOM' });
    expect(skipped).toEqual({ code: 0, output: 'adyen-payouts: skipped: no credentials (set ADYEN_PAYOUT_API_KEY, ADYEN_BALANCE_ACCOUNT_ID)\n' });
    const transfers = await new FakeAdyenTransfers().start();
    try {
      const credentials = { ADYEN_API_KEY: `AQE_smoke_${'k'.repeat(16)}`, ADYEN_MERCHANT_ACCOUNT: 'SmokeECOM', ADYEN_PAYOUT_API_KEY: `AQE_payout_${'p'.repeat(16)}`, ADYEN_BALANCE_ACCOUNT_ID: 'BA32272223222B5CTDQPM6W2H' };
      const run = await smoke(['adyen-payouts'], { ...credentials, ADYEN_PAYOUT_BASE_URL: transfers.url });
      expect(run.code, run.output).toBe(0);
      expect(run.output).toMatch(/adyen-payouts: smoke passed\n$/);
      expect(run.output).toMatch(/✓ .*payout taken by the processor/);
      expect(run.output).not.toMatch(/429|duplicate/);
      expect(transfers.invalid).toEqual([]);
      expect([...transfers.transfers.values()].map((t) => [t.balanceAccount.id, t.status])).toEqual([['BA32272223222B5CTDQPM6W2H', 'received']]);
    } finally {
      await transfers.close();
    }
  }, 180_000);

  it('exits non-zero when a scenario fails', async () => {
    const run = await smoke(['stripe'], { STRIPE_SECRET_KEY: `sk_test_smoke${'0'.repeat(16)}`, STRIPE_API_BASE_URL: `http://127.0.0.1:${await closedPort()}` });
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/stripe: smoke FAILED\n$/);
  }, 180_000);
});
