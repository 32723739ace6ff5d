// A mandate's set-up as a money movement (src/movement): registered with the customer's bank by
// one connector of its route, the mandate id being the processor's idempotency key.
import { connectorError, type ConnectorErrorCode, type MandateSetupRequest, type MandateState } from '../../connectors/types.js';
import { reported, type MovementKind } from '../../movement/kind.js';
import { mandates } from '../../storage/schema.js';
import { ABANDONED_MANDATE, MANDATE_RULES, mandateView, type MandateRow, type MandateUpdate } from './transitions.js';

export const mandateKind: MovementKind<MandateRow, MandateState, MandateUpdate, MandateSetupRequest> = {
  object: 'mandate',
  prefix: 'mdt',
  rules: MANDATE_RULES,
  route: (row) => row.route,
  abandoned: ABANDONED_MANDATE,
  send: async (connector, request, signal) =>
    connector.setupMandate ? connector.setupMandate(request, signal) : connectorError('request_rejected', `${connector.name} takes no mandates`),
  status: async (connector, request, signal) => (connector.mandateStatus ? connector.mandateStatus(request, signal) : { kind: 'not_found' }),
  // Accepted (even if revoked since) reads as taken, refused as declined, as for payments.
  attempt: (state) =>
    state.kind === 'failed' ? { kind: 'declined', failureCode: state.failureCode } : { kind: state.kind === 'pending' ? 'pending' : 'succeeded' },
  fromState: (connector, state) => {
    const update = reported(state.kind, connector, state);
    return (state.kind === 'revoked' ? { ...update, by: state.by } : update) as MandateUpdate;
  },
  nothingDone: (connector: string | null, code: ConnectorErrorCode) => ({
    kind: 'failed',
    connector,
    connectorReference: null,
    failureCode: 'processing_error',
    failureMessage: `No connector could register the mandate (${code}).`,
  }),
  // Sent, and no answer: the processor may hold it. The worker asks later.
  unknown: (connector) => ({ kind: 'pending', connector: connector!, connectorReference: null }),
};
