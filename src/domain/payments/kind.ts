// A payment as a money movement (src/movement): a charge of a card or a direct debit under a
// mandate, sent along its fixed route (its calls: src/connectors/movements/charge.ts); its states
// and rules are in transitions.ts.
import type { ChargeRequest, ChargeState } from '../../connectors/types.js';
import { CHARGE_CALLS } from '../../connectors/movements/charge.js';
import { attemptRoute, unbookedFailure, type MovementKind } from '../../movement/kind.js';
import { paymentCascade } from './cascade.js';
import { PAYMENT_RULES, type PaymentRow, type PaymentUpdate } from './transitions.js';

export const ABANDONED: PaymentUpdate = {
  kind: 'failed',
  connector: null,
  connectorReference: null,
  failureCode: 'processing_error',
  failureMessage: 'The request that created the payment ended before any connector took it; nothing was charged.',
};

export const paymentKind: MovementKind<PaymentRow, ChargeState, PaymentUpdate, ChargeRequest> = {
  ...CHARGE_CALLS,
  object: 'payment',
  prefix: 'pay',
  rules: PAYMENT_RULES,
  heldAs: 'the charge',
  abandoned: ABANDONED,
  route: attemptRoute,
  cascade: paymentCascade,
};

/** A payment sent without an answer whose processor still does not know it once overdue. */
export const unbooked = (connector: string): PaymentUpdate => unbookedFailure(connector, 'the charge', 'charged');
