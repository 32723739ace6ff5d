// Payouts over HTTP with the simulated banks: every test-mode scenario (docs/test-mode.md) through the
// worker's submission and status checks, the test helper and the banks' webhooks; cancel;
// eligibility errors; idempotent create; the ledger (reserve, leave, release, return) after each.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { client, eventually, type Api } from '../support/helpers.js';
import { CARDS, eventTypesOf, orderAndPay, balanceOf } from '../support/payments.js';
import { expectLedgerClean, fund, newBeneficiary, payout } from '../support/payouts.js';
import { setPayoutSettings } from '../../src/domain/accounts/service.js';
import { submitPayoutNow } from '../../src/domain/payouts/submission.js';
import { parseId } from '../../src/kernel/ids.js';
import { useService } from '../support/fixtures.js';

const h = useService({ submitOnCreate: false });

/** A new tenant with `amount` EUR available. */
async function tenant(amount = 100_000) {
  const t = await h.newTenant();
  if (amount) await fund(t.api, amount);
  return t;
}

const get = async (api: Api, id: string) => (await api.get(`/v1/payouts/${id}`)).body;

describe('scenarios of the simulated bank', () => {
  it('0000: pending → processing → paid; the reserved amount leaves', async () => {
    const { api, accountId } = await tenant(10_000);
    const ben = await newBeneficiary(api, '0000');
    const res = await payout(api, ben.id, 2500, 'EUR', { description: 'May invoice', metadata: { invoice: '7' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ object: 'payout', status: 'pending', amount: 2500, currency: 'EUR', beneficiary: ben.id, description: 'May invoice', connector: null, version: 1 });
    expect(res.body.id).toMatch(/^po_[0-9a-z]{26}$/);
    expect(await balanceOf(api)).toEqual({ available: 7500, reserved: 2500, pending: 0 });

    expect(await h.service.runPayouts()).toMatchObject({ submitted: 1 });
    const paid = await get(api, res.body.id);
    expect(paid).toMatchObject({ status: 'paid', connector: 'simulator_a', version: 3, failure_code: null });
    expect(paid.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'succeeded' })]);
    expect(await balanceOf(api)).toEqual({ available: 7500, reserved: 0, pending: 0 });
    expect(await eventTypesOf(api, res.body.id)).toEqual(['payout.created', 'payout.processing', 'payout.paid']);
    const txns = await api.get(`/v1/balance-transactions?source=${res.body.id}`);
    expect(txns.body.data.map((t: { type: string }) => t.type).sort()).toEqual(['payout', 'payout_paid']);
    await expectLedgerClean(h.db, accountId);
  });

  it('0002: the bank declines (account_closed); the amount returns to available', async () => {
    const { api, accountId } = await tenant(10_000);
    const ben = await newBeneficiary(api, '0002', 'gb');
    await fund(api, 5000, 'GBP');
    const res = await payout(api, ben.id, 3000, 'GBP');
    await h.service.runPayouts();
    expect(await get(api, res.body.id)).toMatchObject({ status: 'failed', failure_code: 'account_closed', connector: 'simulator_a' });
    expect(await balanceOf(api, 'GBP')).toEqual({ available: 5000, reserved: 0, pending: 0 });
    expect(await eventTypesOf(api, res.body.id)).toEqual(['payout.created', 'payout.processing', 'payout.failed']);
    await expectLedgerClean(h.db, accountId);
  });

  it('0003: stays processing until resolved: paid, failed, or paid then returned', async () => {
    const { api, accountId } = await tenant(30_000);
    const ben = await newBeneficiary(api, '0003');
    const [a, b, c] = [await payout(api, ben.id, 1000), await payout(api, ben.id, 2000), await payout(api, ben.id, 4000)];
    await h.service.runPayouts();
    for (const p of [a, b, c]) expect(await get(api, p.body.id)).toMatchObject({ status: 'processing', connector: 'simulator_a' });
    expect(await balanceOf(api)).toEqual({ available: 23_000, reserved: 7000, pending: 0 });

    const paid = await api.post(`/v1/test-helpers/payouts/${a.body.id}/resolve`, { outcome: 'paid' });
    expect(paid.status, paid.text).toBe(200);
    expect(paid.body.status).toBe('paid');
    const failed = await api.post(`/v1/test-helpers/payouts/${b.body.id}/resolve`, { outcome: 'failed' });
    expect(failed.body).toMatchObject({ status: 'failed', failure_code: 'payout_declined' });
    const returned = await api.post(`/v1/test-helpers/payouts/${c.body.id}/resolve`, { outcome: 'returned' });
    expect(returned.body).toMatchObject({ status: 'returned', failure_code: 'account_closed' });
    expect(await eventTypesOf(api, c.body.id)).toEqual(['payout.created', 'payout.processing', 'payout.paid', 'payout.returned']);

    // A paid payout can still be returned; a failed one cannot be resolved again.
    const later = await api.post(`/v1/test-helpers/payouts/${a.body.id}/resolve`, { outcome: 'returned' });
    expect(later.body.status).toBe('returned');
    const again = await api.post(`/v1/test-helpers/payouts/${b.body.id}/resolve`, { outcome: 'paid' });
    expect(again.status).toBe(422);
    expect(again.body.error).toMatchObject({ code: 'invalid_state' });
    expect(again.body.error.message).toContain('failed');

    // a and c came back, b never left: everything is available again.
    expect(await balanceOf(api)).toEqual({ available: 30_000, reserved: 0, pending: 0 });
    // The bank's webhooks arrive too and change nothing more.
    await eventually(() => h.query(sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id LIKE 'po_%'`), (r) => Number(r[0]!.n) >= 4, 5000);
    expect(await balanceOf(api)).toEqual({ available: 30_000, reserved: 0, pending: 0 });
    await expectLedgerClean(h.db, accountId);
  });

  it("0003: the bank's webhook settles a payout in transit", async () => {
    const { api, accountId } = await tenant(10_000);
    const ben = await newBeneficiary(api, '0003', 'in');
    await fund(api, 9000, 'INR');
    const res = await payout(api, ben.id, 9000, 'INR');
    await h.service.runPayouts();
    // Settle at the bank directly (as its delay would): only its webhook tells us.
    const sim = h.service.simulator();
    sim.payouts.settle(res.body.id, 'PAID');
    const settled = await eventually(() => get(api, res.body.id), (p) => p.status === 'paid', 5000);
    expect(settled.status).toBe('paid');
    expect(await balanceOf(api, 'INR')).toEqual({ available: 0, reserved: 0, pending: 0 });
    await expectLedgerClean(h.db, accountId);
  });

  it('0004: the bank does not answer in time; the status check settles it', async () => {
    const { api, accountId } = await tenant(10_000);
    const ben = await newBeneficiary(api, '0004', 'us');
    await fund(api, 5000, 'USD');
    const res = await payout(api, ben.id, 1234, 'USD');
    await h.service.runPayouts();
    const unknown = await get(api, res.body.id);
    expect(unknown).toMatchObject({ status: 'processing', connector: 'simulator_a', connector_reference: null });
    expect(unknown.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'timeout', error_code: 'timeout' })]);
    // Not due yet: nothing is checked.
    expect((await h.service.runPayouts()).checked).toBe(0);
    h.service.clock.advance(h.service.payments.config.statusCheckIntervalMs + 1);
    expect((await h.service.runPayouts()).checked).toBe(1);
    expect(await get(api, res.body.id)).toMatchObject({ status: 'paid', connector: 'simulator_a' });
    expect(await balanceOf(api, 'USD')).toEqual({ available: 5000 - 1234, reserved: 0, pending: 0 });
    const sim = h.service.simulator();
    expect(sim.payouts.requests.get(res.body.id)).toBe(1); // never sent twice
    await expectLedgerClean(h.db, accountId);
  });

  it('0005: the first processor errs; the router falls back to the next, which pays', async () => {
    const { api, accountId } = await tenant(10_000);
    const ben = await newBeneficiary(api, '0005');
    const res = await payout(api, ben.id, 700);
    await h.service.runPayouts();
    const paid = await get(api, res.body.id);
    expect(paid).toMatchObject({ status: 'paid', connector: 'simulator_b' });
    expect(paid.attempts.map((a: { connector: string; outcome: string }) => [a.connector, a.outcome])).toEqual([
      ['simulator_a', 'error'],
      ['simulator_b', 'succeeded'],
    ]);
    await expectLedgerClean(h.db, accountId);
  });

  it('recovers a payout whose submitter died after marking it processing: found at the bank, or sent again', async () => {
    const { api, accountId } = await tenant(10_000);
    const ben = await newBeneficiary(api, '0000');
    const lost = await payout(api, ben.id, 100);
    const sent = await payout(api, ben.id, 200);
    // Phase 1 committed, then the process "died" before (lost) or after (sent) calling the bank.
    await h.query(sql`UPDATE payouts SET status = 'processing' WHERE id IN (${parseId('po', lost.body.id)!}, ${parseId('po', sent.body.id)!})`);
    const sim = h.service.simulator();
    await sim.payouts.create({ merchant_reference: sent.body.id, amount_minor: 200, currency: 'EUR', account: { country: 'DE', number: 'DE0000', bank_code: null, holder_name: 'x' } });
    expect((await h.service.runPayouts()).checked).toBe(2);
    expect(await get(api, lost.body.id)).toMatchObject({ status: 'paid', connector: 'simulator_a' });
    expect(await get(api, sent.body.id)).toMatchObject({ status: 'paid', connector: 'simulator_a' });
    expect(sim.payouts.requests.get(sent.body.id)).toBe(1);
    await expectLedgerClean(h.db, accountId);
  });

  it('submits right after create when PAYOUT_SUBMIT_ON_CREATE is on', async () => {
    const eager = await h.startService({ submitOnCreate: true });
    const api = client(eager.url, h.tenant.testKey);
    await fund(api, 1000);
    const ben = await newBeneficiary(api, '0000');
    const res = await payout(api, ben.id, 1000);
    expect(res.body.status).toBe('pending'); // the answer is the committed state
    const paid = await eventually(() => get(api, res.body.id), (p) => p.status === 'paid', 5000);
    expect(paid.status).toBe('paid');
  });
});

describe('cancel', () => {
  it('cancels a pending payout (the amount returns) and refuses once sending started', async () => {
    const { api, accountId } = await tenant(10_000);
    const ben = await newBeneficiary(api, '0003');
    const a = await payout(api, ben.id, 4000);
    const b = await payout(api, ben.id, 3000);
    const cancelled = await api.post(`/v1/payouts/${a.body.id}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', version: 2 });
    expect(await balanceOf(api)).toEqual({ available: 7000, reserved: 3000, pending: 0 });
    expect(await eventTypesOf(api, a.body.id)).toEqual(['payout.created', 'payout.cancelled']);

    await h.service.runPayouts();
    const late = await api.post(`/v1/payouts/${b.body.id}/cancel`);
    expect(late.status).toBe(422);
    expect(late.body.error).toMatchObject({ type: 'validation', code: 'invalid_state' });
    expect(late.body.error.message).toBe('Cannot cancel a payout whose status is processing; allowed from: pending.');
    expect((await api.post(`/v1/payouts/${a.body.id}/cancel`)).body.error.code).toBe('invalid_state');
    expect((await api.post('/v1/payouts/po_01h455vb4pex5vsknk084sn02q/cancel')).status).toBe(404);
    await expectLedgerClean(h.db, accountId);
  });
});

