import { defineStateMachine } from '../../kernel/state-machine.js';

export const MANDATE_STATUSES = ['pending', 'active', 'failed', 'revoked', 'expired'] as const;
export type MandateStatus = (typeof MANDATE_STATUSES)[number];

export type MandateGroup = 'awaiting' | 'debitable';

export const mandateStates = defineStateMachine<MandateStatus, MandateGroup>('mandate', {
  // The customer's bank accepts or refuses the mandate.
  pending: ['active', 'failed'],
  // Revoked by the merchant (POST /v1/mandates/{id}/revoke) or by the customer through their bank;
  // expired when unused for MANDATE_DORMANCY_DAYS.
  active: ['revoked', 'expired'],
  failed: [],
  revoked: [],
  expired: [],
}, {
  // The customer's bank has not answered yet.
  awaiting: ['pending'],
  // What a debit may be taken under.
  debitable: ['active'],
});
