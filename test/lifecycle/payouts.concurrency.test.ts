// Payouts under real concurrency: 50 simultaneous payouts against a balance that covers 10 (exactly
// 10 are created, the balance never goes negative), cancel racing the submission (exactly one
// wins, and the money ends where the winner says), and the ledger's invariants after randomized
// sequences of payments, refunds, fundings, payouts, cancels, worker passes and bank outcomes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CARDS, orderAndPay, balanceOf } from '../support/payments.js';
import { expectLedgerClean, fund, newBeneficiary, payout } from '../support/payouts.js';
import { submitPayoutNow } from '../../src/domain/payouts/submission.js';
import { parseId } from '../../src/kernel/ids.js';
import { type Api } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';

const h = useService({ submitOnCreate: false });
const tenant = () => h.newTenant();

describe('concurrent payouts never overdraw', () => {
  it('50 concurrent payouts against a balance covering 10: exactly 10 succeed, 40 insufficient_balance', async () => {
    const { api, accountId } = await tenant();
    // The balance is spread over several ledger slots, as many payments would leave it.
    for (let i = 0; i < 5; i++) await fund(api, 2000);
    const ben = await newBeneficiary(api, '0000');
    const results = await Promise.all(Array.from({ length: 50 }, () => payout(api, ben.id, 1000)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 422)).toHaveLength(40);
    for (const r of results.filter((x) => x.status === 422)) expect(r.body.error.code).toBe('insufficient_balance');
    expect(await balanceOf(api)).toEqual({ available: 0, reserved: 10_000, pending: 0 });
    await h.service.runPayouts();
    expect(await balanceOf(api)).toEqual({ available: 0, reserved: 0, pending: 0 });
    await expectLedgerClean(h.db, accountId);
  });

  it('payouts racing payments and fundings of the same currency stay within what was available', async () => {
    const { api, accountId } = await tenant();
    await fund(api, 3000);
    const ben = await newBeneficiary(api, '0000');
    const results = await Promise.all([
      ...Array.from({ length: 20 }, () => payout(api, ben.id, 500)),
      ...Array.from({ length: 5 }, () => api.post('/v1/test-helpers/balance/fund', { amount: 500, currency: 'EUR' })),
    ]);
    const created = results.slice(0, 20).filter((r) => r.status === 201).length;
    expect(created).toBeGreaterThanOrEqual(6);
    expect(created).toBeLessThanOrEqual(11);
    const balance = await balanceOf(api);
    expect(balance.available).toBeGreaterThanOrEqual(0);
    expect(balance.available + balance.reserved).toBe(5500);
    expect(balance.reserved).toBe(created * 500);
    await expectLedgerClean(h.db, accountId);
  });
});

describe('cancel races the submission', () => {
  it('exactly one wins, every round, and the money follows the winner', async () => {
    const { api, accountId } = await tenant();
    await fund(api, 100_000);
    const ben = await newBeneficiary(api, '0000');
    const accountUuid = parseId('acct', accountId)!;
    const sim = h.service.simulator();
    let cancels = 0;
    let submissions = 0;
    for (let round = 0; round < 30; round++) {
      const created = await payout(api, ben.id, 100);
      const uuid = parseId('po', created.body.id)!;
      const submit = round % 2 === 0 ? submitPayoutNow(h.db, h.service.payouts, accountUuid, uuid) : h.service.runPayouts();
      const [cancel] = await Promise.all([api.post(`/v1/payouts/${created.body.id}/cancel`), submit]);
      const after = (await api.get(`/v1/payouts/${created.body.id}`)).body;
      const sent = sim.payouts.requests.get(created.body.id) ?? 0;
      if (cancel.status === 200) {
        cancels += 1;
        expect(after.status).toBe('cancelled');
        expect(sent).toBe(0);
      } else {
        submissions += 1;
        expect(cancel.status).toBe(422);
        expect(cancel.body.error.code).toBe('invalid_state');
        expect(cancel.body.error.message).toMatch(/whose status is (processing|paid); allowed from: pending\.$/);
        expect(after.status).toBe('paid');
        expect(sent).toBe(1);
      }
    }
    expect(cancels + submissions).toBe(30);
    const paid = submissions * 100;
    expect(await balanceOf(api)).toEqual({ available: 100_000 - paid, reserved: 0, pending: 0 });
    await expectLedgerClean(h.db, accountId);
  });
});

