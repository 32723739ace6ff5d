// Settlement timelines: a payment's net pending until available_on (GET /v1/balance shows the
// dates), the worker moving it to available exactly once — across a worker that dies mid-move and
// workers racing — with balance.available; payouts refused on pending-only money; refunds drawing
// on pending then available; a late reversal making available negative and a later payment
// restoring it; and the ledger check clean after a random run with fees and settlement.
import fc from 'fast-check';
import { and, eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { setPricing, setSettlement } from '../../src/domain/terms/service.js';
import { runSettlements } from '../../src/domain/terms/settlement-job.js';
import { runWorkerOnce } from '../../src/worker/worker.js';
import { claimDueSettlement, settle } from '../../src/ledger/settlement.js';
import { PAYMENT_RULES } from '../../src/domain/payments/transitions.js';
import { applyReport } from '../../src/movement/report.js';
import { systemContext } from '../../src/events/service.js';
import { payments } from '../../src/storage/schema.js';
import { availableOn, feeFor } from '../../src/ledger/fees.js';
import { parseId } from '../../src/kernel/ids.js';
import { postJournalEntry } from '../../src/ledger/journal.js';
import { checkLedger } from '../../src/ledger/check.js';
import type { Db } from '../../src/storage/db.js';
import { isPostgres, type Api } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';
import { CARDS, balanceOf, orderAndPay } from '../support/payments.js';
import { expectLedgerClean, fund, newBeneficiary, payout } from '../support/payouts.js';

const h = useService({ submitOnCreate: false });
const DAY_MS = 24 * 3600 * 1000;
/** A time past every settlement date the tests make. */
const later = () => new Date(Date.now() + 30 * DAY_MS);

async function settlingTenant(days = 2) {
  const tenant = await h.newTenant();
  const acct = parseId('acct', tenant.accountId)!;
  await setSettlement(h.db, acct, { method: 'card', days });
  return { ...tenant, acct };
}

async function countFor(acct: string, payment: string) {
  const [row] = await h.query(sql`
    SELECT (SELECT count(*) FROM journal_entries WHERE account_id = ${acct} AND type = 'settlement' AND source_id = ${parseId('pay', payment)})::int AS entries,
           (SELECT count(*) FROM events WHERE account_id = ${acct} AND type = 'balance.available' AND data->'object'->>'source' = ${payment})::int AS events`);
  return { entries: Number(row!.entries), events: Number(row!.events) };
}

/** A late failure of `payment` reported by its processor (a charge-back), through the payments' own transition. */
const reverse = (acct: string, payment: { id: string }) =>
  h.db.transaction(async (tx) => {
    const [row] = await tx.select().from(payments).where(and(eq(payments.accountId, acct), eq(payments.id, parseId('pay', payment.id)!))).for('update');
    const update = { kind: 'reversed', connector: row!.connector!, connectorReference: row!.connectorReference, failureCode: 'charged_back', failureMessage: 'Charged back.' } as const;
    await applyReport(tx, systemContext(acct, false), PAYMENT_RULES, row!, update, [], h.service.payments);
  });

describe('pending until available_on', () => {
  it('holds the net in pending with its date, refuses payouts on it, and the worker moves it once with balance.available', async () => {
    const { api, acct, accountId } = await settlingTenant(2);
    await setPricing(h.db, acct, { method: 'card', bps: 100, fixed: 0, minimum: null });
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 10_000, currency: 'EUR' });
    const tx = (await api.get(`/v1/balance-transactions?source=${payment.id}`)).body.data[0];
    const date = availableOn(new Date(tx.created_at), 2).toISOString();
    expect(tx).toMatchObject({ type: 'payment', amount: 10_000, fee: 100, net: 9900, available_on: date, balance_changes: { available: 0, pending: 9900 } });
    expect((await api.get('/v1/balance')).body).toMatchObject({
      available: [{ currency: 'EUR', amount: 0 }],
      pending: [{ currency: 'EUR', amount: 9900, available_on: date }],
    });

    const ben = await newBeneficiary(api, '0000');
    const refused = await payout(api, ben.id, 1);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('insufficient_balance');

    // Not due yet: nothing moves.
    await runSettlements(h.db, new Date(new Date(date).getTime() - 1));
    expect(await countFor(acct, payment.id)).toEqual({ entries: 0, events: 0 });
    // The worker's pass runs the settlement job.
    const silent = { info() {}, warn() {}, error() {} };
    expect((await runWorkerOnce({ db: h.db, log: silent, now: () => new Date(date) })).settlements).toBeGreaterThanOrEqual(1);
    await runSettlements(h.db, later());
    expect(await countFor(acct, payment.id)).toEqual({ entries: 1, events: 1 });
    expect(await balanceOf(api)).toEqual({ available: 9900, pending: 0, reserved: 0 });
    const event = (await api.get('/v1/events?type=balance.available')).body.data[0];
    expect(event.data.object).toMatchObject({ object: 'balance_transaction', type: 'settlement', source: payment.id, amount: 0, fee: 0, net: 0, balance_changes: { available: 9900, pending: -9900 } });
    expect((await payout(api, ben.id, 9900)).status).toBe(201);
    await expectLedgerClean(h.db, accountId);
  });

  it('a refund draws on pending, then available, and is refused when both together are short', async () => {
    const { api, acct, accountId } = await settlingTenant(3);
    const a = (await orderAndPay(api, CARDS.success, { amount: 5000, currency: 'EUR' })).payment;
    // Its own pending money first.
    expect((await api.post('/v1/refunds', { payment: a.id, amount: 2000 })).body.status).toBe('succeeded');
    expect(await balanceOf(api)).toEqual({ available: 0, pending: 3000, reserved: 0 });
    await runSettlements(h.db, later());
    const ben = await newBeneficiary(api, '0000');
    expect((await payout(api, ben.id, 3000)).status).toBe(201);
    const b = (await orderAndPay(api, CARDS.success, { amount: 300, currency: 'EUR' })).payment;
    expect(await balanceOf(api)).toEqual({ available: 0, pending: 300, reserved: 3000 });

    const short = await api.post('/v1/refunds', { payment: a.id, amount: 1000 });
    expect(short.status).toBe(422);
    expect(short.body.error.code).toBe('insufficient_balance');
    // Another payment's pending money counts, then available.
    expect((await api.post('/v1/refunds', { payment: a.id, amount: 300 })).status).toBe(201);
    await fund(api, 200);
    expect((await api.post('/v1/refunds', { payment: a.id, amount: 200 })).status).toBe(201);
    expect(await balanceOf(api)).toEqual({ available: 0, pending: 0, reserved: 3000 });
    expect((await api.post('/v1/refunds', { payment: b.id })).body.error.code).toBe('insufficient_balance');

    await runSettlements(h.db, later());
    expect(await countFor(acct, b.id)).toEqual({ entries: 0, events: 0 }); // nothing was left of it to move
    await expectLedgerClean(h.db, accountId);
  });
});

