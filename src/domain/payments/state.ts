import { defineStateMachine } from '../../kernel/state-machine.js';

export const PAYMENT_STATUSES = ['pending', 'requires_action', 'succeeded', 'failed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const paymentStates = defineStateMachine<PaymentStatus>('payment', {
  pending: ['requires_action', 'succeeded', 'failed'],
  // Waiting for the customer (3-D Secure, a redirect): only the processor's outcome moves it on.
  requires_action: ['succeeded', 'failed'],
  // Final for the attempt: refunds are separate objects; a failed payment's order takes a new payment.
  succeeded: [],
  failed: [],
});
