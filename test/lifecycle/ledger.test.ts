// The double-entry ledger: balances and balance transactions through the API, test-mode funding,
// the database refusing unbalanced or edited entries, the invariant check (library and CLI)
// finding tampering, and a property: after any random run of payments, refunds and funding —
// sequential or concurrent — every entry balances, every balance equals its journal, and the
// balance equals what the payments and refunds say it should.
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runLedger } from '../../src/cli/ledger.js';
import { assertBalanced, postJournalEntry, UnbalancedEntryError } from '../../src/ledger/journal.js';
import { paymentReversed } from '../../src/ledger/settlement.js';
import { checkLedger } from '../../src/ledger/check.js';
import { newId, parseId } from '../../src/kernel/ids.js';
import { isPostgres, type Api } from '../support/helpers.js';
import { CARDS, orderAndPay } from '../support/payments.js';
import { useService } from '../support/fixtures.js';

const h = useService();
const newApi = async () => {
  const tenant = await h.newTenant();
  return { api: tenant.api, tenant };
};

/** The SQLSTATE a statement was refused with (drizzle keeps the driver's error as its cause). */
async function refusedWith(statement: Promise<unknown>): Promise<string> {
  const err: any = await statement.then(
    () => expect.fail('the statement was accepted'),
    (e: unknown) => e,
  );
  return err.cause?.code ?? err.code;
}

