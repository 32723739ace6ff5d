// The simulated processors' direct debit mandates, registered with the customer's (simulated)
// bank. As with cards, the data picks the scenario (docs/test-mode.md): the last four digits of the account
// number (of an IBAN: of its account part) say whether the bank accepts the mandate at once,
// refuses it, answers later (after the configured delay, or when told to through the control
// endpoint), never answers in time, or whether the first processor fails with an internal error.
// Debits against a mandate are charges (charges.ts).
import type { SimMandate, SimMandateRequest } from './protocol.js';
import { SIM_SCHEMES } from './protocol.js';
import { byAccountEnding, countRequest, ProcessorObjects, type Desk, type ProcessorContext } from './objects.js';
import { simError, type SimResponse } from './wire.js';

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

const CONTROL_STATES = ['ACTIVE', 'REJECTED', 'REVOKED_BY_PAYER'] as const;

export class MandateDesk extends ProcessorObjects<SimMandate> implements Desk {
  /** Set-up requests received per merchant reference, replays included (tests count them). */
  readonly setupRequests = new Map<string, number>();
  constructor(p: ProcessorContext) {
    super(p, {
      kind: 'mandate',
      objectId: (mandate) => mandate.mandate_id,
      // The bank answers a submitted mandate, or the payer revokes an active one through their bank.
      settle(mandate, to) {
        const allowed = to === 'REVOKED_BY_PAYER' ? mandate.state === 'ACTIVE' : mandate.state === 'SUBMITTED';
        if (!allowed) return false;
        mandate.state = to as SimMandate['state'];
        mandate.rejection = to === 'REJECTED' ? 'REFUSED_BY_BANK' : null;
        return true;
      },
    });
  }

  async create(body: unknown): Promise<SimResponse> {
    if (!isMandateRequest(body)) return simError(400, 'BAD_REQUEST', 'merchant_reference, scheme, currency, account and payer are required');
    countRequest(this.setupRequests, body.merchant_reference);
    const same = (held: SimMandate) => held.scheme === body.scheme && held.currency === body.currency;
    return this.createOnce(body.merchant_reference, same, async () =>
      byAccountEnding<SimMandate>(this.p, body.account.number, 'no mandate was registered', 'SUBMITTED', () => ({
        mandate_id: this.p.nextId('md'),
        merchant_reference: body.merchant_reference,
        scheme: body.scheme,
        currency: body.currency,
        account_last4: body.account.number.slice(-4),
        state: 'ACTIVE',
        rejection: null,
        created_at: this.p.now().toISOString(),
      })),
    );
  }

  act(action: string, reference: string, body: unknown) {
    if (action === 'resolve') return this.resolveControl(CONTROL_STATES, reference, body);
    // The merchant cancels the mandate (it has the answer: no webhook); debits already submitted still settle.
    if (action === 'cancel') {
      const cancel = (mandate: SimMandate) => {
        if (mandate.state !== 'ACTIVE' && mandate.state !== 'SUBMITTED') return false;
        mandate.state = 'CANCELLED';
        return true;
      };
      return this.change(reference, cancel, true);
    }
    return undefined;
  }
}
