// A simulated processor's charges and refunds. The test card picks the outcome (cards.ts); a
// direct debit (a charge naming a mandate) is pending until the bank settles it. Charges and
// refunds are idempotent by the merchant's reference (our payment or refund id), so a repeated call
// returns the charge already made instead of charging again.
import crypto from 'node:crypto';
import { TEST_CARD_COUNTRY, testCard } from './cards.js';
import type { SimChallengeAnswer, SimCharge, SimChargeRequest, SimMandate, SimRefund, SimRefundRequest } from './protocol.js';
import { countRequest, ProcessorObjects, type Desk, type Made, type ProcessorContext } from './objects.js';
import { movesMoney, simError, type SimResponse } from './wire.js';
import { voidCharge } from './captures.js';

function isChargeRequest(body: unknown): body is SimChargeRequest {
  const b = body as SimChargeRequest;
  // A verification authorises the card for nothing: a zero amount, and a card.
  const verifies = b?.verification === true && b.amount_minor === 0 && b.mandate_id === undefined && movesMoney({ ...b, amount_minor: 1 });
  return (
    (movesMoney(body) || verifies) &&
    // A direct debit names its mandate instead of a card.
    ((typeof b.mandate_id === 'string' && b.card === undefined) ||
      (typeof b.card?.pan === 'string' &&
        Number.isInteger(b.card.expiry_month) &&
        Number.isInteger(b.card.expiry_year) &&
        typeof b.card.security_code === 'string'))
  );
}

function isRefundRequest(body: unknown): body is SimRefundRequest {
  const b = body as SimRefundRequest | undefined;
  return typeof b?.merchant_reference === 'string' && typeof b.charge_reference === 'string' && Number.isSafeInteger(b.amount_minor) && b.amount_minor > 0;
}

/** A decline card's reason, in this processor's words. */
const REFUSAL_OF_DECLINE = { card_declined: 'DO_NOT_HONOUR', insufficient_funds: 'NOT_ENOUGH_BALANCE', stolen_card: 'STOLEN_CARD' } as const;

const SETTLED_CHARGE_STATES = ['CAPTURED', 'REFUSED'] as const;

export class ChargeDesk extends ProcessorObjects<SimCharge> implements Desk {
  /** Charge requests received per merchant reference, replays included (tests count them). */
  readonly requests = new Map<string, number>();

  constructor(
    p: ProcessorContext,
    /** The processor's mandates, by its own id (a debit names one). */
    private readonly mandateById: (mandateId: string) => Promise<SimMandate | undefined>,
    /** Opens the cardholder's dispute of a captured charge of the disputed test card (disputes.ts). */
    private readonly dispute: (charge: SimCharge) => Promise<void>,
  ) {
    super(p, {
      kind: 'charge',
      objectId: (charge) => charge.charge_id,
      settle(charge, to) {
        if (charge.state !== 'PENDING' && charge.state !== 'AWAITING_AUTHENTICATION') return false;
        const challenged = charge.state === 'AWAITING_AUTHENTICATION';
        // A manual charge that succeeds is authorised, held for its captures.
        charge.state = (to === 'CAPTURED' && charge.capture === 'MANUAL' ? 'AUTHORISED' : to) as SimCharge['state'];
        charge.refusal = to === 'REFUSED' ? (charge.mandate_id ? 'DEBIT_RETURNED' : challenged ? 'AUTHENTICATION_FAILED' : 'DO_NOT_HONOUR') : null;
        return true;
      },
    });
  }

  async create(body: unknown): Promise<SimResponse> {
    if (!isChargeRequest(body)) return simError(400, 'BAD_REQUEST', 'merchant_reference, amount_minor, currency and card are required');
    countRequest(this.requests, body.merchant_reference);
    const same = (held: SimCharge) => held.amount_minor === body.amount_minor && held.currency === body.currency;
    const answer = await this.createOnce(body.merchant_reference, same, async () => (body.mandate_id === undefined ? this.card(body) : this.debit(body, body.mandate_id)));
    const charge = answer.body as SimCharge | undefined;
    if (charge?.state === 'CAPTURED' && body.card && testCard(body.card.pan)?.disputed) await this.dispute(charge);
    return answer;
  }

  private newCharge(body: SimChargeRequest): SimCharge {
    return {
      charge_id: this.p.nextId('ch'),
      merchant_reference: body.merchant_reference,
      amount_minor: body.amount_minor,
      currency: body.currency,
      state: 'CAPTURED',
      refusal: null,
      refunded_minor: 0,
      created_at: this.p.now().toISOString(),
      ...(body.capture === 'MANUAL' ? { capture: 'MANUAL' as const, captured_minor: 0 } : {}),
    };
  }

