// Disputes (docs/disputes.md) over the simulated processors: card 4000000000000259 succeeds, then
// within the simulator's delay its cardholder disputes it and the processor withdraws the funds
// at once — one dp_, its amount and the dispute fee out of the balance, refunds refused. Any order
// and any repetition of a dispute's webhooks makes one dp_ and the same bookings.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { eventually } from '../support/helpers.js';
import { balanceOf, eventTypesOf, newOrder, pay, sendProcessorEvent } from '../support/payments.js';
import { setDisputeFee } from '../../src/domain/terms/service.js';
import { parseId } from '../../src/kernel/ids.js';
import { checkLedger } from '../../src/ledger/check.js';
import { baseEnv, runCliHere, tempDir } from '../support/cli.js';

const DISPUTED = '4000000000000259';
const h = useService({ settings: { simulator: { pendingDelayMs: 200 } } });
const { api } = h;

async function disputedPayment(amount: number) {
  const order = await newOrder(api, { amount, currency: 'EUR' });
  const res = await pay(api, order.id, DISPUTED);
  expect(res.status, res.text).toBe(201);
  expect(res.body.status).toBe('succeeded');
  return res.body as { id: string; connector: string; connector_reference: string };
}

const disputesOf = async (payment: string) => (await api.get(`/v1/disputes?payment=${payment}`)).body.data as Record<string, unknown>[];

