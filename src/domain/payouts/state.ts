import { defineStateMachine } from '../../kernel/state-machine.js';

export const PAYOUT_STATUSES = ['pending', 'processing', 'paid', 'failed', 'cancelled', 'returned'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

export type PayoutGroup = 'unsent' | 'atBank' | 'paid';

export const payoutStates = defineStateMachine<PayoutStatus, PayoutGroup>('payout', {
  // Waiting for submission to the bank; the merchant may still cancel it.
  pending: ['processing', 'cancelled'],
  // Sent (or being sent): only the bank's answer moves it on.
  processing: ['paid', 'failed'],
  // The beneficiary's bank may still send it back.
  paid: ['returned'],
  failed: [],
  cancelled: [],
  returned: [],
}, {
  // Not yet claimed for submission: nothing to ask a bank about.
  unsent: ['pending'],
  // Sent (or being sent): only a bank's report moves it on.
  atBank: ['processing'],
  // Booked by the bank; the beneficiary's bank may still send it back.
  paid: ['paid'],
});
