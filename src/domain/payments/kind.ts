// A payment as a money movement (src/movement): a charge of a card or a direct debit under a
// mandate, sent along its fixed route; its states and rules are in transitions.ts.
import type { ChargeRequest, ChargeState, ConnectorErrorCode } from '../../connectors/types.js';
import { reported, unbookedFailure, type MovementKind } from '../../movement/kind.js';
import { payments } from '../../storage/schema.js';
import { attemptReference, attemptRoute, paymentCascade } from './cascade.js';
import { PAYMENT_RULES, paymentView, type PaymentRow, type PaymentUpdate } from './transitions.js';

export const ABANDONED: PaymentUpdate = {
  kind: 'failed',
  connector: null,
  connectorReference: null,
  failureCode: 'processing_error',
  failureMessage: 'The request that created the payment ended before any connector took it; nothing was charged.',
};

export const paymentKind: MovementKind<PaymentRow, ChargeState, PaymentUpdate, ChargeRequest> = {
  object: 'payment',
  prefix: 'pay',
  rules: PAYMENT_RULES,
  heldAs: 'the charge',
  abandoned: ABANDONED,
  route: attemptRoute,
  reference: attemptReference,
  cascade: paymentCascade,
  send: (connector, request, signal) => connector.charge(request, signal),
  status: (connector, request, signal) => connector.chargeStatus(request, signal),
  // An authorisation is the call's success: the money is held, for a capture to take.
  attempt: (state) =>
    state.kind === 'declined'
      ? { kind: 'declined', failureCode: state.failureCode, declineType: state.declineType, ...(state.merchantAdvice ? { merchantAdvice: state.merchantAdvice } : {}) }
      : state.kind === 'reversed'
        ? { kind: 'declined', failureCode: state.failureCode }
        : { kind: state.kind === 'authorized' ? 'succeeded' : state.kind },
  // The card's issuing country and a decline's merchant advice, where the processor's answer names
  // them, ride on the update (saving.ts records them), whoever reports it: the request, a webhook, a status check.
  fromState: (connector, state) => withReported(state, fromChargeState(connector, state)),
  nothingDone: (connector: string | null, code: ConnectorErrorCode) => ({
    kind: 'failed',
    connector,
    connectorReference: null,
    failureCode: 'processing_error',
    // Certainly nothing was done anywhere: every connector refused before acting, or none was reached.
    declineType: 'processor',
    failureMessage: `No connector could process the payment (${code}).`,
  }),
  unknown: (connector) => ({ kind: 'pending', connector: connector!, connectorReference: null }),
};

function fromChargeState(connector: string, state: ChargeState): PaymentUpdate {
  if (state.kind === 'requires_action') return { kind: 'requires_action', connector, connectorReference: state.connectorReference, action: state.action };
  if (state.kind === 'authorized') return { kind: 'authorized', connector, connectorReference: state.connectorReference, captureBefore: state.captureBefore ?? null };
  if (state.kind === 'succeeded' && state.networkTransactionId !== undefined) {
    return { kind: 'succeeded', connector, connectorReference: state.connectorReference, networkTransactionId: state.networkTransactionId };
  }
  return reported(({ succeeded: 'succeeded', pending: 'pending', declined: 'failed', reversed: 'reversed' } as const)[state.kind], connector, state) as PaymentUpdate;
}

function withReported(state: ChargeState, update: PaymentUpdate): PaymentUpdate {
  const country = 'issuingCountry' in state ? state.issuingCountry : undefined;
  const issued = country && (update.kind === 'succeeded' || update.kind === 'authorized' || update.kind === 'failed') ? { ...update, issuingCountry: country } : update;
  return state.kind === 'declined' && state.merchantAdvice && issued.kind === 'failed' ? { ...issued, merchantAdvice: state.merchantAdvice } : issued;
}

/** A payment sent without an answer whose processor still does not know it once overdue. */
export const unbooked = (connector: string): PaymentUpdate => unbookedFailure(connector, 'the charge', 'charged');
