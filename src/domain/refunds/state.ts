import { defineStateMachine } from '../../kernel/state-machine.js';

export const REFUND_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

export const refundStates = defineStateMachine<RefundStatus, 'awaiting'>(
  'refund',
  {
    pending: ['succeeded', 'failed'],
    succeeded: [],
    failed: [],
  },
  // The processor's outcome is still to come.
  { awaiting: ['pending'] },
);
