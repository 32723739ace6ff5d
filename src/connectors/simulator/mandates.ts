// The simulated processors' direct debit side: mandates registered with the customer's (simulated)
// bank and debits against them. As with cards, the data picks the scenario (API.md §6): the last
// four digits of the account number (of an IBAN: of its account part) say whether the bank
// accepts the mandate at once, refuses it, answers later, never answers in time, or whether the
// first processor fails with an internal error. Debits are always accepted as pending and settle
// after the configured delay (or when told to, through the control endpoint), as bank debits do.
import type { TestCardScenario } from './cards.js';
import type { SimCharge, SimChargeRequest, SimError, SimErrorCode, SimMandate, SimMandateRequest } from './protocol.js';
import { SIM_SCHEMES } from './protocol.js';
import type { SimResponse, SimulatedProcessor, SimulatorHost } from './processor.js';

/** The bank account endings of API.md §6, in the scenario names the processors' profiles use. */
export const TEST_ACCOUNT_ENDINGS: Readonly<Record<string, TestCardScenario>> = {
  '0000': 'success',
  '0002': 'decline',
  '0003': 'pending',
  '0004': 'timeout',
  '0005': 'processor_error',
};

/** Any other ending behaves like 0000. */
export function accountScenario(accountNumber: string): TestCardScenario {
  return TEST_ACCOUNT_ENDINGS[accountNumber.slice(-4)] ?? 'success';
}

function error(status: number, code: SimErrorCode, detail: string): SimResponse {
  const body: SimError = { error: { code, detail } };
  return { status, body };
}

function isMandateRequest(body: unknown): body is SimMandateRequest {
  const b = body as SimMandateRequest | undefined;
  return (
    typeof b?.merchant_reference === 'string' &&
    (SIM_SCHEMES as readonly string[]).includes(b.scheme) &&
    typeof b.currency === 'string' &&
    typeof b.account?.country === 'string' &&
    typeof b.account.number === 'string' &&
    b.account.number.length >= 4 &&
    typeof b.payer?.email === 'string'
  );
}

export class SimulatedMandates {
  /** By merchant reference (our mandate id). */
  readonly byReference = new Map<string, SimMandate>();
  private readonly byId = new Map<string, SimMandate>();
  /** Setup requests received per merchant reference, replays included (tests count them). */
  readonly setupRequests = new Map<string, number>();

  constructor(
    private readonly processor: SimulatedProcessor,
    private readonly host: SimulatorHost,
  ) {}

  create(body: unknown): SimResponse {
    if (!isMandateRequest(body)) return error(400, 'BAD_REQUEST', 'merchant_reference, scheme, currency, account and payer are required');
    this.setupRequests.set(body.merchant_reference, (this.setupRequests.get(body.merchant_reference) ?? 0) + 1);
    const existing = this.byReference.get(body.merchant_reference);
    if (existing) {
      if (existing.scheme !== body.scheme || existing.currency !== body.currency) {
        return error(409, 'IDEMPOTENCY_CONFLICT', 'this merchant_reference was used for another mandate');
      }
      return { status: 200, body: existing };
    }
    const scenario = accountScenario(body.account.number);
    if (this.processor.profile.errorsOn.includes(scenario)) {
      return error(500, 'INTERNAL_ERROR', 'the processor could not process the request; no mandate was registered');
    }
    const mandate: SimMandate = {
      mandate_id: this.processor.nextId('md'),
      merchant_reference: body.merchant_reference,
      scheme: body.scheme,
      currency: body.currency,
      account_last4: body.account.number.slice(-4),
      state: 'ACTIVE',
      rejection: null,
      created_at: this.host.clock.now().toISOString(),
    };
    if (scenario === 'decline') {
      mandate.state = 'REJECTED';
      mandate.rejection = 'ACCOUNT_CLOSED';
    } else if (scenario === 'pending') {
      mandate.state = 'SUBMITTED';
      this.host.later(() => this.settle(mandate.merchant_reference, 'ACTIVE'));
    }
    this.byReference.set(mandate.merchant_reference, mandate);
    this.byId.set(mandate.mandate_id, mandate);
    if (scenario === 'timeout') {
      // Registered, but the answer never comes: the merchant learns it by asking or by webhook.
      this.host.later(() => this.notify(mandate));
      return { status: 0, body: undefined, hang: true };
    }
    return { status: 201, body: mandate };
  }

  get(reference: string): SimResponse {
    const mandate = this.byReference.get(reference);
    return mandate ? { status: 200, body: mandate } : error(404, 'NOT_FOUND', 'no mandate with this merchant_reference');
  }

  /**
   * The bank's answer to a submitted mandate (delay elapsed or control call), or the payer
   * revoking an active one through their bank; reported by webhook.
   */
  settle(reference: string, state: 'ACTIVE' | 'REJECTED' | 'REVOKED_BY_PAYER'): SimResponse {
    const mandate = this.byReference.get(reference);
    if (!mandate) return error(404, 'NOT_FOUND', 'no mandate with this merchant_reference');
    const from = mandate.state;
    const allowed = state === 'REVOKED_BY_PAYER' ? from === 'ACTIVE' : from === 'SUBMITTED';
    if (!allowed) return { status: 200, body: mandate };
    mandate.state = state;
    mandate.rejection = state === 'REJECTED' ? 'REFUSED_BY_BANK' : null;
    this.notify(mandate);
    return { status: 200, body: mandate };
  }

  /** The merchant cancels the mandate; debits already submitted still settle. */
  cancel(reference: string): SimResponse {
    const mandate = this.byReference.get(reference);
    if (!mandate) return error(404, 'NOT_FOUND', 'no mandate with this merchant_reference');
    if (mandate.state === 'ACTIVE' || mandate.state === 'SUBMITTED') mandate.state = 'CANCELLED';
    return { status: 200, body: mandate };
  }

  /** A debit (a charge carrying mandate_id): pending until the bank settles it. */
  debit(body: SimChargeRequest & { mandate_id: string }, charge: SimCharge): SimCharge {
    const mandate = this.byId.get(body.mandate_id);
    charge.mandate_id = body.mandate_id;
    if (!mandate || mandate.state !== 'ACTIVE' || mandate.currency !== body.currency) {
      charge.state = 'REFUSED';
      charge.refusal = 'MANDATE_NOT_ACTIVE';
      return charge;
    }
    charge.state = 'PENDING';
    this.host.later(() => this.processor.settleCharge(charge.merchant_reference, 'CAPTURED'));
    return charge;
  }

  private notify(mandate: SimMandate): void {
    this.host.notify(this.processor.name, { event_type: 'mandate.state_changed', mandate });
  }

  dispatch(method: string, parts: readonly string[], body: unknown): SimResponse | undefined {
    const [reference, action] = parts;
    if (method === 'POST' && parts.length === 0) return this.create(body);
    if (method === 'GET' && parts.length === 1) return this.get(reference!);
    if (method === 'POST' && parts.length === 2 && action === 'cancel') return this.cancel(reference!);
    if (method === 'POST' && parts.length === 2 && action === 'resolve') {
      const state = (body as { state?: string } | undefined)?.state;
      if (state !== 'ACTIVE' && state !== 'REJECTED' && state !== 'REVOKED_BY_PAYER') {
        return error(400, 'BAD_REQUEST', 'state must be ACTIVE, REJECTED or REVOKED_BY_PAYER');
      }
      return this.settle(reference!, state);
    }
    return undefined;
  }
}
