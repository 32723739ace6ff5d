// A card verification (saving a card without paying) as a movement (src/movement): a zero-amount
// authorisation at one connector of the route, the payment method's id being the processor's
// idempotency key.
import { connectorError, type CardVerificationRequest, type ConnectorErrorCode, type VerificationState } from '../../connectors/types.js';
import { reported, type MovementKind } from '../../movement/kind.js';
import type { PaymentMethodRow } from './service.js';
import { ABANDONED_VERIFICATION, VERIFICATION_RULES, type VerificationUpdate } from './transitions.js';

export const verificationKind: MovementKind<PaymentMethodRow, VerificationState, VerificationUpdate, CardVerificationRequest> = {
  object: 'payment_method',
  prefix: 'pm',
  rules: VERIFICATION_RULES,
  // Announced once usable (payment_method.attached), not when the verification starts.
  createdEvent: null,
  route: (row) => row.route,
  abandoned: ABANDONED_VERIFICATION,
  send: async (connector, request, signal) =>
    connector.verifyCard ? connector.verifyCard(request, signal) : connectorError('request_rejected', `${connector.name} does not verify cards`),
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
  nothingDone: (connector: string | null, code: ConnectorErrorCode) => ({
    kind: 'failed',
    connector,
    connectorReference: null,
    failureCode: 'processing_error',
    failureMessage: `No connector could verify the card (${code}); nothing was saved.`,
  }),
  // Sent, and no answer: the processor may have verified it. A retry, or the worker, asks later.
  unknown: (connector) => ({ kind: 'pending', connector: connector!, connectorReference: null }),
};
