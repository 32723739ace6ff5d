// The simulated processors' payouts: credit transfers to a beneficiary's (simulated) bank. As with
// cards, the data picks the scenario (docs/test-mode.md): the last four digits of the account number (of an
// IBAN: of its account part, which ends the IBAN) say whether the bank pays at once, refuses
// (account closed), answers later (settled after the configured delay or through the control
// endpoint), never answers in time (paid, reported only by webhook and status), or whether the
// first processor fails with an internal error. Payouts are idempotent by our payout id.
import type { SimPayout, SimPayoutRequest } from './protocol.js';
import { byAccountEnding, countRequest, ProcessorObjects, type Desk, type ProcessorContext } from './objects.js';
import { movesMoney, simError, type SimResponse } from './wire.js';

function isPayoutRequest(body: unknown): body is SimPayoutRequest {
  const b = body as SimPayoutRequest;
  return (
    movesMoney(body) &&
    typeof b.account?.country === 'string' &&
    typeof b.account.number === 'string' &&
    b.account.number.length >= 4 &&
    typeof b.account.holder_name === 'string'
  );
}

const CONTROL_STATES = ['PAID', 'REJECTED', 'RETURNED'] as const;

export class PayoutDesk extends ProcessorObjects<SimPayout> implements Desk {
  /** Payout requests received per merchant reference, replays included (tests count them). */
  readonly requests = new Map<string, number>();
  constructor(p: ProcessorContext) {
    super(p, {
      kind: 'payout',
      objectId: (payout) => payout.payout_id,
      // A payout in transit settles; a paid one may be returned by the beneficiary's bank.
      settle(payout, to) {
        if (payout.state === 'IN_TRANSIT') {
          payout.state = to as SimPayout['state'];
          payout.rejection = to === 'REJECTED' ? 'REFUSED_BY_BANK' : to === 'RETURNED' ? 'ACCOUNT_CLOSED' : null;
          return true;
        }
        if (payout.state !== 'PAID' || to !== 'RETURNED') return false;
        payout.state = 'RETURNED';
        payout.rejection = 'ACCOUNT_CLOSED';
        return true;
      },
    });
  }

  async create(body: unknown): Promise<SimResponse> {
    if (!isPayoutRequest(body)) return simError(400, 'BAD_REQUEST', 'merchant_reference, amount_minor, currency and account are required');
    countRequest(this.requests, body.merchant_reference);
    const same = (held: SimPayout) => held.amount_minor === body.amount_minor && held.currency === body.currency;
    return this.createOnce(body.merchant_reference, same, async () =>
      byAccountEnding<SimPayout>(this.p, body.account.number, 'nothing was paid', 'IN_TRANSIT', () => ({
        payout_id: this.p.nextId('po'),
        merchant_reference: body.merchant_reference,
        amount_minor: body.amount_minor,
        currency: body.currency,
        account_last4: body.account.number.slice(-4),
        state: 'PAID',
        rejection: null,
        created_at: this.p.now().toISOString(),
      })),
    );
  }

  act(action: string, reference: string, body: unknown) {
    return action === 'resolve' ? this.resolveControl(CONTROL_STATES, reference, body) : undefined;
  }
}