describe('balance and balance transactions', () => {
  it('starts empty; funding and payments credit available, per currency', async () => {
    const { api } = await newApi();
    expect((await api.get('/v1/balance')).body).toEqual({ object: 'balance', livemode: false, available: [], pending: [], reserved: [] });

    const funded = await api.post('/v1/test-helpers/balance/fund', { amount: 5000, currency: 'USD' });
    expect(funded.status, funded.text).toBe(201);
    expect(funded.body).toMatchObject({
      object: 'balance_transaction',
      type: 'test_funding',
      currency: 'USD',
      amount: 5000,
      balance_changes: { available: 5000, pending: 0, reserved: 0 },
      source: null,
    });
    expect(funded.body.id).toMatch(/^txn_[0-9a-z]{26}$/);
    // Funding needs an Idempotency-Key, and a replay funds nothing twice.
    const keyed = await api.post('/v1/test-helpers/balance/fund', { amount: 5000, currency: 'USD' }, { idempotencyKey: 'fund-1' });
    const replay = await api.post('/v1/test-helpers/balance/fund', { amount: 5000, currency: 'USD' }, { idempotencyKey: 'fund-1' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(keyed.text);
    expect((await api.post('/v1/test-helpers/balance/fund', { amount: 1, currency: 'USD' }, { idempotencyKey: undefined })).body.error.code).toBe(
      'idempotency_key_missing',
    );

    const { payment } = await orderAndPay(api, CARDS.success, { amount: 1999, currency: 'EUR' });
    const balance = (await api.get('/v1/balance')).body;
    expect(balance).toEqual({
      object: 'balance',
      livemode: false,
      available: [
        { currency: 'EUR', amount: 1999 },
        { currency: 'USD', amount: 10_000 },
      ],
      pending: [
        { currency: 'EUR', amount: 0 },
        { currency: 'USD', amount: 0 },
      ],
      reserved: [
        { currency: 'EUR', amount: 0 },
        { currency: 'USD', amount: 0 },
      ],
    });

    const all = (await api.get('/v1/balance-transactions')).body;
    expect(all.data.map((t: any) => [t.type, t.currency, t.amount])).toEqual([
      ['payment', 'EUR', 1999],
      ['test_funding', 'USD', 5000],
      ['test_funding', 'USD', 5000],
    ]);
    expect(all.data[0].source).toBe(payment.id);
    expect((await api.get('/v1/balance-transactions?type=payment')).body.data).toHaveLength(1);
    expect((await api.get('/v1/balance-transactions?currency=USD&limit=1')).body).toMatchObject({ has_more: true });
    expect((await api.get(`/v1/balance-transactions?source=${payment.id}`)).body.data).toHaveLength(1);
    expect((await api.get('/v1/balance-transactions?source=ord_x')).status).toBe(400);
    expect((await api.get('/v1/balance-transactions?type=gift')).status).toBe(400);
    // The other mode has its own ledger.
    const { live } = await h.newTenant();
    expect((await live.get('/v1/balance-transactions')).body.data).toEqual([]);
  });
});

describe('double-entry integrity', () => {
  it('the posting function refuses unbalanced entries', () => {
    expect(() => assertBalanced([{ ledgerAccount: 'merchant_available', amount: -5 }])).toThrow(UnbalancedEntryError);
    expect(() => assertBalanced([{ ledgerAccount: 'merchant_available', amount: -5 }, { ledgerAccount: 'processor_clearing', amount: 4 }])).toThrow(/sum to -1/);
    expect(() => assertBalanced([{ ledgerAccount: 'merchant_available', amount: 0.5 }, { ledgerAccount: 'processor_clearing', amount: -0.5 }])).toThrow(UnbalancedEntryError);
    expect(() => assertBalanced([{ ledgerAccount: 'merchant_available', amount: -5 }, { ledgerAccount: 'processor_clearing', amount: 5 }])).not.toThrow();
  });

  it('the database refuses, at commit, lines that do not sum to zero', async () => {
    const { tenant } = await newApi();
    const account = parseId('acct', tenant.accountId)!;
    const entry = newId('txn').uuid;
    const attempt = h.db.transaction(async (tx) => {
      await tx.execute(sql`INSERT INTO journal_entries (account_id, id, livemode, type, currency, created_at) VALUES (${account}, ${entry}, false, 'test_funding', 'EUR', now())`);
      await tx.execute(sql`INSERT INTO journal_lines (account_id, entry_id, line_no, livemode, ledger_account, amount) VALUES
        (${account}, ${entry}, 1, false, 'test_funding', 100), (${account}, ${entry}, 2, false, 'merchant_available', -99)`);
    });
    expect(await refusedWith(attempt)).toBe('23514'); // check_violation, raised by the balancing trigger
    expect(await h.query(sql`SELECT * FROM journal_entries WHERE id = ${entry}`)).toEqual([]);
  });

  it('the journal is append-only', async () => {
    const { api, tenant } = await newApi();
    await orderAndPay(api, CARDS.success);
    const account = parseId('acct', tenant.accountId)!;
    // restrict_violation, raised by the append-only triggers, for every change of either table.
    const before = await h.query(sql`SELECT entry_id, line_no, amount FROM journal_lines WHERE account_id = ${account} ORDER BY entry_id, line_no`);
    expect(before.length).toBeGreaterThan(0);
    for (const change of [
      sql`UPDATE journal_lines SET amount = amount * 2 WHERE account_id = ${account}`,
      sql`DELETE FROM journal_lines WHERE account_id = ${account}`,
      sql`UPDATE journal_entries SET currency = 'USD' WHERE account_id = ${account}`,
      sql`DELETE FROM journal_entries WHERE account_id = ${account}`,
    ]) {
      expect(await refusedWith(h.db.execute(change))).toBe('23001');
    }
    expect(await h.query(sql`SELECT entry_id, line_no, amount FROM journal_lines WHERE account_id = ${account} ORDER BY entry_id, line_no`)).toEqual(before);
    expect((await checkLedger(h.db, { accountId: account })).ok).toBe(true);
  });

  it('the invariant check, and `npm run cli -- ledger check`, report a balance that differs from its journal', async () => {
    const { api, tenant } = await newApi();
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 700 });
    const account = parseId('acct', tenant.accountId)!;
    const io = () => {
      const out = { stdout: '', stderr: '' };
      return { out, io: { env: { ...process.env, DATABASE_URL: h.databaseUrl ?? '' }, stdout: (t: string) => (out.stdout += t), stderr: (t: string) => (out.stderr += t) } };
    };
    expect((await checkLedger(h.db, { accountId: account })).ok).toBe(true);
    if (isPostgres) {
      const ok = io();
      expect(await runLedger(['check', '--account', tenant.accountId], ok.io)).toBe(0);
      expect(JSON.parse(ok.out.stdout)).toMatchObject({ ok: true, balanceDifferences: [], unbalancedEntries: [] });
    }

    // Someone edits a stored balance by hand, and forges a second credit for the payment.
    await h.query(sql`UPDATE ledger_balances SET balance = balance - 1 WHERE account_id = ${account} AND ledger_account = 'merchant_available' AND balance <> 0`);
    await postJournalEntry(h.db, {
      accountId: account,
      livemode: false,
      type: 'payment',
      currency: 'EUR',
      source: { type: 'payment', id: parseId('pay', payment.id)! },
      lines: [
        { ledgerAccount: 'processor_clearing', amount: 700 },
        { ledgerAccount: 'merchant_available', amount: -700 },
      ],
      createdAt: new Date(),
    });
    const report = await checkLedger(h.db, { accountId: account });
    expect(report.ok).toBe(false);
    expect(report.balanceDifferences).toEqual([
      { account_id: account, livemode: false, ledger_account: 'merchant_available', currency: 'EUR', from_journal: -1400, stored: -1401 },
    ]);
    expect(report.postingMismatches).toEqual([{ account_id: account, object: payment.id, status: 'succeeded', expected: 'payment', found: 'payment,payment' }]);
    if (isPostgres) {
      const bad = io();
      expect(await runLedger(['check', '--account', tenant.accountId], bad.io)).toBe(3);
      expect(JSON.parse(bad.out.stdout).ok).toBe(false);
      const usage = io();
      expect(await runLedger(['check', '--account', 'nope'], usage.io)).toBe(2);
      expect(await runLedger(['audit'], usage.io)).toBe(2);
    }
  });
});


