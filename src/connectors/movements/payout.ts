// A payout's calls: sent to a beneficiary's bank along its route, and its answers read as the
// payout's updates (src/domain/payouts/transitions.ts applies them).
import type { PayoutFailureCode, PayoutRequest, PayoutState } from '../types.js';
import { lacks, reported, type MovementCalls } from './calls.js';

export type PayoutUpdate =
  /** Accepted by the bank and in transit, or sent without an answer (timeout): to be verified. */
  | { kind: 'processing'; connector: string; connectorReference: string | null }
  | { kind: 'paid'; connector: string; connectorReference: string }
  | { kind: 'failed'; connector: string | null; connectorReference: string | null; failureCode: PayoutFailureCode; failureMessage: string }
  | { kind: 'returned'; connector: string; connectorReference: string; failureCode: PayoutFailureCode; failureMessage: string };

export const PAYOUT_CALLS: MovementCalls<unknown, PayoutState, PayoutUpdate, PayoutRequest> = {
  send: async (connector, request, signal) => (connector.payout ? connector.payout(request, signal) : lacks(connector, 'cannot send payouts')),
  status: async (connector, request, signal) => (connector.payoutStatus ? connector.payoutStatus(request, signal) : lacks(connector, 'cannot send payouts')),
  // A bank that paid (or paid and returned) took it, like a succeeded charge.
  attempt: (state) =>
    state.kind === 'failed' ? { kind: 'declined', failureCode: state.failureCode } : { kind: state.kind === 'pending' ? 'pending' : 'succeeded' },
  fromState: (connector, state) =>
    reported(({ pending: 'processing', paid: 'paid', failed: 'failed', returned: 'returned' } as const)[state.kind], connector, state) as PayoutUpdate,
  // No bank took the payout: nothing left the account anywhere.
  nothingDone: (connector, code) => ({
    kind: 'failed',
    connector,
    connectorReference: null,
    failureCode: 'processing_error',
    failureMessage: `No connector could send the payout (${code}).`,
  }),
  // The request went out and no answer came back: the bank may have paid. Verify later.
  unknown: (connector) => ({ kind: 'processing', connector: connector!, connectorReference: null }),
};
