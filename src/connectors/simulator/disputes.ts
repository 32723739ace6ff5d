// A simulated processor's disputes: the test card 4000000000000259 (cards.ts) is charged, then
// its cardholder disputes it. The dispute is held under the charge's merchant reference (one per
// charge), opened on the processor's own after the pending delay, when the funds are withdrawn at
// once and the merchant has seven days to answer. The merchant answers once (POST
// /disputes/{dispute_id}/submit or /accept, idempotent by its merchant_reference): accepted at
// once; evidence puts it UNDER_REVIEW, and the issuer decides after the pending delay — won (the
// funds reinstated) when the evidence contains `winning_evidence`, lost otherwise (as Stripe's
// test mode decides; docs/test-mode.md). Every change is reported by webhook.
import type { SimCharge, SimDispute, SimDisputeAnswerRequest } from './protocol.js';
import { ProcessorObjects, type Desk, type ProcessorContext } from './objects.js';
import { simError, type SimResponse } from './wire.js';

const ANSWER_WINDOW_MS = 7 * 24 * 3600 * 1000;
/** The marker that wins a simulated dispute (Stripe's test mode uses the same words). */
export const WINNING_EVIDENCE = 'winning_evidence';

function isAnswer(body: unknown): body is SimDisputeAnswerRequest {
  const b = body as SimDisputeAnswerRequest | undefined;
  return typeof b?.merchant_reference === 'string' && (b.evidence === undefined || (typeof b.evidence === 'object' && Object.values(b.evidence).every((v) => typeof v === 'string')));
}

export class DisputeDesk extends ProcessorObjects<SimDispute> implements Desk {
  constructor(p: ProcessorContext) {
    super(p, {
      kind: 'dispute',
      objectId: (dispute) => dispute.dispute_id,
      settle(dispute, to) {
        // The issuer's chargeback arrives: the processor takes the money back from the merchant.
        if (dispute.state === 'OPENING' && to === 'NEEDS_RESPONSE') {
          dispute.state = 'NEEDS_RESPONSE';
          dispute.funds_withdrawn = true;
          dispute.funds_withdrawn_at = p.now().toISOString();
          return true;
        }
        // The issuer decides on the evidence: a won dispute gives the funds back.
        if (dispute.state === 'UNDER_REVIEW' && (to === 'WON' || to === 'LOST')) {
          dispute.state = to;
          dispute.funds_reinstated = to === 'WON';
          if (to === 'WON') dispute.funds_reinstated_at = p.now().toISOString();
          return true;
        }
        return false;
      },
    });
  }

  /** Opens the dispute of a disputed card's charge, once (a replayed charge finds it held). */
  async open(charge: SimCharge): Promise<void> {
    const now = this.p.now();
    await this.createOnce(charge.merchant_reference, () => true, async () => ({
      object: {
        dispute_id: this.p.nextId('dp'),
        merchant_reference: charge.merchant_reference,
        charge_id: charge.charge_id,
        amount_minor: charge.amount_minor,
        currency: charge.currency,
        state: 'OPENING',
        reason: 'FRAUD',
        funds_withdrawn: false,
        funds_reinstated: false,
        evidence_due_at: new Date(now.getTime() + this.p.pendingDelayMs + ANSWER_WINDOW_MS).toISOString(),
        created_at: now.toISOString(),
        answered_by: null,
        answer: null,
        evidence_text: null,
      },
      settlesTo: 'NEEDS_RESPONSE',
    }));
  }

  /** Disputes are opened by cardholders, never by the merchant. */
  create(): Promise<SimResponse> {
    return Promise.resolve(simError(400, 'BAD_REQUEST', 'disputes are opened by cardholders, not by merchants'));
  }

  /** GET /disputes/{reference}: by the charge's merchant reference, or by the dispute's own id. */
  override async read(reference: string): Promise<SimResponse> {
    const held = (await this.get(reference)) ?? (await this.getByObjectId(reference));
    return held ? { status: 200, body: held } : simError(404, 'NOT_FOUND', 'no dispute with this reference');
  }

  act(action: string, disputeId: string, body: unknown): Promise<SimResponse> | undefined {
    if (action !== 'submit' && action !== 'accept') return undefined;
    if (!isAnswer(body)) return Promise.resolve(simError(400, 'BAD_REQUEST', 'merchant_reference is required; evidence, if given, maps fields to text'));
    return this.answer(disputeId, action, body);
  }

  /**
   * Takes the merchant's one answer while the dispute needs one; answers the dispute as it then
   * stands (a replay finds its own answer; a refusal, the dispute without it).
   */
  private async answer(disputeId: string, action: 'submit' | 'accept', body: SimDisputeAnswerRequest): Promise<SimResponse> {
    const held = await this.getByObjectId(disputeId);
    if (!held) return simError(404, 'NOT_FOUND', 'no dispute with this dispute_id');
    const key = { processor: this.p.name, kind: 'dispute' as const, reference: held.merchant_reference };
    const due = new Date(this.p.now().getTime() + this.p.pendingDelayMs);
    const answer = await this.p.store.transaction(async (books) => {
      const entry = (await books.get<SimDispute>(key, { lock: true }))!;
      const dispute = entry.body;
      if (dispute.answered_by || dispute.state !== 'NEEDS_RESPONSE') return { status: 200, body: dispute };
      const text = Object.values(body.evidence ?? {}).join('\n');
      const answered = { ...dispute, answered_by: body.merchant_reference, answer: action === 'submit' ? 'EVIDENCE' : 'ACCEPTANCE', evidence_text: action === 'submit' ? text : null } as SimDispute;
      if (action === 'accept') {
        await books.update({ ...entry, body: { ...answered, state: 'ACCEPTED' }, dueAt: null, dueState: null });
        await this.report(books, { ...answered, state: 'ACCEPTED' });
        return { status: 200, body: { ...answered, state: 'ACCEPTED' } };
      }
      const review = { ...answered, state: 'UNDER_REVIEW' } as SimDispute;
      await books.update({ ...entry, body: review, dueAt: due, dueState: text.includes(WINNING_EVIDENCE) ? 'WON' : 'LOST' });
      await this.report(books, review);
      return { status: 200, body: review };
    });
    this.p.wake();
    this.p.wake(due);
    return answer;
  }
}