describe('disputes from the simulated processors', () => {
  it('card 0259: disputed (fraudulent) within seconds, its funds and the dispute fee withdrawn; refunds refused', async () => {
    await setDisputeFee(h.db, parseId('acct', h.tenant.accountId)!, { fee: 1500 });
    const before = await balanceOf(api);
    const payment = await disputedPayment(5000);
    const [dispute] = await eventually(() => disputesOf(payment.id), (list) => list.length === 1 && list[0]!.funds_withdrawn === true);
    expect(dispute).toMatchObject({
      object: 'dispute',
      payment: payment.id,
      amount: 5000,
      currency: 'EUR',
      reason: 'fraudulent',
      status: 'needs_response',
      funds_withdrawn: true,
      fee: 1500,
      connector: payment.connector,
      evidence: {},
      evidence_due_soon: false,
    });
    expect(Date.parse(dispute!.evidence_due_by as string)).toBeGreaterThan(Date.now());
    expect((await api.get(`/v1/disputes/${dispute!.id}`)).body).toEqual(dispute);
    expect(await eventTypesOf(api, dispute!.id as string)).toEqual(['dispute.created', 'dispute.funds_withdrawn']);
    // Paid 5000, then lost 5000 and the 1500 fee: available is 1500 below where it started.
    expect((await balanceOf(api)).available).toBe(before.available - 1500);

    const refund = await api.post('/v1/refunds', { payment: payment.id }, { idempotencyKey: `ref-${payment.id}` });
    expect(refund.status, refund.text).toBe(422);
    expect(refund.body.error.code).toBe('charge_disputed');
    expect((await api.get(`/v1/disputes?status=needs_response`)).body.data.map((d: { id: string }) => d.id)).toContain(dispute!.id);
    expect((await api.get(`/v1/disputes?status=won`)).body.data.map((d: { id: string }) => d.id)).not.toContain(dispute!.id);
    expect(await checkLedger(h.db)).toMatchObject({ ok: true });
  });

  it('one dp_ however often and in whatever order its webhooks come, with the same bookings', async () => {
    await setDisputeFee(h.db, parseId('acct', h.tenant.accountId)!, { fee: 0 });
    const webhook = (payment: { id: string; connector_reference: string }, disputeId: string, state: string, funds: [boolean, boolean]) =>
      JSON.stringify({
        event_id: `evt_${crypto.randomUUID()}`,
        event_type: 'dispute.state_changed',
        occurred_at: new Date().toISOString(),
        dispute: {
          dispute_id: disputeId,
          merchant_reference: payment.id,
          charge_id: payment.connector_reference,
          amount_minor: 3000,
          currency: 'EUR',
          state,
          reason: 'NOT_RECEIVED',
          funds_withdrawn: funds[0],
          funds_reinstated: funds[1],
          evidence_due_at: new Date(Date.now() + 7 * 86_400_000).toISOString(),
          created_at: new Date().toISOString(),
        },
      });
    const opened = (p: { id: string; connector_reference: string }, id: string) => webhook(p, id, 'NEEDS_RESPONSE', [true, false]);
    const won = (p: { id: string; connector_reference: string }, id: string) => webhook(p, id, 'WON', [true, true]);

    for (const order of ['in order', 'won first'] as const) {
      const made = await newOrder(api, { amount: 3000, currency: 'EUR' });
      const payment = (await pay(api, made.id)).body;
      const before = await balanceOf(api);
      const id = `sim_dp_${crypto.randomUUID()}`;
      const bodies = order === 'in order' ? [opened(payment, id), won(payment, id)] : [won(payment, id), opened(payment, id)];
      const first = await sendProcessorEvent(h.url, payment.connector, bodies[0]!);
      expect(first.status, first.text).toBe(200);
      // The same event again is a duplicate; the same state under a new event id changes nothing.
      expect((await sendProcessorEvent(h.url, payment.connector, bodies[0]!)).body).toMatchObject({ duplicate: true });
      await Promise.all([sendProcessorEvent(h.url, payment.connector, bodies[1]!), sendProcessorEvent(h.url, payment.connector, order === 'in order' ? won(payment, id) : opened(payment, id))]);

      const list = await disputesOf(payment.id);
      expect(list, order).toHaveLength(1);
      expect(list[0], order).toMatchObject({ status: 'won', reason: 'product_not_received', processor_reason: 'NOT_RECEIVED', funds_withdrawn: false, connector_reference: id });
      expect((await balanceOf(api)).available, order).toBe(before.available);
      const refund = await api.post('/v1/refunds', { payment: payment.id, amount: 100 }, { idempotencyKey: `ref-won-${payment.id}` });
      expect(refund.status, refund.text).toBe(201);
    }
    const entries = await h.query(sql`SELECT type, count(*)::int AS n FROM journal_entries WHERE source_type = 'dispute' GROUP BY type ORDER BY type`);
    // In order: withdrawn, then reinstated; won first: nothing ever left the balance.
    expect(entries.filter((e) => e.type === 'dispute_reinstatement')).toEqual([{ type: 'dispute_reinstatement', n: 1 }]);
    expect(await checkLedger(h.db)).toMatchObject({ ok: true });
  });

  it('a dispute of a payment we do not know is acknowledged, not applied, and kept for the operator once', async () => {
    const eventId = `evt_${crypto.randomUUID()}`;
    const body = JSON.stringify({
      event_id: eventId,
      event_type: 'dispute.state_changed',
      occurred_at: new Date().toISOString(),
      dispute: {
        dispute_id: 'sim_dp_unknown', merchant_reference: 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa', charge_id: 'ch_nobody', amount_minor: 100, currency: 'EUR',
        state: 'NEEDS_RESPONSE', reason: 'FRAUD', funds_withdrawn: true, funds_reinstated: false, evidence_due_at: new Date().toISOString(), created_at: new Date().toISOString(),
      },
    });
    const res = await sendProcessorEvent(h.url, 'simulator_a', body);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ received: true, applied: false, duplicate: false });
    expect((await sendProcessorEvent(h.url, 'simulator_a', body)).body).toMatchObject({ applied: false, duplicate: true });
    const listed = await runCliHere(['disputes', 'unmatched', '--limit', '50'], baseEnv(h.databaseUrl ? { DATABASE_URL: h.databaseUrl } : { DATA_DIR: tempDir() }));
    if (h.databaseUrl) {
      expect(listed.code, listed.stderr).toBe(0);
      const mine = listed.json.data.filter((r: { event_id: string }) => r.event_id === eventId);
      expect(mine).toEqual([
        expect.objectContaining({ connector: 'simulator_a', dispute_reference: 'sim_dp_unknown', payment_reference: 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa', amount: 100, currency: 'EUR', status: 'needs_response' }),
      ]);
    }
    expect(await h.query(sql`SELECT count(*)::int AS n FROM unmatched_dispute_reports WHERE event_id = ${eventId}`)).toEqual([{ n: 1 }]);
  });
});