describe('eligibility', () => {
  it('answers each typed 422 and creates nothing', async () => {
    const { api, accountId, live } = await tenant(5000);
    const ben = await newBeneficiary(api, '0000');
    expect((await payout(api, ben.id, 5001)).body.error).toMatchObject({ type: 'eligibility', code: 'insufficient_balance', param: 'amount' });
    expect((await payout(api, ben.id, 100, 'GBP')).body.error).toMatchObject({ type: 'eligibility', code: 'currency_mismatch', param: 'currency' });
    expect((await payout(api, ben.id, 100, 'USD')).status).toBe(422);

    await setPayoutSettings(h.db, accountId, { maxAmount: 1000 });
    expect((await payout(api, ben.id, 1001)).body.error).toMatchObject({ type: 'eligibility', code: 'amount_above_limit', param: 'amount' });
    expect((await payout(api, ben.id, 1000)).status).toBe(201);
    await setPayoutSettings(h.db, accountId, { maxAmount: null });

    const disabled = await newBeneficiary(api, '0000');
    await api.request('DELETE', `/v1/beneficiaries/${disabled.id}`);
    expect((await payout(api, disabled.id, 100)).body.error).toMatchObject({ type: 'eligibility', code: 'beneficiary_disabled', param: 'beneficiary' });

    const missing = await payout(api, 'ben_01h455vb4pex5vsknk084sn02q', 100);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'resource_missing', param: 'beneficiary' });

    // Live mode: off until onboarding turns payouts on.
    const liveBen = (await live.post('/v1/beneficiaries', { name: 'L', type: 'individual', bank_account: { country: 'DE', currency: 'EUR', iban: 'DE89370400440532013000' } })).body;
    expect((await payout(live, liveBen.id, 100)).body.error).toMatchObject({ type: 'eligibility', code: 'payouts_not_enabled' });
    await setPayoutSettings(h.db, accountId, { liveEnabled: true });
    // Enabled, but no live connector can send payouts yet.
    expect((await payout(live, liveBen.id, 100)).body.error.code).toBe('routing_no_match');

    // Validation before eligibility.
    expect((await api.post('/v1/payouts', { beneficiary: ben.id, amount: 0, currency: 'EUR', reference: 'r' })).body.error).toMatchObject({ code: 'parameter_invalid', param: 'amount' });
    expect((await api.post('/v1/payouts', { beneficiary: ben.id, amount: 10, currency: 'EUR' })).body.error).toMatchObject({ code: 'parameter_missing', param: 'reference' });
    const noKey = await api.post('/v1/payouts', { beneficiary: ben.id, amount: 10, currency: 'EUR', reference: 'r' }, { idempotencyKey: undefined });
    expect(noKey.body.error.code).toBe('idempotency_key_missing');

    const list = await api.get('/v1/payouts?limit=100');
    expect(list.body.data).toHaveLength(1); // only the one that was eligible
    expect(await balanceOf(api)).toEqual({ available: 4000, reserved: 1000, pending: 0 });
    await expectLedgerClean(h.db, accountId);
  });
});

