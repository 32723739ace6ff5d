// A mandate's set-up: registered with the customer's bank by one connector of its route, and its
// answers read as the mandate's updates (src/domain/mandates/transitions.ts applies them).
import type { MandateFailureCode, MandateSetupRequest, MandateState } from '../types.js';
import { lacks, reported, type MovementCalls } from './calls.js';

export type MandateUpdate =
  | { kind: 'active'; connector: string; connectorReference: string }
  | { kind: 'pending'; connector: string; connectorReference: string | null }
  | { kind: 'failed'; connector: string | null; connectorReference: string | null; failureCode: MandateFailureCode; failureMessage: string }
  | { kind: 'revoked'; connector: string; connectorReference: string; by: 'bank' | 'merchant' }
  /** Lapsed at the processor (unused too long, or consumed). */
  | { kind: 'expired'; connector: string; connectorReference: string };

export const MANDATE_CALLS: MovementCalls<unknown, MandateState, MandateUpdate, MandateSetupRequest> = {
  send: async (connector, request, signal) => (connector.setupMandate ? connector.setupMandate(request, signal) : lacks(connector, 'takes no mandates')),
  status: async (connector, request, signal) => (connector.mandateStatus ? connector.mandateStatus(request, signal) : { kind: 'not_found' }),
  // Accepted (even if revoked since) reads as taken, refused as declined, as for payments.
  attempt: (state) =>
    state.kind === 'failed' ? { kind: 'declined', failureCode: state.failureCode } : { kind: state.kind === 'pending' ? 'pending' : 'succeeded' },
  fromState: (connector, state) => {
    const update = reported(state.kind, connector, state);
    return (state.kind === 'revoked' ? { ...update, by: state.by } : update) as MandateUpdate;
  },
  nothingDone: (connector, code) => ({
    kind: 'failed',
    connector,
    connectorReference: null,
    failureCode: 'processing_error',
    failureMessage: `No connector could register the mandate (${code}).`,
  }),
  // Sent, and no answer: the processor may hold it. The worker asks later.
  unknown: (connector) => ({ kind: 'pending', connector: connector!, connectorReference: null }),
};
