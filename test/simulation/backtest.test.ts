// The routing backtest (sim/backtest/, docs/backtest.md): a seed prints the same table twice, and
// the table shows what the traffic model must make the real routing and cascade code show — a
// cascade recovers soft declines at the other processor, success_rate moves traffic off the
// processor that is down, volume split sends its share to the dearer processor. Runs on its own
// embedded database, so only in the pglite project.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/storage/db.js';
import { backtest } from '../../sim/backtest/backtest.js';
import { PROFILES, SECOND } from '../../sim/backtest/model.js';
import { simulatorFee } from '../../src/connectors/simulator/settlements.js';
import type { Row } from '../../sim/backtest/report.js';
import { openSimDatabase } from '../../sim/service.js';
import { isPostgres } from '../support/helpers.js';

describe.skipIf(isPostgres)('the routing backtest', () => {
  let database: Database;
  let first: Awaited<ReturnType<typeof backtest>>;
  const SEED = 3;
  const PAYMENTS = 100;
  beforeAll(async () => {
    database = await openSimDatabase();
    first = await backtest({ seed: SEED, payments: PAYMENTS, database });
  }, 900_000);
  afterAll(async () => {
    await database?.close();
  });

  const row = (strategy: string, cascade: boolean) => first.rows.find((r) => r.strategy === strategy && r.cascade === cascade)!;

  it('prints six rows, every payment of the stream in each', () => {
    expect(first.rows.map((r) => `${r.strategy}/${r.cascade}`)).toEqual([
      'priority/false',
      'priority/true',
      'volume_split/false',
      'volume_split/true',
      'success_rate/false',
      'success_rate/true',
    ]);
    for (const r of first.rows) expect(r.payments).toBe(PAYMENTS);
    expect(first.text).not.toMatch(/\d{4}-\d{2}-\d{2}|pay_|ord_|acct_/);
  });

  it('the same seed prints the same bytes', async () => {
    const again = await backtest({ seed: SEED, payments: PAYMENTS, database });
    expect(again.text).toBe(first.text);
  }, 900_000);

  it('a cascade on soft declines raises the authorisation rate of every strategy, at the cost of more attempts', () => {
    for (const strategy of ['priority', 'volume_split', 'success_rate']) {
      expect(row(strategy, true).authRate, strategy).toBeGreaterThan(row(strategy, false).authRate);
      expect(row(strategy, true).attemptsPerPayment, strategy).toBeGreaterThan(row(strategy, false).attemptsPerPayment);
    }
  });

  it('during the outage of the first-priority processor, success_rate authorises more than priority', () => {
    expect(row('success_rate', false).outageAuthRate).toBeGreaterThan(row('priority', false).outageAuthRate);
  });

  it("fees are what each processor's price says of the payments it authorised, and volume split sends its share to the second", () => {
    for (const [i, result] of first.results.entries()) {
      const expected: Record<string, number> = {};
      for (const o of result.outcomes.filter((x) => x.authorised)) {
        const fee = PROFILES.find((p) => p.name === o.connector)!.fee;
        expected[o.currency] = (expected[o.currency] ?? 0) + simulatorFee(o.amount, fee);
      }
      expect(first.rows[i]!.fees).toEqual(expected);
    }
    const toSecond = (strategy: string) => first.results.find((r) => r.config.strategy === strategy && !r.config.cascade)!.outcomes.filter((o) => o.authorised && o.connector === SECOND).length;
    expect(toSecond('volume_split')).toBeGreaterThan(toSecond('priority'));
    expect(row('priority', false).p50Ms).toBeGreaterThan(0);
    expect(row('priority', false).p99Ms).toBeGreaterThanOrEqual(row('priority', false).p50Ms);
  });
});