type Command =
  | { kind: 'pay'; amount: number }
  | { kind: 'refund'; pick: number; share: number }
  | { kind: 'fund'; amount: number }
  | { kind: 'payout'; amount: number; ending: '0000' | '0002' | '0003' }
  | { kind: 'cancel'; pick: number }
  | { kind: 'worker' }
  | { kind: 'resolve'; pick: number; outcome: 'paid' | 'failed' | 'returned' };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant('pay' as const), amount: fc.integer({ min: 1, max: 5000 }) }),
  fc.record({ kind: fc.constant('refund' as const), pick: fc.nat(), share: fc.double({ min: 0.1, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('fund' as const), amount: fc.integer({ min: 1, max: 5000 }) }),
  fc.record({ kind: fc.constant('payout' as const), amount: fc.integer({ min: 1, max: 4000 }), ending: fc.constantFrom('0000' as const, '0002' as const, '0003' as const) }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('worker' as const) }),
  fc.record({ kind: fc.constant('resolve' as const), pick: fc.nat(), outcome: fc.constantFrom('paid' as const, 'failed' as const, 'returned' as const) }),
);

async function all(api: Api, path: string) {
  return (await api.get(`${path}?limit=100`)).body.data as Record<string, any>[];
}

describe('the ledger holds after any sequence', () => {
  it('payments, refunds, fundings, payouts, cancels, worker passes and bank outcomes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 10 }), async (commands) => {
        const { api, accountId } = await tenant();
        const beneficiaries = {
          '0000': (await newBeneficiary(api, '0000')).id as string,
          '0002': (await newBeneficiary(api, '0002')).id as string,
          '0003': (await newBeneficiary(api, '0003')).id as string,
        };
        let funded = 0;
        const payments: { id: string; amount: number }[] = [];
        const payouts: string[] = [];
        for (const c of commands) {
          switch (c.kind) {
            case 'pay': {
              const { payment } = await orderAndPay(api, CARDS.success, { amount: c.amount });
              payments.push({ id: payment.id, amount: c.amount });
              break;
            }
            case 'refund': {
              const target = payments[c.pick % Math.max(1, payments.length)];
              if (target) await api.post('/v1/refunds', { payment: target.id, amount: Math.max(1, Math.floor(target.amount * c.share)) });
              break;
            }
            case 'fund':
              await fund(api, c.amount);
              funded += c.amount;
              break;
            case 'payout': {
              const res = await payout(api, beneficiaries[c.ending], c.amount);
              if (res.status === 201) payouts.push(res.body.id);
              else expect(res.body.error.code).toBe('insufficient_balance');
              break;
            }
            case 'cancel': {
              const target = payouts[c.pick % Math.max(1, payouts.length)];
              if (target) await api.post(`/v1/payouts/${target}/cancel`);
              break;
            }
            case 'worker':
              await h.service.runPayouts();
              break;
            case 'resolve': {
              const target = payouts[c.pick % Math.max(1, payouts.length)];
              if (target) await api.post(`/v1/test-helpers/payouts/${target}/resolve`, { outcome: c.outcome });
              break;
            }
          }
          const balance = await balanceOf(api);
          expect(balance.reserved).toBeGreaterThanOrEqual(0);
        }
        await expectLedgerClean(h.db, accountId);
        // The merchant's total follows from the objects' states alone.
        const sum = (rows: Record<string, any>[], pick: (r: Record<string, any>) => boolean) => rows.filter(pick).reduce((s, r) => s + Number(r.amount), 0);
        const [paymentRows, refundRows, payoutRows] = await Promise.all([all(api, '/v1/payments'), all(api, '/v1/refunds'), all(api, '/v1/payouts')]);
        const balance = await balanceOf(api);
        expect(balance.available + balance.reserved).toBe(
          funded + sum(paymentRows, (p) => p.status === 'succeeded') - sum(refundRows, (r) => r.status === 'succeeded') - sum(payoutRows, (p) => p.status === 'paid'),
        );
        expect(balance.reserved).toBe(sum(refundRows, (r) => r.status === 'pending') + sum(payoutRows, (p) => p.status === 'pending' || p.status === 'processing'));
        // Neither payouts nor refunds may take more than is available.
        expect(balance.available).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 12 },
    );
  });
});
