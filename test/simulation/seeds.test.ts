// The whole-service simulation (sim/) catches each planted defect on the seed that finds it first
// (docs/simulation.md states within how many seeds), replays a seed to the same digest, and keeps the
// regression case of the bug it found: a mandate whose set-up got no answer and that its
// processor never booked stayed pending forever. Runs on its own embedded database, so only in the
// pglite project.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { plant, type Plant } from '../../src/kernel/plants.js';
import type { Database } from '../../src/storage/db.js';
import { TEST_BANK_ACCOUNTS } from '../../src/domain/bank-accounts/test-accounts.js';
import { runSeed } from '../../sim/run.js';
import { openSimDatabase, startSimService } from '../../sim/service.js';
import { installClock } from '../../sim/clock.js';
import { createRng } from '../../sim/rng.js';
import { createAccount, issueKey } from '../../src/domain/accounts/service.js';
import { isPostgres } from '../support/helpers.js';

describe.skipIf(isPostgres)('the whole-service simulation', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openSimDatabase();
  }, 120_000);
  afterAll(async () => {
    plant(undefined);
    await database?.close();
  });

  const CAUGHT: [Plant, number, number, string][] = [
    ['payout-skips-balance-lock', 8, 25, 'payoutsNeverOverdraw'],
    ['refund-skips-sum-check', 6, 27, 'refundsNeverExceedPaymentAtAnyMoment'],
    ['event-outside-transaction', 1, 8, 'legalTransitionsAndIncreasingVersions'],
    ['resume-recharges', 11, 6, 'noChargeSentAgainOnceHeld'],
  ];
  for (const [defect, seed, steps, invariant] of CAUGHT) {
    it(`--plant ${defect}: seed ${seed} fails ${invariant} by step ${steps}`, async () => {
      plant(defect);
      try {
        const result = await runSeed({ seed, steps, database });
        expect(result.ok).toBe(false);
        expect(result.failure?.invariant).toBe(invariant);
      } finally {
        plant(undefined);
      }
    }, 120_000);
  }

  it('a seed replays: the same operations and faults, the same final digest; without a plant every invariant holds', async () => {
    const first = await runSeed({ seed: 3, steps: 72, database });
    const again = await runSeed({ seed: 3, steps: 72, database });
    expect(first.failure).toBeUndefined();
    expect(again.log).toEqual(first.log);
    expect(again.digest).toBe(first.digest);
    const other = await runSeed({ seed: 4, steps: 72, database });
    expect(other.digest).not.toBe(first.digest);
  }, 180_000);

  it('regression (found by the simulation): a mandate its processor never booked after a lost answer fails once overdue instead of staying pending', async () => {
    const clock = installClock();
    const s = await startSimService(clock, createRng(1), database);
    try {
      const account = await createAccount(database.db, 'Merchant');
      const key = await issueKey(database.db, account.id, { livemode: false });
      // The 0005 account: simulator_a answers a processor error, so nothing is booked; the answer is lost on the way back.
      s.world.nextFaults.push('answer_lost');
      const created = await s.request('POST', '/v1/mandates', {
        key: key.secret,
        idempotencyKey: 'm1',
        body: { customer: { email: 'p@example.com', name: 'P' }, bank_account: { country: 'DE', currency: 'EUR', iban: TEST_BANK_ACCOUNTS['0005'].iban.iban }, scheme: 'sepa_core', currency: 'EUR', reference: 'm1' },
      });
      expect(created !== 'crashed' && created.body).toMatchObject({ status: 'pending', connector: 'simulator_a' });
      for (let i = 0; i < 4; i++) {
        clock.advance(12 * 3600_000);
        await s.worker();
      }
      const [row] = ((await database.db.execute(sql`SELECT status, failure_code FROM mandates`)) as unknown as { rows: Record<string, unknown>[] }).rows;
      expect(row).toEqual({ status: 'failed', failure_code: 'processing_error' });
    } finally {
      await s.close();
      clock.uninstall();
    }
  }, 120_000);
});
