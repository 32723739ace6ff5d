// Pure mapping of the simulated processors' payout vocabulary (protocol.ts) onto ours (types.ts),
// exhaustive like transformers.ts: a new processor state or rejection fails to compile until it is
// given a meaning.
import type { PayoutFailureCode, PayoutRequest, PayoutState } from '../types.js';
import { SIM_PAYOUT_STATES, type SimPayout, type SimPayoutRejection, type SimPayoutRequest, type SimPayoutState } from './protocol.js';
import { answersOf } from './answers.js';

const FAILURE_OF_REJECTION = {
  ACCOUNT_CLOSED: 'account_closed',
  REFUSED_BY_BANK: 'payout_declined',
} as const satisfies Record<SimPayoutRejection, PayoutFailureCode>;

const MESSAGE_OF_FAILURE = {
  account_closed: "The beneficiary's bank reports the account closed.",
  payout_declined: "The beneficiary's bank refused the payout.",
  processing_error: 'The processor could not process the payout.',
} as const satisfies Record<PayoutFailureCode, string>;

export function toPayoutRequest(request: PayoutRequest): SimPayoutRequest {
  const { account } = request;
  return {
    merchant_reference: request.reference,
    amount_minor: request.amount,
    currency: request.currency,
    account: {
      country: account.country,
      number: account.secret,
      bank_code: account.bic ?? account.sortCode ?? account.routingNumber ?? account.ifsc,
      holder_name: request.beneficiary.name,
    },
  };
}

export function isPayout(body: unknown): body is SimPayout {
  const b = body as SimPayout | undefined;
  return typeof b?.payout_id === 'string' && typeof b.merchant_reference === 'string' && (SIM_PAYOUT_STATES as readonly string[]).includes(b.state);
}

export function payoutStateOf(payout: SimPayout): PayoutState {
  const state: SimPayoutState = payout.state;
  switch (state) {
    case 'IN_TRANSIT':
      return { kind: 'pending', connectorReference: payout.payout_id };
    case 'PAID':
      return { kind: 'paid', connectorReference: payout.payout_id };
    case 'REJECTED': {
      const failureCode = FAILURE_OF_REJECTION[payout.rejection ?? 'REFUSED_BY_BANK'];
      return { kind: 'failed', connectorReference: payout.payout_id, failureCode, message: MESSAGE_OF_FAILURE[failureCode] };
    }
    case 'RETURNED': {
      const failureCode = FAILURE_OF_REJECTION[payout.rejection ?? 'ACCOUNT_CLOSED'];
      return { kind: 'returned', connectorReference: payout.payout_id, failureCode, message: `The beneficiary's bank returned the payout: ${MESSAGE_OF_FAILURE[failureCode]}` };
    }
    default:
      return state satisfies never;
  }
}

export const { answer: payoutAnswer, statusAnswer: payoutStatusAnswer } = answersOf(isPayout, payoutStateOf);