describe('idempotency, retrieval and lists', () => {
  it('replays a create byte-for-byte without reserving twice; another body is refused', async () => {
    const { api, accountId } = await tenant(10_000);
    const ben = await newBeneficiary(api, '0000');
    const body = { beneficiary: ben.id, amount: 3000, currency: 'EUR', reference: 'inv-1' };
    const first = await api.post('/v1/payouts', body, { idempotencyKey: 'po-key-1' });
    const second = await api.post('/v1/payouts', body, { idempotencyKey: 'po-key-1' });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(await balanceOf(api)).toEqual({ available: 7000, reserved: 3000, pending: 0 });
    const other = await api.post('/v1/payouts', { ...body, amount: 3001 }, { idempotencyKey: 'po-key-1' });
    expect(other.body.error.code).toBe('idempotency_key_reused');
    // A refused payout's answer is kept for its key too.
    const poor = await api.post('/v1/payouts', { ...body, amount: 99_999 }, { idempotencyKey: 'po-key-2' });
    const poorAgain = await api.post('/v1/payouts', { ...body, amount: 99_999 }, { idempotencyKey: 'po-key-2' });
    expect(poor.body.error.code).toBe('insufficient_balance');
    expect(poorAgain.text).toBe(poor.text);
    await expectLedgerClean(h.db, accountId);
  });

  it('filters lists by status, beneficiary and reference, newest first', async () => {
    const { api } = await tenant(10_000);
    const one = await newBeneficiary(api, '0000');
    const two = await newBeneficiary(api, '0002');
    const p1 = await payout(api, one.id, 100, 'EUR', { reference: 'alpha' });
    const p2 = await payout(api, two.id, 100);
    const p3 = await payout(api, one.id, 100);
    await api.post(`/v1/payouts/${p3.body.id}/cancel`);
    const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((p) => p.id);
    expect(ids(await api.get('/v1/payouts'))).toEqual([p3.body.id, p2.body.id, p1.body.id]);
    expect(ids(await api.get(`/v1/payouts?beneficiary=${one.id}`))).toEqual([p3.body.id, p1.body.id]);
    expect(ids(await api.get('/v1/payouts?status=cancelled'))).toEqual([p3.body.id]);
    expect(ids(await api.get('/v1/payouts?reference=alpha'))).toEqual([p1.body.id]);
    expect(ids(await api.get(`/v1/payouts?limit=1&starting_after=${p3.body.id}`))).toEqual([p2.body.id]);
    expect((await api.get('/v1/payouts?beneficiary=po_x')).body.error).toMatchObject({ code: 'parameter_invalid', param: 'beneficiary' });
    expect((await api.get('/v1/payouts?status=lost')).body.error).toMatchObject({ code: 'parameter_invalid', param: 'status' });
    expect((await api.get('/v1/payouts/po_01h455vb4pex5vsknk084sn02q')).status).toBe(404);
  });
});

