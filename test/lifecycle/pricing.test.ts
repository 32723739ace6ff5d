// Pricing per account: the fee arithmetic at its edges (half-up rounding, zero- and three-decimal
// currencies, minimum, never above the amount), fees booked as their own journal lines and shown
// on balance transactions (amount, fee, net), refunds keeping or returning the fee, payout fees,
// and the defaults (no terms) booking exactly what they booked before.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { availableOn, feeFor, feeReturnedFor } from '../../src/ledger/fees.js';
import { setPricing, setSettlement, termsFor } from '../../src/domain/terms/service.js';
import { parseId } from '../../src/kernel/ids.js';
import { useService } from '../support/fixtures.js';
import { CARDS, balanceOf, orderAndPay } from '../support/payments.js';
import { expectLedgerClean, fund, newBeneficiary, payout } from '../support/payouts.js';
import type { Api } from '../support/helpers.js';

const h = useService({ submitOnCreate: false });

const accountUuid = (accountId: string) => parseId('acct', accountId)!;

async function txOf(api: Api, source: string, type: string) {
  const res = await api.get(`/v1/balance-transactions?source=${source}&type=${type}`);
  expect(res.status, res.text).toBe(200);
  expect(res.body.data).toHaveLength(1);
  return res.body.data[0];
}

