import { defineStateMachine } from '../../kernel/state-machine.js';

export const PAYMENT_STATUSES = ['pending', 'requires_action', 'succeeded', 'failed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const paymentStates = defineStateMachine<PaymentStatus>('payment', {
  pending: ['requires_action', 'succeeded', 'failed'],
  // Waiting for the customer (3-D Secure, a redirect): only the processor's outcome moves it on.
  requires_action: ['succeeded', 'failed'],
  // Final for the attempt (refunds are separate objects), except that a direct debit's money can
  // come back from the payer's bank afterwards (a late failure, a charge-back): only a processor's
  // `reversed` report takes this edge (outcome.ts), never a plain failure report.
  succeeded: ['failed'],
  failed: [],
});

/** The status a new payment starts in (both create paths: plan.ts and at-once.ts). */
export const NEW_PAYMENT_STATUS = 'pending' satisfies PaymentStatus;
