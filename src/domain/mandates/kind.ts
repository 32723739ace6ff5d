// A mandate's set-up as a money movement (src/movement): registered with the customer's bank by
// one connector of its route, the mandate id being the processor's idempotency key (its calls:
// src/connectors/movements/mandate.ts).
import type { MandateSetupRequest, MandateState } from '../../connectors/types.js';
import { MANDATE_CALLS } from '../../connectors/movements/mandate.js';
import { plannedRoute, type MovementKind } from '../../movement/kind.js';
import { ABANDONED_MANDATE, MANDATE_RULES, type MandateRow, type MandateUpdate } from './transitions.js';

export const mandateKind: MovementKind<MandateRow, MandateState, MandateUpdate, MandateSetupRequest> = {
  ...MANDATE_CALLS,
  object: 'mandate',
  prefix: 'mdt',
  rules: MANDATE_RULES,
  route: plannedRoute,
  abandoned: ABANDONED_MANDATE,
};
