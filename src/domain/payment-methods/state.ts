import { defineStateMachine } from '../../kernel/state-machine.js';

export const PAYMENT_METHOD_STATUSES = ['pending', 'active', 'requires_action', 'failed', 'detached'] as const;
export type PaymentMethodStatus = (typeof PAYMENT_METHOD_STATUSES)[number];

export const PAYMENT_METHOD_USAGES = ['on_session', 'off_session'] as const;
export type PaymentMethodUsage = (typeof PAYMENT_METHOD_USAGES)[number];

export const paymentMethodStates = defineStateMachine<PaymentMethodStatus, 'changeable' | 'verifying' | 'withCustomer' | 'chargeable' | 'erased' | 'refused'>(
  'payment method',
  {
    // A card saved without paying while its verification is at the processor (only seen when the
    // request that saves it was interrupted: the retry, or the worker, finishes it).
    pending: ['active', 'requires_action', 'failed', 'detached'],
    // A verification waiting for the customer (3-D Secure) ends active or failed.
    requires_action: ['active', 'failed', 'detached'],
    active: ['detached'],
    failed: ['detached'],
    // Its card data is erased: nothing can bring it back (save the card again instead).
    detached: [],
  },
  {
    changeable: ['active', 'requires_action', 'failed'],
    verifying: ['pending', 'requires_action'],
    // Waiting for the customer (3-D Secure): next_action shown.
    withCustomer: ['requires_action'],
    // What a payment may charge.
    chargeable: ['active'],
    // Its card data is gone.
    erased: ['detached'],
    // The verification refused it: its card is erased, nothing usable is saved.
    refused: ['failed'],
  },
);