describe('exactly once', () => {
  it('a worker that dies mid-move changes nothing; the next one moves the money once', async () => {
    const { api, acct, accountId } = await settlingTenant(1);
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 4200, currency: 'EUR' });
    const now = later();
    if (isPostgres) {
      // A real crash: the worker's connection dies holding the claimed row and its uncommitted move.
      const client = new pg.Client({ connectionString: h.databaseUrl });
      await client.connect();
      const dying = drizzle(client) as unknown as Db;
      // The server process is the transaction's own: through a pooler in transaction mode, a query
      // sent before it may have run on another.
      let pid: number | undefined;
      const died = new Promise<never>((_, reject) => client.on('error', reject));
      died.catch(() => {});
      let claimed!: () => void;
      const holding = new Promise<void>((resolve) => (claimed = resolve));
      const crashed = dying.transaction(async (tx) => {
        pid = ((await tx.execute(sql`SELECT pg_backend_pid() AS pid`)) as unknown as { rows: { pid: number }[] }).rows[0]!.pid;
        const row = await claimDueSettlement(tx, now);
        await settle(tx, row!, now);
        claimed();
        await died; // never commits
      });
      crashed.catch(() => {});
      await holding;
      // A second worker meanwhile skips the row the first one holds.
      await runSettlements(h.db, now);
      expect(await countFor(acct, payment.id)).toEqual({ entries: 0, events: 0 });
      await h.query(sql`SELECT pg_terminate_backend(${pid})`);
      await expect(crashed).rejects.toThrow();
      await client.end().catch(() => {});
    } else {
      await expect(
        h.db.transaction(async (tx) => {
          const row = await claimDueSettlement(tx, now);
          await settle(tx, row!, now);
          throw new Error('the worker died');
        }),
      ).rejects.toThrow('the worker died');
    }
    expect(await balanceOf(api)).toEqual({ available: 0, pending: 4200, reserved: 0 });
    await runSettlements(h.db, now);
    await runSettlements(h.db, now);
    expect(await countFor(acct, payment.id)).toEqual({ entries: 1, events: 1 });
    expect(await balanceOf(api)).toEqual({ available: 4200, pending: 0, reserved: 0 });
    await expectLedgerClean(h.db, accountId);
  });

  it('workers racing over the same due rows move each payment once', async () => {
    const { api, acct, accountId } = await settlingTenant(1);
    const paid = [];
    for (let i = 0; i < 8; i++) paid.push((await orderAndPay(api, CARDS.success, { amount: 100 + i, currency: 'EUR' })).payment);
    const now = later();
    await Promise.all([1, 2, 3, 4].map(() => runSettlements(h.db, now, 3)));
    await runSettlements(h.db, now);
    for (const p of paid) expect(await countFor(acct, p.id)).toEqual({ entries: 1, events: 1 });
    expect((await balanceOf(api)).available).toBe(paid.reduce((s, p) => s + p.amount, 0));
    await expectLedgerClean(h.db, accountId);

    // The check would see a second move of the same money.
    await postJournalEntry(h.db, {
      accountId: acct,
      livemode: false,
      type: 'settlement',
      currency: 'EUR',
      source: { type: 'payment', id: parseId('pay', paid[0]!.id)! },
      lines: [
        { ledgerAccount: 'merchant_pending', amount: 100 },
        { ledgerAccount: 'merchant_available', amount: -100 },
      ],
      createdAt: new Date(),
    });
    const report = await checkLedger(h.db, { accountId: acct });
    expect(report.ok).toBe(false);
    expect(report.settlementMismatches).toEqual([
      { account_id: acct, livemode: false, currency: 'EUR', subject: 'pending', expected: 0, found: -100 },
      { account_id: acct, livemode: false, currency: 'EUR', subject: parseId('pay', paid[0]!.id), expected: 1, found: 2 },
    ]);
  });
});

