import { defineStateMachine } from '../../kernel/state-machine.js';
import { DISPUTE_STATUSES, type DisputeStatus } from '../../connectors/disputes.js';

export { DISPUTE_STATUSES, type DisputeStatus };

// A dispute as its processor moves it: an inquiry (warning_needs_response) may become a
// chargeback; the merchant's evidence puts it under review; the issuer decides. Adyen reopens a
// won dispute with a second chargeback and may turn a lost one round in pre-arbitration, so won
// and lost lead to each other. Accepted (the merchant gave up, here or at the processor) is final.
export const disputeStates = defineStateMachine<DisputeStatus, 'open' | 'refusesRefunds' | 'closed' | 'answerable'>(
  'dispute',
  {
    warning_needs_response: ['needs_response', 'under_review', 'won', 'lost', 'accepted'],
    needs_response: ['under_review', 'won', 'lost', 'accepted'],
    under_review: ['needs_response', 'won', 'lost', 'accepted'],
    won: ['lost', 'needs_response', 'under_review'],
    lost: ['won'],
    accepted: [],
  },
  {
    open: ['warning_needs_response', 'needs_response', 'under_review'],
    // The customer may already get the money back through the bank: a refund would pay them twice.
    refusesRefunds: ['warning_needs_response', 'needs_response', 'under_review', 'lost', 'accepted'],
    closed: ['won', 'lost', 'accepted'],
    // Evidence may be saved, submitted, or the dispute accepted.
    answerable: ['warning_needs_response', 'needs_response'],
  },
);
