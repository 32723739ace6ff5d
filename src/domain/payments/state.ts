import { defineStateMachine } from '../../kernel/state-machine.js';

export const PAYMENT_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const paymentStates = defineStateMachine<PaymentStatus>('payment', {
  pending: ['succeeded', 'failed'],
  // Final for the attempt: refunds are separate objects; a failed payment's order takes a new payment.
  succeeded: [],
  failed: [],
});