describe('balance and submission', () => {
  it('submits a payout once however many passes and callers race for it', async () => {
    const { api } = await tenant(10_000);
    const ben = await newBeneficiary(api, '0000');
    const res = await payout(api, ben.id, 10);
    const uuid = parseId('po', res.body.id)!;
    const accountUuid = (await h.query(sql`SELECT account_id::text AS a FROM payouts WHERE id = ${uuid}`))[0]!.a as string;
    await Promise.all([h.service.runPayouts(), h.service.runPayouts(), submitPayoutNow(h.db, h.service.payouts, accountUuid, uuid)]);
    const sim = h.service.simulator();
    expect(sim.payouts.requests.get(res.body.id)).toBe(1);
    expect(await eventTypesOf(api, res.body.id)).toEqual(['payout.created', 'payout.processing', 'payout.paid']);
  });
});

describe('refunds against a reserved balance', () => {
  it('refuses a refund the available balance cannot cover (a payout reserved it), and never goes negative', async () => {
    const { api, accountId } = await tenant(0);
    const { payment } = await orderAndPay(api, CARDS.success, { amount: 1999 });
    expect(payment.status).toBe('succeeded');
    const ben = await newBeneficiary(api, '0003'); // stays processing: the amount stays reserved
    expect((await payout(api, ben.id, 1500)).status).toBe(201);
    expect(await balanceOf(api)).toMatchObject({ available: 499, reserved: 1500 });

    const tooMuch = await api.post('/v1/refunds', { payment: payment.id, amount: 500 });
    expect(tooMuch.status, tooMuch.text).toBe(422);
    expect(tooMuch.body.error).toMatchObject({ type: 'eligibility', code: 'insufficient_balance', param: 'amount' });
    const covered = await api.post('/v1/refunds', { payment: payment.id, amount: 499 });
    expect(covered.status, covered.text).toBe(201);
    expect((await balanceOf(api)).available).toBe(0);
    await expectLedgerClean(h.db, accountId);
  });
});
