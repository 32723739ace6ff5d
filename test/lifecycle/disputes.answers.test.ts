// Answering disputes (docs/disputes.md) over the simulated processors: evidence saved, submitted
// (won with `winning_evidence`, lost otherwise), or the dispute accepted; the deadline refused
// under a test clock; the worker's warning three days ahead, once; idempotent replays; a request
// crashed between its phases resumed by its retry, the processor answered once.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { eventually, testClock } from '../support/helpers.js';
import { balanceOf, eventTypesOf, newOrder, pay } from '../support/payments.js';
import { parseId } from '../../src/kernel/ids.js';
import { checkLedger } from '../../src/ledger/check.js';

const DISPUTED = '4000000000000259';
const clock = testClock();
const h = useService({ settings: { simulator: { pendingDelayMs: 200 } }, clock });
const { api } = h;

type Dispute = { id: string; status: string; evidence: Record<string, string>; evidence_due_by: string; evidence_due_soon: boolean; funds_withdrawn: boolean; connector_reference: string };

async function openDispute(amount = 4000): Promise<Dispute> {
  const order = await newOrder(api, { amount, currency: 'EUR' });
  const payment = (await pay(api, order.id, DISPUTED)).body as { id: string };
  const [dispute] = await eventually(
    async () => (await api.get(`/v1/disputes?payment=${payment.id}`)).body.data as Dispute[],
    (list) => list.length === 1 && list[0]!.funds_withdrawn,
  );
  return dispute!;
}

const answersAtProcessor = async (dispute: Dispute) => (await h.service.simulator().disputes.getByObjectId(dispute.connector_reference))!;

