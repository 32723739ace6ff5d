// A simulated processor's captures of manual charges, and voids. A charge made with `capture:
// 'MANUAL'` is AUTHORISED: captures take from it (several, until one is final), a void releases it
// while nothing was captured. Captures are idempotent by the merchant's reference (our capture id)
// and answered at once — but for the card whose captures the processor confirms later: those are
// CAPTURE_PENDING, their amount held against the authorisation, until the control endpoint settles
// them and the processor reports it by webhook. The charge is locked meanwhile, so concurrent
// captures never take more than the authorisation holds.
import type { SimCapture, SimCaptureRefusal, SimCaptureRequest, SimCharge } from './protocol.js';
import { ProcessorObjects, type Desk, type ProcessorContext } from './objects.js';
import { movesMoney, simError, type SimResponse } from './wire.js';

function isCaptureRequest(body: unknown): body is SimCaptureRequest {
  const b = body as SimCaptureRequest | undefined;
  return movesMoney(body) && typeof b?.charge_reference === 'string' && typeof b.final === 'boolean';
}

/** Why `charge` cannot give `amount` to a capture, or null when it can. */
function refusalOf(charge: SimCharge, amount: number): SimCaptureRefusal | null {
  if (charge.state === 'VOIDED') return 'AUTHORISATION_VOIDED';
  if (charge.state !== 'AUTHORISED') return 'NOT_AUTHORISED';
  if ((charge.captured_minor ?? 0) + amount > charge.amount_minor) return 'AMOUNT_EXCEEDS_AUTHORISATION';
  return charge.capture_declines ? 'CAPTURE_DECLINED' : null;
}

export class CaptureDesk extends ProcessorObjects<SimCapture> implements Desk {
  /** Capture requests received per merchant reference, replays included (tests count them). */
  readonly requests = new Map<string, number>();

  constructor(p: ProcessorContext) {
    super(p, { kind: 'capture', objectId: (capture) => capture.capture_id, settle: () => false });
  }

  async create(body: unknown): Promise<SimResponse> {
    if (!isCaptureRequest(body)) return simError(400, 'BAD_REQUEST', 'merchant_reference, charge_reference, amount_minor, currency and final are required');
    this.requests.set(body.merchant_reference, (this.requests.get(body.merchant_reference) ?? 0) + 1);
    const charge = { processor: this.p.name, kind: 'charge' as const, reference: body.charge_reference };
    return this.p.store.transaction(async (books) => {
      const entry = await books.get<SimCharge>(charge, { lock: true });
      // Looked for under the charge's lock, so that a concurrent replay finds the capture it made.
      const held = await books.get<SimCapture>({ processor: this.p.name, kind: 'capture', reference: body.merchant_reference });
      if (held) {
        const same = held.body.amount_minor === body.amount_minor && held.body.charge_id === entry?.body.charge_id;
        return same ? { status: 200, body: held.body } : simError(409, 'IDEMPOTENCY_CONFLICT', 'this merchant_reference was used for another capture');
      }
      if (!entry) return simError(404, 'NOT_FOUND', 'no charge with this charge_reference');
      const refusal = refusalOf(entry.body, body.amount_minor);
      const capture: SimCapture = {
        capture_id: this.p.nextId('cp'),
        merchant_reference: body.merchant_reference,
        charge_id: entry.body.charge_id,
        amount_minor: body.amount_minor,
        currency: body.currency,
        final: body.final,
        state: refusal ? 'CAPTURE_REFUSED' : entry.body.capture_pending ? 'CAPTURE_PENDING' : 'CAPTURED',
        refusal,
        created_at: this.p.now().toISOString(),
      };
      if (!refusal) {
        const captured = (entry.body.captured_minor ?? 0) + body.amount_minor;
        // A pending capture holds its amount; the charge is captured once it is confirmed.
        const done = body.final && capture.state === 'CAPTURED';
        await books.update({ ...entry, body: { ...entry.body, captured_minor: captured, state: done ? 'CAPTURED' : 'AUTHORISED' } });
      }
      await books.insert({ processor: this.p.name, kind: 'capture', reference: capture.merchant_reference, objectId: capture.capture_id, body: capture, dueAt: null, dueState: null });
      return { status: 201, body: capture };
    });
  }

  act(action: string, reference: string, body: unknown) {
    return action === 'resolve' ? this.resolve(reference, (body as { state?: unknown } | undefined)?.state) : undefined;
  }

  /**
   * POST /captures/{reference}/resolve {state}: the control endpoint confirms a pending capture
   * (CAPTURED) or refuses it (CAPTURE_REFUSED, its amount back to the authorisation), reported by
   * webhook. A settled capture is answered as it stands.
   */
  private async resolve(reference: string, state: unknown): Promise<SimResponse> {
    if (state !== 'CAPTURED' && state !== 'CAPTURE_REFUSED') return simError(400, 'BAD_REQUEST', 'state must be CAPTURED or CAPTURE_REFUSED');
    const key = { processor: this.p.name, kind: 'capture' as const, reference };
    const answer = await this.p.store.transaction(async (books) => {
      const seen = await books.get<SimCapture>(key);
      if (!seen) return simError(404, 'NOT_FOUND', 'no capture with this merchant_reference');
      // The charge first, as create locks it, then the capture.
      const held = await books.getByObjectId<SimCharge>(this.p.name, 'charge', seen.body.charge_id ?? '');
      const charge = held && (await books.get<SimCharge>(held, { lock: true }));
      const entry = (await books.get<SimCapture>(key, { lock: true }))!;
      const capture = entry.body;
      if (capture.state !== 'CAPTURE_PENDING' || !charge) return { status: 200, body: capture };
      Object.assign(capture, { state, refusal: state === 'CAPTURED' ? null : 'CAPTURE_DECLINED' });
      const captured = (charge.body.captured_minor ?? 0) - (state === 'CAPTURED' ? 0 : capture.amount_minor);
      const done = capture.final && state === 'CAPTURED';
      await books.update({ ...charge, body: { ...charge.body, captured_minor: captured, state: done ? 'CAPTURED' : charge.body.state } });
      await books.update(entry);
      await this.report(books, capture);
      return { status: 200, body: capture };
    });
    this.p.wake();
    return answer;
  }
}

/**
 * POST /{processor}/charges/{reference}/void: releases an authorisation nothing was captured from.
 * Answers the charge as it then stands (VOIDED, or unchanged when it could not be voided); a
 * repeated void finds it VOIDED already. Not reported by webhook: the merchant has the answer.
 */
export function voidCharge(charges: ProcessorObjects<SimCharge>, reference: string): Promise<SimResponse> {
  return charges.change(
    reference,
    (charge) => {
      const voidable = (charge.state === 'AUTHORISED' && !charge.captured_minor) || charge.state === 'AWAITING_AUTHENTICATION';
      if (voidable) charge.state = 'VOIDED';
      return voidable;
    },
    true,
  );
}