describe('late failures', () => {
  it('a reversal after settlement makes available negative; a later payment restores it', async () => {
    const { api, acct, accountId } = await settlingTenant(1);
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 5000, currency: 'EUR' });
    await runSettlements(h.db, later());
    const ben = await newBeneficiary(api, '0000');
    expect((await payout(api, ben.id, 4000)).status).toBe(201);
    await reverse(acct, payment);
    expect(await balanceOf(api)).toEqual({ available: -4000, pending: 0, reserved: 4000 });
    const tx = (await api.get(`/v1/balance-transactions?type=payment_reversal`)).body.data[0];
    expect(tx).toMatchObject({ source: payment.id, amount: -5000, fee: 0, net: -5000 });
    expect((await payout(api, ben.id, 1)).status).toBe(422);
    await expectLedgerClean(h.db, accountId);

    await orderAndPay(api, CARDS.success, { amount: 6000, currency: 'EUR' });
    await runSettlements(h.db, later());
    expect(await balanceOf(api)).toEqual({ available: 2000, pending: 0, reserved: 4000 });
    await expectLedgerClean(h.db, accountId);
  });

  it('a reversal before settlement takes the payment’s own pending money: nothing is left to move', async () => {
    const { api, acct, accountId } = await settlingTenant(1);
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 3000, currency: 'EUR' });
    await reverse(acct, payment);
    expect(await balanceOf(api)).toEqual({ available: 0, pending: 0, reserved: 0 });
    await runSettlements(h.db, later());
    expect(await countFor(acct, payment.id)).toEqual({ entries: 0, events: 0 });
    await expectLedgerClean(h.db, accountId);
  });
});

