import { defineStateMachine } from '../../kernel/state-machine.js';

export const VOID_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type VoidStatus = (typeof VOID_STATUSES)[number];

// Why an authorisation was voided, as the payment's cancellation_reason says it: the connectors' words (src/connectors/captures.ts).
export { CANCELLATION_REASONS, type CancellationReason } from '../../connectors/captures.js';

// A void of an authorisation: sent, then settled by the processor's answer or, where the processor
// confirms asynchronously (Adyen), by its CANCELLATION notification or the worker's check.
export const voidStates = defineStateMachine<VoidStatus, 'awaiting' | 'final'>(
  'void',
  {
    pending: ['succeeded', 'failed'],
    succeeded: [],
    failed: [],
  },
  {
    awaiting: ['pending'],
    final: ['succeeded', 'failed'],
  },
);