describe('fee arithmetic', () => {
  it('rounds the percentage half up, adds the fixed part, keeps to the minimum and never passes the amount', () => {
    const plain = (bps: number, fixed = 0, minimum: number | null = null) => ({ bps, fixed, minimum });
    expect(feeFor(1000, plain(290, 30))).toBe(59);
    expect(feeFor(10, plain(500))).toBe(1); // 0.5 → 1
    expect(feeFor(9, plain(500))).toBe(0); // 0.45 → 0
    expect(feeFor(30, plain(500))).toBe(2); // 1.5 → 2
    expect(feeFor(1, plain(5000))).toBe(1); // 0.5 of the smallest unit → 1
    // Zero-decimal (JPY: the amount is in yen) and three-decimal (KWD: in fils) alike: integers only.
    expect(feeFor(150, plain(290))).toBe(4); // ¥4.35 → ¥4
    expect(feeFor(1050, plain(290, 10))).toBe(40); // ¥30.45 + ¥10
    expect(feeFor(1005, plain(150))).toBe(15); // 15.075 fils → 15
    expect(feeFor(1100, plain(150))).toBe(17); // 16.5 fils → 17
    // The minimum, and the cap at the amount.
    expect(feeFor(100, plain(290, 0, 50))).toBe(50);
    expect(feeFor(20, plain(290, 30))).toBe(20);
    expect(feeFor(10, plain(0, 0, 25))).toBe(10);
    // The largest amount, exactly.
    expect(feeFor(99_999_999_999, plain(1))).toBe(10_000_000); // 9 999 999.9999 → 10 000 000
    expect(feeFor(99_999_999_999, plain(10_000))).toBe(99_999_999_999);
  });

  it('gives a fee back in shares that add up to the whole fee once everything is refunded', () => {
    expect(feeReturnedFor(59, 1000, 500)).toBe(30); // 29.5 → 30
    expect(feeReturnedFor(59, 1000, 1000)).toBe(59); // the second half gets 29
    expect(feeReturnedFor(59, 1000, 1)).toBe(0);
    expect(feeReturnedFor(3, 3, 1) + (feeReturnedFor(3, 3, 2) - feeReturnedFor(3, 3, 1)) + (3 - feeReturnedFor(3, 3, 2))).toBe(3);
  });

  it('counts settlement in business days, Monday to Friday UTC, to the start of the day', () => {
    const monday = new Date('2026-11-23T15:30:00.000Z');
    const friday = new Date('2026-11-27T23:59:59.999Z');
    const saturday = new Date('2026-11-28T08:00:00.000Z');
    expect(availableOn(monday, 1).toISOString()).toBe('2026-11-24T00:00:00.000Z');
    expect(availableOn(monday, 2).toISOString()).toBe('2026-11-25T00:00:00.000Z');
    expect(availableOn(monday, 5).toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(availableOn(friday, 1).toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(availableOn(friday, 2).toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(availableOn(saturday, 1).toISOString()).toBe('2026-11-30T00:00:00.000Z');
  });
});

describe('terms resolution', () => {
  it('takes the currency row over the default row field by field, per method', async () => {
    const { accountId } = await h.newTenant();
    const acct = accountUuid(accountId);
    expect(await termsFor(h.db, acct, 'card', 'EUR')).toEqual({ fee: null, refundsReturnFee: false, settlementDays: 0, disputeFee: 0 });
    await setPricing(h.db, acct, { method: 'card', bps: 290, fixed: 30, minimum: null, refundsReturnFee: true });
    await setSettlement(h.db, acct, { method: 'card', currency: 'GBP', days: 3 });
    // GBP has a settlement delay of its own and the default pricing.
    expect(await termsFor(h.db, acct, 'card', 'GBP')).toEqual({ fee: { bps: 290, fixed: 30, minimum: null }, refundsReturnFee: true, settlementDays: 3, disputeFee: 0 });
    expect(await termsFor(h.db, acct, 'mandate', 'GBP')).toEqual({ fee: null, refundsReturnFee: false, settlementDays: 0, disputeFee: 0 });
    await setPricing(h.db, acct, { method: 'card', currency: 'GBP', bps: 100, fixed: 0, minimum: 5 });
    expect(await termsFor(h.db, acct, 'card', 'GBP')).toEqual({ fee: { bps: 100, fixed: 0, minimum: 5 }, refundsReturnFee: true, settlementDays: 3, disputeFee: 0 });
    expect(await termsFor(h.db, acct, 'card', 'EUR')).toEqual({ fee: { bps: 290, fixed: 30, minimum: null }, refundsReturnFee: true, settlementDays: 0, disputeFee: 0 });
  });
});

describe('fees on payments', () => {
  it('books each payment with its fee as its own lines; the currency schedule overrides the default one', async () => {
    const { api, accountId } = await h.newTenant();
    const acct = accountUuid(accountId);
    await setPricing(h.db, acct, { method: 'card', bps: 290, fixed: 30, minimum: null });
    await setPricing(h.db, acct, { method: 'card', currency: 'JPY', bps: 290, fixed: 10, minimum: null });
    await setPricing(h.db, acct, { method: 'card', currency: 'KWD', bps: 125, fixed: 0, minimum: 100 });
    expect(await termsFor(h.db, acct, 'card', 'USD')).toEqual({ fee: { bps: 290, fixed: 30, minimum: null }, refundsReturnFee: false, settlementDays: 0, disputeFee: 0 });

    const eur = (await orderAndPay(api, CARDS.success, { amount: 1999, currency: 'EUR' })).payment;
    const jpy = (await orderAndPay(api, CARDS.success, { amount: 1050, currency: 'JPY' })).payment;
    const kwd = (await orderAndPay(api, CARDS.success, { amount: 1234, currency: 'KWD' })).payment;
    const tiny = (await orderAndPay(api, CARDS.success, { amount: 50, currency: 'KWD' })).payment;

    const eurTx = await txOf(api, eur.id, 'payment');
    expect(eurTx).toMatchObject({ type: 'payment', source: eur.id, amount: 1999, fee: 88, net: 1911, balance_changes: { available: 1911, pending: 0, reserved: 0 } });
    expect(eurTx.available_on).toBe(eurTx.created_at); // T+0: available at once
    expect(await txOf(api, jpy.id, 'payment')).toMatchObject({ amount: 1050, fee: 40, net: 1010 });
    expect(await txOf(api, kwd.id, 'payment')).toMatchObject({ amount: 1234, fee: 100, net: 1134 }); // 15.425 fils, raised to the minimum
    expect(await txOf(api, tiny.id, 'payment')).toMatchObject({ amount: 50, fee: 50, net: 0 }); // the minimum, capped at the amount

    expect((await balanceOf(api, 'EUR')).available).toBe(1911);
    expect((await balanceOf(api, 'JPY')).available).toBe(1010);
    expect((await balanceOf(api, 'KWD')).available).toBe(1134);
    // Fee lines of their own: merchant balance → fee_revenue.
    const lines = await h.query(
      sql`SELECT l.ledger_account, l.amount FROM journal_lines l JOIN journal_entries e ON e.account_id = l.account_id AND e.id = l.entry_id
          WHERE e.account_id = ${acct} AND e.source_id = ${parseId('pay', eur.id)} ORDER BY l.line_no`,
    );
    expect(lines.map((l) => [l.ledger_account, Number(l.amount)])).toEqual([
      ['processor_clearing', 1999],
      ['merchant_available', -1999],
      ['merchant_available', 88],
      ['fee_revenue', -88],
    ]);
    await expectLedgerClean(h.db, accountId);
  });

  it('an account onboarding gave no terms is booked as before: the full amount, available, no fee lines', async () => {
    const { api, accountId } = await h.newTenant();
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 700, currency: 'EUR' });
    expect(await txOf(api, payment.id, 'payment')).toMatchObject({ amount: 700, fee: 0, net: 700, balance_changes: { available: 700, pending: 0, reserved: 0 } });
    expect((await api.get('/v1/balance')).body).toEqual({
      object: 'balance',
      livemode: false,
      available: [{ currency: 'EUR', amount: 700 }],
      pending: [{ currency: 'EUR', amount: 0 }],
      reserved: [{ currency: 'EUR', amount: 0 }],
    });
    const lines = await h.query(sql`SELECT ledger_account FROM journal_lines WHERE account_id = ${accountUuid(accountId)} ORDER BY line_no`);
    expect(lines.map((l) => l.ledger_account)).toEqual(['processor_clearing', 'merchant_available']);
  });
});

describe('refunds and the fee', () => {
  it('keeps the fee by default: the merchant pays back the whole refund', async () => {
    const { api, accountId } = await h.newTenant();
    await setPricing(h.db, accountUuid(accountId), { method: 'card', bps: 290, fixed: 30, minimum: null });
    await fund(api, 5000);
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 1000, currency: 'EUR' });
    const refund = await api.post('/v1/refunds', { payment: payment.id });
    expect(refund.body.status, refund.text).toBe('succeeded');
    expect(await txOf(api, refund.body.id, 'refund_settlement')).toMatchObject({ amount: -1000, fee: 0, net: -1000 });
    expect((await balanceOf(api)).available).toBe(5000 + 941 - 1000);
    await expectLedgerClean(h.db, accountId);
  });

  it('returns the fee share by share when the schedule says so, to the whole fee', async () => {
    const { api, accountId } = await h.newTenant();
    await setPricing(h.db, accountUuid(accountId), { method: 'card', bps: 290, fixed: 30, minimum: null, refundsReturnFee: true });
    await fund(api, 5000);
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 1000, currency: 'EUR' });
    const first = await api.post('/v1/refunds', { payment: payment.id, amount: 500 });
    const second = await api.post('/v1/refunds', { payment: payment.id, amount: 500 });
    expect(await txOf(api, first.body.id, 'refund_settlement')).toMatchObject({ amount: -500, fee: -30, net: -470 });
    expect(await txOf(api, second.body.id, 'refund_settlement')).toMatchObject({ amount: -500, fee: -29, net: -471 });
    // Refunded in full, fee and all: the balance is where it was before the payment.
    expect((await balanceOf(api)).available).toBe(5000);
    await expectLedgerClean(h.db, accountId);
  });
});