describe('reversals of succeeded direct debits in the invariant check', () => {
  it('a reversal is expected once, only of a payment credited before and failed since', async () => {
    const { api, tenant } = await newApi();
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 500 });
    const { payment: declined } = await orderAndPay(api, CARDS.declined, { amount: 300 });
    const account = parseId('acct', tenant.accountId)!;
    const reversal = (id: string, amount: number) =>
      paymentReversed(h.db, { accountId: account, livemode: false, currency: 'EUR', amount, source: { type: 'payment', id: parseId('pay', id)! }, createdAt: new Date() });
    // Reversing a payment that is still succeeded, or one never credited, is what the check reports.
    await reversal(payment.id, 500);
    await reversal(declined.id, 300);
    const report = await checkLedger(h.db, { accountId: account });
    expect(report.postingMismatches).toEqual(
      expect.arrayContaining([
        { account_id: account, object: payment.id, status: 'succeeded', expected: 'payment', found: 'payment,payment_reversal' },
        { account_id: account, object: declined.id, status: 'failed', expected: 'payment,payment_reversal', found: 'payment_reversal' },
      ]),
    );
    expect(report.balanceDifferences).toEqual([]);
  });
});

describe('property: the ledger holds after any run of payments, refunds and funding', () => {
  type Action =
    | { kind: 'pay'; card: string; amount: number; currency: string }
    | { kind: 'refund'; target: number; amount: number | null }
    | { kind: 'fund'; amount: number; currency: string }
    | { kind: 'resolve'; target: number; outcome: 'succeeded' | 'failed' };

  const currency = fc.constantFrom('EUR', 'USD', 'JPY');
  const action: fc.Arbitrary<Action> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('pay' as const), card: fc.constantFrom(CARDS.success, CARDS.success, CARDS.declined, CARDS.processorError, CARDS.pending), amount: fc.integer({ min: 1, max: 100_000 }), currency }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('refund' as const), target: fc.nat(), amount: fc.option(fc.integer({ min: 1, max: 60_000 }), { nil: null }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('fund' as const), amount: fc.integer({ min: 1, max: 50_000 }), currency }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('resolve' as const), target: fc.nat(), outcome: fc.constantFrom('succeeded' as const, 'failed' as const) }) },
  );

  async function run(api: Api, actions: Action[], concurrency: number): Promise<void> {
    const payments: string[] = [];
    for (let i = 0; i < actions.length; i += concurrency) {
      await Promise.all(
        actions.slice(i, i + concurrency).map(async (a) => {
          if (a.kind === 'pay') {
            const { payment } = await orderAndPay(api, a.card, { amount: a.amount, currency: a.currency });
            payments.push(payment.id);
          } else if (a.kind === 'fund') {
            expect((await api.post('/v1/test-helpers/balance/fund', { amount: a.amount, currency: a.currency })).status).toBe(201);
          } else if (payments.length) {
            const id = payments[a.target % payments.length]!;
            const res =
              a.kind === 'refund'
                ? await api.post('/v1/refunds', { payment: id, ...(a.amount === null ? {} : { amount: a.amount }) })
                : await api.post(`/v1/test-helpers/payments/${id}/resolve`, { outcome: a.outcome });
            expect([200, 201, 422], res.text).toContain(res.status);
          }
        }),
      );
    }
  }

  async function listAll(api: Api, path: string): Promise<any[]> {
    const out: any[] = [];
    for (let cursor = ''; ; ) {
      const page = (await api.get(`${path}?limit=100${cursor}`)).body;
      out.push(...page.data);
      if (!page.has_more) return out;
      cursor = `&starting_after=${page.data[page.data.length - 1].id}`;
    }
  }

  it('holds (sequential and concurrent runs)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 14 }), fc.constantFrom(1, 4), async (actions, concurrency) => {
        const { api, tenant } = await newApi();
        await run(api, actions, concurrency);
        const account = parseId('acct', tenant.accountId)!;
        const report = await checkLedger(h.db, { accountId: account });
        expect(report, JSON.stringify(report)).toMatchObject({ ok: true });

        // The balance is exactly what the objects say.
        const payments = await listAll(api, '/v1/payments');
        const refunds = await listAll(api, '/v1/refunds');
        const funding = (await listAll(api, '/v1/balance-transactions')).filter((t) => t.type === 'test_funding');
        const expected: Record<string, { available: number; reserved: number }> = {};
        const add = (c: string, field: 'available' | 'reserved', n: number) => {
          expected[c] ??= { available: 0, reserved: 0 };
          expected[c][field] += n;
        };
        for (const p of payments) if (p.status === 'succeeded') add(p.currency, 'available', p.amount);
        for (const r of refunds) {
          if (r.status === 'succeeded') add(r.currency, 'available', -r.amount);
          if (r.status === 'pending') {
            add(r.currency, 'available', -r.amount);
            add(r.currency, 'reserved', r.amount);
          }
        }
        for (const f of funding) add(f.currency, 'available', f.amount);
        const balance = (await api.get('/v1/balance')).body;
        for (const [c, want] of Object.entries(expected)) {
          expect(balance.available.find((x: any) => x.currency === c)?.amount ?? 0).toBe(want.available);
          expect(balance.reserved.find((x: any) => x.currency === c)?.amount ?? 0).toBe(want.reserved);
        }
        // No payment is refunded beyond its amount; amount_refunded counts pending and succeeded refunds.
        for (const p of payments) {
          const mine = refunds.filter((r) => r.payment === p.id && r.status !== 'failed');
          const sum = mine.reduce((s, r) => s + r.amount, 0);
          expect(p.amount_refunded).toBe(sum);
          expect(sum).toBeLessThanOrEqual(p.amount);
          if (p.status !== 'succeeded') expect(mine).toEqual([]);
        }
      }),
      { numRuns: isPostgres ? 25 : 10 },
    );
  }, 240_000);
});
