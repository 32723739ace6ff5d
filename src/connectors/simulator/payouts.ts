// The simulated processors' payout side: credit transfers to a beneficiary's (simulated) bank. As
// with cards, the data picks the scenario (API.md §6): the last four digits of the account number
// (of an IBAN: of its account part, which ends the IBAN) say whether the bank pays at once, refuses
// (account closed), answers later (settled after the configured delay or through the control
// endpoint), never answers in time (paid, reported only by webhook and status), or whether the
// first processor fails with an internal error. Payouts are idempotent by our payout id.
import type { TestCardScenario } from './cards.js';
import type { SimError, SimErrorCode, SimPayout, SimPayoutRequest, SimPayoutState } from './protocol.js';
import type { SimResponse, SimulatedProcessor, SimulatorHost } from './processor.js';

const PAYOUT_ENDINGS: Readonly<Record<string, TestCardScenario>> = {
  '0000': 'success',
  '0002': 'decline',
  '0003': 'pending',
  '0004': 'timeout',
  '0005': 'processor_error',
};

/** Any other ending pays, as 0000 does. */
export function payoutScenario(accountNumber: string): TestCardScenario {
  return PAYOUT_ENDINGS[accountNumber.replace(/[^0-9]/g, '').slice(-4)] ?? 'success';
}

function error(status: number, code: SimErrorCode, detail: string): SimResponse {
  const body: SimError = { error: { code, detail } };
  return { status, body };
}

function isPayoutRequest(body: unknown): body is SimPayoutRequest {
  const b = body as SimPayoutRequest | undefined;
  return (
    typeof b?.merchant_reference === 'string' &&
    Number.isSafeInteger(b.amount_minor) &&
    b.amount_minor > 0 &&
    typeof b.currency === 'string' &&
    typeof b.account?.country === 'string' &&
    typeof b.account.number === 'string' &&
    b.account.number.length >= 4 &&
    typeof b.account.holder_name === 'string'
  );
}

export class SimulatedPayouts {
  /** By merchant reference (our payout id). */
  readonly byReference = new Map<string, SimPayout>();
  /** Payout requests received per merchant reference, replays included (tests count them). */
  readonly requests = new Map<string, number>();

  constructor(
    private readonly processor: SimulatedProcessor,
    private readonly host: SimulatorHost,
  ) {}

  create(body: unknown): SimResponse {
    if (!isPayoutRequest(body)) return error(400, 'BAD_REQUEST', 'merchant_reference, amount_minor, currency and account are required');
    this.requests.set(body.merchant_reference, (this.requests.get(body.merchant_reference) ?? 0) + 1);
    const existing = this.byReference.get(body.merchant_reference);
    if (existing) {
      if (existing.amount_minor !== body.amount_minor || existing.currency !== body.currency) {
        return error(409, 'IDEMPOTENCY_CONFLICT', 'this merchant_reference was used for another payout');
      }
      return { status: 200, body: existing };
    }
    const scenario = payoutScenario(body.account.number);
    if (this.processor.profile.errorsOn.includes(scenario)) {
      return error(500, 'INTERNAL_ERROR', 'the processor could not process the request; nothing was paid');
    }
    const payout: SimPayout = {
      payout_id: this.processor.nextId('po'),
      merchant_reference: body.merchant_reference,
      amount_minor: body.amount_minor,
      currency: body.currency,
      account_last4: body.account.number.slice(-4),
      state: 'PAID',
      rejection: null,
      created_at: this.host.clock.now().toISOString(),
    };
    if (scenario === 'decline') {
      payout.state = 'REJECTED';
      payout.rejection = 'ACCOUNT_CLOSED';
    } else if (scenario === 'pending') {
      payout.state = 'IN_TRANSIT';
      this.host.later(() => this.settle(payout.merchant_reference, 'PAID'));
    }
    this.byReference.set(payout.merchant_reference, payout);
    if (scenario === 'timeout') {
      // Paid, but the answer never comes: the merchant learns it by asking or by webhook.
      this.host.later(() => this.notify(payout));
      return { status: 0, body: undefined, hang: true };
    }
    return { status: 201, body: payout };
  }

  get(reference: string): SimResponse {
    const payout = this.byReference.get(reference);
    return payout ? { status: 200, body: payout } : error(404, 'NOT_FOUND', 'no payout with this merchant_reference');
  }

  /**
   * Settles a payout in transit (delay elapsed or control call), or has the beneficiary's bank
   * return a paid one; anything else keeps its state. Reported by webhook when it changes.
   */
  settle(reference: string, state: Exclude<SimPayoutState, 'IN_TRANSIT'>): SimResponse {
    const payout = this.byReference.get(reference);
    if (!payout) return error(404, 'NOT_FOUND', 'no payout with this merchant_reference');
    const from = payout.state;
    if (from === 'IN_TRANSIT') {
      payout.state = state;
      payout.rejection = state === 'REJECTED' ? 'REFUSED_BY_BANK' : state === 'RETURNED' ? 'ACCOUNT_CLOSED' : null;
    } else if (from === 'PAID' && state === 'RETURNED') {
      payout.state = 'RETURNED';
      payout.rejection = 'ACCOUNT_CLOSED';
    }
    if (payout.state !== from) this.notify(payout);
    return { status: 200, body: payout };
  }

  private notify(payout: SimPayout): void {
    this.host.notify(this.processor.name, { event_type: 'payout.state_changed', payout: { ...payout } });
  }

  /** POST /payouts, GET /payouts/{ref}, POST /payouts/{ref}/resolve; undefined for anything else. */
  dispatch(method: string, rest: string[], body: unknown): SimResponse | undefined {
    const [reference, action] = rest;
    if (method === 'POST' && rest.length === 0) return this.create(body);
    if (method === 'GET' && rest.length === 1) return this.get(reference!);
    if (method === 'POST' && action === 'resolve' && rest.length === 2) {
      const state = (body as { state?: string } | undefined)?.state;
      if (state !== 'PAID' && state !== 'REJECTED' && state !== 'RETURNED') return error(400, 'BAD_REQUEST', 'state must be PAID, REJECTED or RETURNED');
      return this.settle(reference!, state);
    }
    return undefined;
  }
}
