// The simulation's invariants of cascades, disputes and reconciliation (sim/invariants-attempts.ts,
// sim/invariants-money.ts) hold on the real flows they watch — a cascade from simulator_a to
// simulator_b, a do_not_retry decline, a disputed payment won with evidence, a night reconciled —
// and each one finds the defect it is there for once the books are made to show it. Runs on the
// simulation's embedded database, so only in the pglite project.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/storage/db.js';
import { createAccount, issueKey } from '../../src/domain/accounts/service.js';
import { openSimDatabase, startSimService, type SimService } from '../../sim/service.js';
import { installClock, type SimClock } from '../../sim/clock.js';
import { createRng } from '../../sim/rng.js';
import type { Model } from '../../sim/ops.js';
import { atMostOneSuccessfulAttempt, noAttemptAfterFinalDecline, reattemptLimitsRespected } from '../../sim/invariants-attempts.js';
import { disputeFundsMatchOutcomes, disputesEndAsTheProcessorDecided, reconciliationFindsNoException } from '../../sim/invariants-money.js';
import { json } from '../../sim/query.js';
import { parseId } from '../../src/kernel/ids.js';
import { isPostgres } from '../support/helpers.js';

describe.skipIf(isPostgres)('the simulation invariants of cascades, disputes and reconciliation', () => {
  let database: Database;
  let clock: SimClock;
  let s: SimService;
  let key: string;
  const model = { wrongAnswers: [] } as unknown as Model;
  const exec = (q: ReturnType<typeof sql>) => database.db.execute(q);
  const call = async (method: string, path: string, body?: unknown) => {
    const a = await s.request(method, path, { key, body, idempotencyKey: method === 'POST' ? `k-${path}-${JSON.stringify(body)}` : undefined });
    if (a === 'crashed') throw new Error('crashed');
    return a;
  };
  const pay = async (number: string) => {
    const order = await call('POST', '/v1/payment-orders', { amount: 5000, currency: 'EUR', reference: number, customer: { email: 'c@example.com', name: 'C' } });
    return (await call('POST', '/v1/payments', { payment_order: order.body.id, payment_method: { type: 'card', card: { number, exp_month: 12, exp_year: 2035, cvc: '123' } } })).body;
  };
  /** Adds an attempt to what a payment recorded (jsonb as the driver hands it over, written back as an array). */
  const appendAttempt = async (id: string, attempt: (list: Record<string, unknown>[]) => Record<string, unknown>) => {
    const uuid = parseId('pay', id)!;
    const [row] = ((await exec(sql`SELECT attempts FROM payments WHERE id = ${uuid}`)) as unknown as { rows: { attempts: unknown }[] }).rows;
    const list = json<Record<string, unknown>[]>(row!.attempts);
    await exec(sql`UPDATE payments SET attempts = ${JSON.stringify([...list, attempt(list)])}::jsonb WHERE id = ${uuid}`);
  };
  const settle = async () => {
    clock.advance(35_000);
    await s.pumpProcessors();
    await s.worker();
  };

  beforeAll(async () => {
    database = await openSimDatabase();
    clock = installClock();
    s = await startSimService(clock, createRng(1), database);
    const account = await createAccount(database.db, 'Merchant');
    key = (await issueKey(database.db, account.id, { livemode: false })).secret;
  }, 300_000);
  afterAll(async () => {
    await s?.close();
    clock?.uninstall();
    await database?.close();
  });

  it('a cascade and a do_not_retry decline hold them; a second success, an attempt after the decline and a 16th reattempt break them', async () => {
    const rules = [{ connectors: [{ name: 'simulator_a' }, { name: 'simulator_b' }], strategy: 'success_rate', cascade: { on: ['generic', 'retry_later'], max_attempts: 2 } }];
    expect((await call('PUT', '/v1/routing', { rules })).status).toBe(200);
    const cascaded = await pay('4000000000000440');
    expect(cascaded).toMatchObject({ status: 'succeeded', connector: 'simulator_b' });
    const stolen = await pay('4000000000000853');
    expect(stolen).toMatchObject({ status: 'failed', decline_type: 'do_not_retry' });
    for (const invariant of [atMostOneSuccessfulAttempt, noAttemptAfterFinalDecline, reattemptLimitsRespected]) expect(await invariant(s, model)).toEqual([]);

    // The cascaded payment recorded a second success; the processors hold two charges of it.
    await appendAttempt(cascaded.id, (list) => list[list.length - 1]!);
    await exec(sql`INSERT INTO simulator_objects (processor, kind, reference, object_id, body) VALUES ('simulator_a', 'charge', ${`${cascaded.id}_3`}, 'x3', '{"state": "CAPTURED", "created_at": "2030-01-01T00:00:00.000Z"}')`);
    expect(await atMostOneSuccessfulAttempt(s, model)).toHaveLength(2);

    // The stolen card tried again after its do_not_retry decline, 16 times within the day.
    await appendAttempt(stolen.id, () => ({ connector: 'simulator_b', outcome: 'declined', decline_type: 'do_not_retry' }));
    for (const processor of ['simulator_a', 'simulator_b']) {
      for (let n = 2; n <= 9; n++) {
        await exec(sql`INSERT INTO simulator_objects (processor, kind, reference, object_id, body) VALUES (${processor}, 'charge', ${`${stolen.id}_${n}`}, ${`${processor}-${n}`}, '{"state": "REFUSED", "refusal": "DO_NOT_HONOUR", "created_at": "2030-01-01T00:00:00.000Z"}') ON CONFLICT DO NOTHING`);
      }
    }
    expect((await noAttemptAfterFinalDecline(s, model)).join('\n')).toMatch(/attempt\(s\) after simulator_a declined it do_not_retry[\s\S]*came after/);
    expect((await reattemptLimitsRespected(s, model)).join('\n')).toMatch(/do_not_retry[\s\S]*16 reattempts within 30 day\(s\)/);
  }, 120_000);

  it('a dispute won with evidence and a night reconciled hold them; a won dispute booked as lost and a payment booked short break them', async () => {
    const disputed = await pay('4000000000000259');
    expect(disputed.status).toBe('succeeded');
    await settle();
    const [open] = (await call('GET', `/v1/disputes?payment=${disputed.id}`)).body.data;
    expect(open).toMatchObject({ status: 'needs_response', funds_withdrawn: true });
    expect((await call('POST', '/v1/refunds', { payment: disputed.id })).body.error.code).toBe('charge_disputed');
    expect((await call('POST', `/v1/disputes/${open.id}/evidence`, { evidence: { uncategorized_text: 'winning_evidence' }, submit: true })).body.status).toBe('under_review');
    await settle();
    expect((await call('GET', `/v1/disputes/${open.id}`)).body.status).toBe('won');
    for (const invariant of [disputeFundsMatchOutcomes, disputesEndAsTheProcessorDecided]) expect(await invariant(s, model)).toEqual([]);

    const [account] = (await call('GET', '/v1/connector-accounts')).body.data;
    const night = { period_start: '2030-01-01T00:00:00.000Z', period_end: '2030-01-02T00:00:00.000Z' };
    const created = account ?? (await call('POST', '/v1/connector-accounts', { connector: 'simulator_a', name: 'sim-a', credentials: {} })).body;
    clock.advance(86_400_000);
    expect((await call('POST', '/v1/reconciliation-runs', { connector_account: created.id, ...night })).status).toBe(201);
    expect(await reconciliationFindsNoException(s, model)).toEqual([]);

    await exec(sql`UPDATE disputes SET status = 'lost'`);
    expect((await disputeFundsMatchOutcomes(s, model)).join('\n')).toMatch(/is lost: 1 withdrawal\(s\), 1 reinstatement\(s\)/);
    expect((await disputesEndAsTheProcessorDecided(s, model)).join('\n')).toMatch(/the processor's is WON/);
    await exec(sql`UPDATE payments SET amount_captured = amount_captured - 1 WHERE status = 'succeeded'`);
    expect((await call('POST', '/v1/reconciliation-runs', { connector_account: created.id, ...night, period_end: '2030-01-01T23:59:59.000Z' })).status).toBe(201);
    expect((await reconciliationFindsNoException(s, model)).join('\n')).toMatch(/amount_mismatch/);
  }, 120_000);
});
