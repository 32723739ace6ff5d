// Card verifications (cards saved without paying) read from the answers of processors that verify
// a card with a zero-amount payment: the simulators and Adyen (Stripe's SetupIntent is read as a
// PaymentIntent, stripe/setup-intents.ts).
import type { ChargeResult, ChargeState, ChargeStatusResult, VerificationResult, VerificationState, VerificationStatusResult } from './types.js';

/**
 * A processor that verifies a card with a zero-amount payment answers as for a payment: its state
 * as a verification's. Never captured, an authorisation is its success; the network transaction id
 * is the payment's, when the processor gave one.
 */
export function verificationOf(state: ChargeState, networkTransactionId?: string | null): VerificationState;
export function verificationOf(state: ChargeResult, networkTransactionId?: string | null): VerificationResult;
export function verificationOf(state: ChargeStatusResult, networkTransactionId?: string | null): VerificationStatusResult;
export function verificationOf(state: ChargeStatusResult, networkTransactionId?: string | null): VerificationStatusResult {
  switch (state.kind) {
    case 'declined':
      return { kind: 'declined', connectorReference: state.connectorReference, failureCode: state.failureCode, declineType: state.declineType, message: state.message };
    // A card's money taken back says nothing more of it can be trusted.
    case 'reversed':
      return { kind: 'declined', connectorReference: state.connectorReference, failureCode: state.failureCode, declineType: 'do_not_retry', message: state.message };
    case 'succeeded':
      return { kind: 'succeeded', connectorReference: state.connectorReference, networkTransactionId: networkTransactionId ?? state.networkTransactionId ?? null };
    case 'authorized':
      return { kind: 'succeeded', connectorReference: state.connectorReference, networkTransactionId: networkTransactionId ?? null };
    default:
      return state;
  }
}
