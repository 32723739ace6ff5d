// A simulated processor's disputes: the test card 4000000000000259 (cards.ts) is charged, then
// its cardholder disputes it. The dispute is held under the charge's merchant reference (one per
// charge), opened on the processor's own after the pending delay, when the funds are withdrawn at
// once and the merchant has seven days to answer. Every change is reported by webhook.
import type { SimCharge, SimDispute } from './protocol.js';
import { ProcessorObjects, type Desk, type ProcessorContext } from './objects.js';
import { simError, type SimResponse } from './wire.js';

const ANSWER_WINDOW_MS = 7 * 24 * 3600 * 1000;

export class DisputeDesk extends ProcessorObjects<SimDispute> implements Desk {
  constructor(p: ProcessorContext) {
    super(p, {
      kind: 'dispute',
      objectId: (dispute) => dispute.dispute_id,
      settle(dispute, to) {
        // The issuer's chargeback arrives: the processor takes the money back from the merchant.
        if (dispute.state !== 'OPENING' || to !== 'NEEDS_RESPONSE') return false;
        dispute.state = 'NEEDS_RESPONSE';
        dispute.funds_withdrawn = true;
        return true;
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
      },
      settlesTo: 'NEEDS_RESPONSE',
    }));
  }

  /** Disputes are opened by cardholders, never by the merchant. */
  create(): Promise<SimResponse> {
    return Promise.resolve(simError(400, 'BAD_REQUEST', 'disputes are opened by cardholders, not by merchants'));
  }
}
