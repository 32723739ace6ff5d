// A card verification (saving a card without paying) as a movement (src/movement): a zero-amount
// authorisation at one connector of the route, the payment method's id being the processor's
// idempotency key (its calls: src/connectors/movements/verification.ts).
import type { CardVerificationRequest, VerificationState } from '../../connectors/types.js';
import { VERIFICATION_CALLS } from '../../connectors/movements/verification.js';
import { plannedRoute, type MovementKind } from '../../movement/kind.js';
import type { PaymentMethodRow } from './service.js';
import { ABANDONED_VERIFICATION, VERIFICATION_RULES, type VerificationUpdate } from './transitions.js';

export const verificationKind: MovementKind<PaymentMethodRow, VerificationState, VerificationUpdate, CardVerificationRequest> = {
  ...VERIFICATION_CALLS,
  object: 'payment_method',
  prefix: 'pm',
  rules: VERIFICATION_RULES,
  // Announced once usable (payment_method.attached), not when the verification starts.
  createdEvent: null,
  route: plannedRoute,
  abandoned: ABANDONED_VERIFICATION,
};
