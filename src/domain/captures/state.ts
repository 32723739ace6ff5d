import { defineStateMachine } from '../../kernel/state-machine.js';

export const CAPTURE_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type CaptureStatus = (typeof CAPTURE_STATUSES)[number];

// A capture of a manual payment's authorisation: sent, then settled by the processor's answer or,
// where the processor confirms asynchronously (Adyen), by its notification.
export const captureStates = defineStateMachine<CaptureStatus, 'awaiting' | 'final'>(
  'capture',
  {
    pending: ['succeeded', 'failed'],
    succeeded: [],
    failed: [],
  },
  {
    // The processor's outcome is still to come.
    awaiting: ['pending'],
    final: ['succeeded', 'failed'],
  },
);
