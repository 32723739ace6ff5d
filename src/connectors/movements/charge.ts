// A payment's calls: a charge of a card or a direct debit under a mandate, and its answers read
// as the payment's updates (src/domain/payments/transitions.ts applies them).
import type { DeclineType } from '../../kernel/decline-types.js';
import type { ChargeRequest, ChargeState, CustomerAction, Issued, PaymentFailureCode } from '../types.js';
import { reported, type MovementCalls } from './calls.js';

/** What is known about a payment now, in the terms of our own states. */
export type ChargeUpdate =
  /** `networkTransactionId`: the card scheme's id of the payment, kept on the card it saves (src/domain/payments/saving.ts). */
  | ({ kind: 'succeeded'; connector: string; connectorReference: string; networkTransactionId?: string } & Issued)
  /** Accepted and awaiting an asynchronous outcome, or sent without an answer (timeout): to be verified. */
  | { kind: 'pending'; connector: string; connectorReference: string | null }
  /** Manual capture: the processor holds the money (captureBefore: its own deadline, if it said one). */
  | ({ kind: 'authorized'; connector: string; connectorReference: string; captureBefore: Date | null } & Issued)
  /** The processor needs the customer (3-D Secure, a redirect) before it decides. */
  | { kind: 'requires_action'; connector: string; connectorReference: string; action: CustomerAction }
  /**
   * `declineType`: what the refusal says about trying again; absent when nothing said (abandoned,
   * expired, an unknown outcome). `merchantAdvice`: the network's advice code it came with (saving.ts keeps it on the card).
   */
  | ({ kind: 'failed'; connector: string | null; connectorReference: string | null; failureCode: PaymentFailureCode; failureMessage: string; declineType?: DeclineType; merchantAdvice?: string } & Issued)
  /** A direct debit's money came back (late failure, charge-back): failed whatever it reached, a success's booking reversed. */
  | { kind: 'reversed'; connector: string; connectorReference: string | null; failureCode: PaymentFailureCode; failureMessage: string };

export const CHARGE_CALLS: MovementCalls<unknown, ChargeState, ChargeUpdate, ChargeRequest> = {
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
  nothingDone: (connector, code) => ({
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

function fromChargeState(connector: string, state: ChargeState): ChargeUpdate {
  if (state.kind === 'requires_action') return { kind: 'requires_action', connector, connectorReference: state.connectorReference, action: state.action };
  if (state.kind === 'authorized') return { kind: 'authorized', connector, connectorReference: state.connectorReference, captureBefore: state.captureBefore ?? null };
  if (state.kind === 'succeeded' && state.networkTransactionId !== undefined) {
    return { kind: 'succeeded', connector, connectorReference: state.connectorReference, networkTransactionId: state.networkTransactionId };
  }
  return reported(({ succeeded: 'succeeded', pending: 'pending', declined: 'failed', reversed: 'reversed' } as const)[state.kind], connector, state) as ChargeUpdate;
}

function withReported(state: ChargeState, update: ChargeUpdate): ChargeUpdate {
  const country = 'issuingCountry' in state ? state.issuingCountry : undefined;
  const issued = country && (update.kind === 'succeeded' || update.kind === 'authorized' || update.kind === 'failed') ? { ...update, issuingCountry: country } : update;
  return state.kind === 'declined' && state.merchantAdvice && issued.kind === 'failed' ? { ...issued, merchantAdvice: state.merchantAdvice } : issued;
}