describe('payout fees', () => {
  it('charges the fee with the payout, needs available to cover both, and gives it back on cancel', async () => {
    const { api, accountId } = await h.newTenant();
    await setPricing(h.db, accountUuid(accountId), { method: 'payout', bps: 0, fixed: 25, minimum: null });
    await fund(api, 1000);
    const ben = await newBeneficiary(api, '0000');
    const tooMuch = await payout(api, ben.id, 980);
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.error.code).toBe('insufficient_balance');
    const po = await payout(api, ben.id, 975);
    expect(po.status, po.text).toBe(201);
    // The payout itself only moves money from available to reserved; its fee leaves the balance.
    expect(await txOf(api, po.body.id, 'payout')).toMatchObject({ amount: 0, fee: 25, net: -25, balance_changes: { available: -1000, reserved: 975 } });
    expect(await balanceOf(api)).toEqual({ available: 0, reserved: 975, pending: 0 });
    const cancelled = await api.post(`/v1/payouts/${po.body.id}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(await txOf(api, po.body.id, 'payout_release')).toMatchObject({ amount: 0, fee: -25, net: 25, balance_changes: { available: 1000, reserved: -975 } });
    expect(await balanceOf(api)).toEqual({ available: 1000, reserved: 0, pending: 0 });
    await expectLedgerClean(h.db, accountId);
  });
});