describe('answering a dispute', () => {
  it('evidence saved, then submitted with winning_evidence: under review, then won with its funds back', async () => {
    const before = await balanceOf(api);
    const dispute = await openDispute();
    const saved = await api.post(`/v1/disputes/${dispute.id}/evidence`, { evidence: { product_description: 'A blue teapot' } });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toMatchObject({ status: 'needs_response', evidence: { product_description: 'A blue teapot' } });

    const key = `submit-${dispute.id}`;
    const body = { evidence: { uncategorized_text: 'Signed delivery receipt: winning_evidence' }, submit: true };
    const submitted = await api.post(`/v1/disputes/${dispute.id}/evidence`, body, { idempotencyKey: key });
    expect(submitted.status, submitted.text).toBe(200);
    expect(submitted.body).toMatchObject({ status: 'under_review', evidence: { product_description: 'A blue teapot', uncategorized_text: 'Signed delivery receipt: winning_evidence' } });
    // The same request again is replayed, and the processor was answered once.
    const replay = await api.post(`/v1/disputes/${dispute.id}/evidence`, body, { idempotencyKey: key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(submitted.text);
    const reused = await api.post(`/v1/disputes/${dispute.id}/evidence`, { ...body, submit: false }, { idempotencyKey: key });
    expect(reused.body.error.code).toBe('idempotency_key_reused');
    expect(await answersAtProcessor(dispute)).toMatchObject({ answer: 'EVIDENCE', evidence_text: expect.stringContaining('A blue teapot') });
    expect(await h.query(sql`SELECT action, status FROM dispute_responses WHERE dispute_id = ${parseId('dp', dispute.id)!}`)).toEqual([{ action: 'submit', status: 'succeeded' }]);

    const won = await eventually(async () => (await api.get(`/v1/disputes/${dispute.id}`)).body as Dispute, (d) => d.status === 'won');
    expect(won.funds_withdrawn).toBe(false);
    expect(await eventTypesOf(api, dispute.id)).toEqual([
      'dispute.created', 'dispute.funds_withdrawn',
      // Saved; saved again with the submission; under review.
      'dispute.updated', 'dispute.updated', 'dispute.updated',
      'dispute.closed', 'dispute.funds_reinstated',
    ]);
    expect((await balanceOf(api)).available).toBe(before.available + 4000);
    // Decided: no more evidence.
    const late = await api.post(`/v1/disputes/${dispute.id}/evidence`, { evidence: { uncategorized_text: 'more' } });
    expect(late.status).toBe(422);
    expect(late.body.error.code).toBe('dispute_evidence_closed');
    expect(await checkLedger(h.db)).toMatchObject({ ok: true });
  });

  it('evidence without the marker loses: the funds stay out', async () => {
    const dispute = await openDispute(2500);
    const res = await api.post(`/v1/disputes/${dispute.id}/evidence`, { evidence: { refund_refusal_explanation: 'losing_evidence' }, submit: true });
    expect(res.status, res.text).toBe(200);
    const lost = await eventually(async () => (await api.get(`/v1/disputes/${dispute.id}`)).body as Dispute, (d) => d.status === 'lost');
    expect(lost.funds_withdrawn).toBe(true);
  });

  it('accepted: closed at once, the processor told; accepting again or submitting after is refused', async () => {
    const dispute = await openDispute(1200);
    const res = await api.post(`/v1/disputes/${dispute.id}/accept`, undefined);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'accepted', funds_withdrawn: true });
    expect(await answersAtProcessor(dispute)).toMatchObject({ state: 'ACCEPTED', answer: 'ACCEPTANCE' });
    expect((await eventTypesOf(api, dispute.id)).at(-1)).toBe('dispute.closed');
    const again = await api.post(`/v1/disputes/${dispute.id}/accept`, undefined);
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('invalid_state');
    const submit = await api.post(`/v1/disputes/${dispute.id}/evidence`, { evidence: { uncategorized_text: 'x' }, submit: true });
    expect(submit.body.error.code).toBe('dispute_evidence_closed');
    // The processor's own ACCEPTED report, late, changes nothing.
    await new Promise((r) => setTimeout(r, 400));
    expect((await api.get(`/v1/disputes/${dispute.id}`)).body).toMatchObject({ status: 'accepted' });
  });

  it('submitting nothing is a typed 400; an unknown evidence field a validation error', async () => {
    const dispute = await openDispute(900);
    const empty = await api.post(`/v1/disputes/${dispute.id}/evidence`, { submit: true });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ code: 'parameter_missing', param: 'evidence' });
    const unknown = await api.post(`/v1/disputes/${dispute.id}/evidence`, { evidence: { receipt: 'x' } });
    expect(unknown.status).toBe(400);
    expect((await api.get(`/v1/disputes/${dispute.id}`)).body.status).toBe('needs_response');
  });

  it('the worker warns three days before the deadline, once; past the deadline evidence is refused', async () => {
    const dispute = await openDispute(700);
    const due = Date.parse(dispute.evidence_due_by);
    await h.service.runWorker(due - 4 * 86_400_000);
    expect((await api.get(`/v1/disputes/${dispute.id}`)).body.evidence_due_soon).toBe(false);
    await h.service.runWorker(due - 2 * 86_400_000);
    await h.service.runWorker(due - 1 * 86_400_000);
    const warned = (await api.get('/v1/events?type=dispute.updated&limit=100')).body.data.filter((e: { data: { object: Dispute } }) => e.data.object.id === dispute.id);
    expect(warned).toHaveLength(1);
    expect(warned[0].data.object).toMatchObject({ evidence_due_soon: true, status: 'needs_response' });

    clock.advance(due - Date.now() + 1000);
    try {
      const late = await api.post(`/v1/disputes/${dispute.id}/evidence`, { evidence: { uncategorized_text: 'too late' }, submit: true });
      expect(late.status).toBe(422);
      expect(late.body.error.code).toBe('dispute_evidence_closed');
    } finally {
      clock.reset();
    }
    expect((await api.get(`/v1/disputes/${dispute.id}`)).body).toMatchObject({ status: 'needs_response', evidence: {} });
  });

  for (const point of ['dispute_response_created', 'dispute_response_connector_answered'] as const) {
    it(`a submission crashed at ${point} resumes on retry, the processor answered once`, async () => {
      const dispute = await openDispute(600);
      const body = { evidence: { uncategorized_text: 'winning_evidence' }, submit: true };
      const idempotencyKey = `crash-${point}-${dispute.id}`;
      const crashed = await h.service.crashingAt(point, () => api.post(`/v1/disputes/${dispute.id}/evidence`, body, { idempotencyKey }));
      expect(crashed.status).toBe(500);
      const retried = await api.post(`/v1/disputes/${dispute.id}/evidence`, body, { idempotencyKey });
      expect(retried.status, retried.text).toBe(200);
      expect(retried.body.status).toBe('under_review');
      expect(await h.query(sql`SELECT status FROM dispute_responses WHERE dispute_id = ${parseId('dp', dispute.id)!}`)).toEqual([{ status: 'succeeded' }]);
      expect(await answersAtProcessor(dispute)).toMatchObject({ answer: 'EVIDENCE', answered_by: expect.stringMatching(/^dpr_/) });
    });
  }
});
