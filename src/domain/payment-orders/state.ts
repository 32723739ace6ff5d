import { defineStateMachine } from '../../kernel/state-machine.js';

export const PAYMENT_ORDER_STATUSES = ['open', 'processing', 'paid', 'cancelled', 'expired'] as const;
export type PaymentOrderStatus = (typeof PAYMENT_ORDER_STATUSES)[number];

export const paymentOrderStates = defineStateMachine<PaymentOrderStatus>('payment order', {
  open: ['processing', 'cancelled', 'expired'],
  // A failed payment hands the order back for another attempt.
  processing: ['paid', 'open'],
  paid: [],
  cancelled: [],
  expired: [],
});
