// A card verification's calls (saving a card without paying): a zero-amount authorisation at one
// connector of the route, its answers read as the payment method's updates
// (src/domain/payment-methods/transitions.ts applies them).
import type { CardVerificationRequest, CustomerAction, PaymentFailureCode, VerificationState } from '../types.js';
import { lacks, reported, type MovementCalls } from './calls.js';

export type VerificationUpdate =
  | { kind: 'active'; connector: string; connectorReference: string; networkTransactionId: string | null }
  | { kind: 'pending'; connector: string; connectorReference: string | null }
  | { kind: 'requires_action'; connector: string; connectorReference: string; action: CustomerAction }
  | { kind: 'failed'; connector: string | null; connectorReference: string | null; failureCode: PaymentFailureCode; failureMessage: string };

export const VERIFICATION_CALLS: MovementCalls<unknown, VerificationState, VerificationUpdate, CardVerificationRequest> = {
  send: async (connector, request, signal) => (connector.verifyCard ? connector.verifyCard(request, signal) : lacks(connector, 'does not verify cards')),
  status: async (connector, request, signal) => (connector.verificationStatus ? connector.verificationStatus(request, signal) : { kind: 'not_found' }),
  attempt: (state) => (state.kind === 'declined' ? { kind: 'declined', failureCode: state.failureCode, declineType: state.declineType } : { kind: state.kind }),
  fromState: (connector, state): VerificationUpdate => {
    switch (state.kind) {
      case 'succeeded':
        return { kind: 'active', connector, connectorReference: state.connectorReference, networkTransactionId: state.networkTransactionId };
      case 'requires_action':
        return { kind: 'requires_action', connector, connectorReference: state.connectorReference, action: state.action };
      case 'pending':
        return { kind: 'pending', connector, connectorReference: state.connectorReference };
      case 'declined':
        return reported('failed', connector, state) as VerificationUpdate;
    }
  },
  nothingDone: (connector, code) => ({
    kind: 'failed',
    connector,
    connectorReference: null,
    failureCode: 'processing_error',
    failureMessage: `No connector could verify the card (${code}); nothing was saved.`,
  }),
  // Sent, and no answer: the processor may have verified it. A retry, or the worker, asks later.
  unknown: (connector) => ({ kind: 'pending', connector: connector!, connectorReference: null }),
};