describe('property: the ledger holds after any run with fees and settlement', () => {
  type Action =
    | { kind: 'pay'; card: string; amount: number; currency: string }
    | { kind: 'refund'; target: number; amount: number | null }
    | { kind: 'fund'; amount: number; currency: string }
    | { kind: 'settle' }
    | { kind: 'reverse'; target: number };
  const currency = fc.constantFrom('EUR', 'JPY', 'KWD');
  const action: fc.Arbitrary<Action> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('pay' as const), card: fc.constantFrom(CARDS.success, CARDS.success, CARDS.declined), amount: fc.integer({ min: 1, max: 100_000 }), currency }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('refund' as const), target: fc.nat(), amount: fc.option(fc.integer({ min: 1, max: 60_000 }), { nil: null }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('fund' as const), amount: fc.integer({ min: 1, max: 50_000 }), currency }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'settle' as const }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('reverse' as const), target: fc.nat() }) },
  );

  async function run(api: Api, acct: string, actions: Action[], concurrency: number) {
    const paid: { id: string; amount: number; currency: string; status: string }[] = [];
    const reversed = new Set<string>();
    for (let i = 0; i < actions.length; i += concurrency) {
      await Promise.all(
        actions.slice(i, i + concurrency).map(async (a) => {
          if (a.kind === 'pay') paid.push((await orderAndPay(api, a.card, { amount: a.amount, currency: a.currency })).payment);
          else if (a.kind === 'fund') expect((await fund(api, a.amount, a.currency)).object).toBe('balance_transaction');
          else if (a.kind === 'settle') await runSettlements(h.db, later());
          else if (paid.length) {
            const p = paid[a.target % paid.length]!;
            if (a.kind === 'refund') {
              const res = await api.post('/v1/refunds', { payment: p.id, ...(a.amount === null ? {} : { amount: a.amount }) });
              expect([201, 422], res.text).toContain(res.status);
            } else if (p.status === 'succeeded' && !reversed.has(p.id)) {
              reversed.add(p.id);
              await reverse(acct, p);
            }
          }
        }),
      );
    }
    return paid;
  }

  it('holds, and every payment carries the fee its schedule gives', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 12 }), fc.constantFrom(1, 4), async (actions, concurrency) => {
        const { api, acct, accountId } = await settlingTenant(2);
        const schedule = { bps: 290, fixed: 30, minimum: 50 };
        await setPricing(h.db, acct, { method: 'card', ...schedule, refundsReturnFee: true });
        await setSettlement(h.db, acct, { method: 'card', currency: 'JPY', days: 0 });
        const paid = await run(api, acct, actions, concurrency);
        await expectLedgerClean(h.db, accountId);
        for (const p of paid.filter((x) => x.status === 'succeeded')) {
          const tx = (await api.get(`/v1/balance-transactions?source=${p.id}&type=payment`)).body.data[0];
          expect(tx).toMatchObject({ amount: p.amount, fee: feeFor(p.amount, schedule) });
        }
        const balance = (await api.get('/v1/balance')).body;
        for (const entry of balance.pending) expect(entry.amount).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: isPostgres ? 15 : 6 },
    );
  }, 240_000);
});
