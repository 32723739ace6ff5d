import { defineStateMachine } from '../../kernel/state-machine.js';

export const PAYMENT_STATUSES = ['pending', 'requires_action', 'succeeded', 'failed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export type PaymentGroup = 'awaiting' | 'withCustomer' | 'final' | 'captured';

export const paymentStates = defineStateMachine<PaymentStatus, PaymentGroup>('payment', {
  pending: ['requires_action', 'succeeded', 'failed'],
  // Waiting for the customer (3-D Secure, a redirect): only the processor's outcome moves it on.
  requires_action: ['succeeded', 'failed'],
  // Final for the attempt (refunds are separate objects), except that a direct debit's money can
  // come back from the payer's bank afterwards (a late failure, a charge-back): only a processor's
  // `reversed` report takes this edge (transitions.ts), never a plain failure report.
  succeeded: ['failed'],
  failed: [],
}, {
  // The processor's outcome is still to come: what a refresh or a test resolve asks about.
  awaiting: ['pending', 'requires_action'],
  // Waiting for the customer (next_action shown, the return endpoint open).
  withCustomer: ['requires_action'],
  // The outcome is known; only a processor's reversal moves a succeeded payment.
  final: ['succeeded', 'failed'],
  // Money taken from the customer: what refunds draw on.
  captured: ['succeeded'],
});

/** The status a new payment starts in (both create paths: new-payment.ts and one-statement.ts). */
export const NEW_PAYMENT_STATUS = 'pending' satisfies PaymentStatus;