  private card(body: SimChargeRequest): Made<SimCharge> | SimResponse {
    const card = testCard(body.card!.pan);
    if (card && this.p.profile.errorsOn.includes(card.scenario)) {
      return simError(500, 'INTERNAL_ERROR', 'the processor could not process the request; nothing was charged');
    }
    const now = this.p.now();
    const expired = body.card!.expiry_year * 12 + body.card!.expiry_month < now.getUTCFullYear() * 12 + now.getUTCMonth() + 1;
    // As a card scheme does for every card payment (and verification): the id a later merchant-initiated payment cites.
    const fresh = this.newCharge(body);
    // Derived from the charge's own id, so a seeded run replays it.
    const made = { ...fresh, network_transaction_id: `simntid_${fresh.charge_id}`, ...(card ? { issuer_country: TEST_CARD_COUNTRY } : {}) };
    const manual = made.capture === 'MANUAL';
    // Every success card authorises under manual capture; one has its captures declined, one has them pending.
    const flags = { ...(card?.captureDeclined ? { capture_declines: true } : {}), ...(card?.capturePending ? { capture_pending: true } : {}) };
    const charge: SimCharge = manual ? { ...made, state: 'AUTHORISED', ...flags } : made;
    const refuse = (refusal: SimCharge['refusal']) => ({ object: { ...charge, state: 'REFUSED' as const, refusal } });
    if (!card) return refuse('UNKNOWN_CARD');
    if (expired) return refuse('EXPIRED_CARD');
    if (card.scenario === 'decline' && (card.declinedOnlyBy === undefined || card.declinedOnlyBy === this.p.profile.name)) return refuse(REFUSAL_OF_DECLINE[card.decline ?? 'card_declined']);
    if (card.scenario === 'pending') return { object: { ...charge, state: 'PENDING' }, settlesTo: manual ? 'AUTHORISED' : 'CAPTURED' };
    // 3-D Secure: the cardholder decides on the challenge page; nothing settles on its own.
    if (card.scenario === 'challenge') {
      if (!body.return_url) return refuse('AUTHENTICATION_REQUIRED');
      if (card.softDecline && body.three_d_secure !== 'REQUESTED') return refuse('AUTHENTICATION_NOT_REQUESTED');
      return { object: { ...charge, state: 'AWAITING_AUTHENTICATION', return_url: body.return_url, challenge_id: crypto.randomBytes(16).toString('hex') } };
    }
    // The timeout card: charged, but the answer never comes; the merchant learns it by asking or by webhook.
    return { object: charge, hang: card.scenario === 'timeout' };
  }

  /** A debit against a mandate: pending until the bank settles it, refused unless the mandate is active. */
  private async debit(body: SimChargeRequest, mandateId: string): Promise<Made<SimCharge>> {
    const mandate = await this.mandateById(mandateId);
    const charge = { ...this.newCharge(body), mandate_id: mandateId };
    if (!mandate || mandate.state !== 'ACTIVE' || mandate.currency !== body.currency) {
      return { object: { ...charge, state: 'REFUSED', refusal: 'MANDATE_NOT_ACTIVE' } };
    }
    return { object: { ...charge, state: 'PENDING' }, settlesTo: 'CAPTURED' };
  }

  act(action: string, reference: string, body: unknown) {
    if (action === 'challenge') return this.answerChallenge(reference, body);
    if (action === 'void') return voidCharge(this, reference);
    return action === 'resolve' ? this.resolveControl(SETTLED_CHARGE_STATES, reference, body) : undefined;
  }

  /** The cardholder's answer on the challenge page; only the holder of the challenge's id can give it. */
  private async answerChallenge(reference: string, body: unknown): Promise<SimResponse> {
    const answer = body as Partial<SimChallengeAnswer> | undefined;
    const held = await this.get(reference);
    const given = Buffer.from(typeof answer?.challenge_id === 'string' ? answer.challenge_id : '');
    const expected = Buffer.from(held?.challenge_id ?? '');
    if (!held?.challenge_id || given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
      return simError(404, 'NOT_FOUND', 'no challenge with this id');
    }
    if (answer!.outcome !== 'COMPLETED' && answer!.outcome !== 'FAILED') return simError(400, 'BAD_REQUEST', 'outcome must be COMPLETED or FAILED');
    // Answered once: a second answer (a reload, the other button) finds the charge settled and changes nothing.
    return this.settle(reference, answer!.outcome === 'COMPLETED' ? 'CAPTURED' : 'REFUSED');
  }
}

export class RefundDesk extends ProcessorObjects<SimRefund> implements Desk {
  constructor(p: ProcessorContext) {
    super(p, { kind: 'refund', objectId: (refund) => refund.refund_id, settle: () => false });
  }

  /** Refunds are answered at once; the charge is locked meanwhile, so concurrent refunds never exceed it. */
  async create(body: unknown): Promise<SimResponse> {
    if (!isRefundRequest(body)) return simError(400, 'BAD_REQUEST', 'merchant_reference, charge_reference and amount_minor are required');
    const charge = { processor: this.p.name, kind: 'charge' as const, reference: body.charge_reference };
    return this.p.store.transaction(async (books) => {
      const entry = await books.get<SimCharge>(charge, { lock: true });
      // Looked for under the charge's lock, so that a concurrent replay finds the refund it made.
      const held = await books.get<SimRefund>({ processor: this.p.name, kind: 'refund', reference: body.merchant_reference });
      if (held) return { status: 200, body: held.body };
      if (!entry) return simError(404, 'NOT_FOUND', 'no charge with this charge_reference');
      const refund: SimRefund = {
        refund_id: this.p.nextId('re'),
        merchant_reference: body.merchant_reference,
        charge_id: entry.body.charge_id,
        amount_minor: body.amount_minor,
        state: 'REFUNDED',
        refusal: null,
        created_at: this.p.now().toISOString(),
      };
      // Only captured money can be refunded: a manual charge's captures so far, an automatic one's amount.
      const captured = entry.body.captured_minor ?? (entry.body.state === 'CAPTURED' ? entry.body.amount_minor : 0);
      if (captured === 0) Object.assign(refund, { state: 'REFUND_REFUSED', refusal: 'CHARGE_NOT_CAPTURED' });
      else if (entry.body.refunded_minor + body.amount_minor > captured) Object.assign(refund, { state: 'REFUND_REFUSED', refusal: 'AMOUNT_EXCEEDS_CHARGE' });
      else await books.update({ ...entry, body: { ...entry.body, refunded_minor: entry.body.refunded_minor + body.amount_minor } });
      await books.insert({ processor: this.p.name, kind: 'refund', reference: refund.merchant_reference, objectId: refund.refund_id, body: refund, dueAt: null, dueState: null });
      return { status: 201, body: refund };
    });
  }
}
