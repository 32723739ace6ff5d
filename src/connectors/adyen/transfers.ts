// Adyen's Transfers API v4 in our words, for payouts to a beneficiary's bank account: the
// TransferInfo of POST /transfers, the statuses of a Transfer (its answer, GET /transfers/{id},
// GET /transfers?reference=, and the balance platform's transfer webhooks) and its reasons mapped
// onto our payout states and failure codes. Pure: the calls are in payouts.ts.
//
// Why the Transfers API and not the Payout API v68: Adyen's Payout API document says it is
// deprecated and takes no new integrations, and names the Transfers API for sending funds to
// third parties' bank accounts (one API, defined transfer states, a transfer webhook per change).
import type { TransferInfo } from '@adyen/api-library/lib/src/typings/transfers/transferInfo.js';
import type { TransferData } from '@adyen/api-library/lib/src/typings/transferWebhooks/transferData.js';
import type { ConnectorError, PayoutFailureCode, PayoutRequest, PayoutState } from '../types.js';
import { connectorError } from '../types.js';
import { toAdyenAmount } from './money.js';

/** A Transfer as this connector reads it (the API's Transfer and the webhook's TransferData share these fields). */
export type TransferAnswer = Pick<TransferData, 'id' | 'reference' | 'reason'> & { status?: `${TransferData.StatusEnum}` };

type Status = `${TransferData.StatusEnum}`;
type Reason = `${TransferData.ReasonEnum}`;

/** Characters Adyen takes in an account holder's fullName; others are replaced (accents dropped first). */
const NAME_UNSUPPORTED = /[^a-zA-Z0-9,.;:\-—/\\+&!?@()"' ]/g;

function fullName(name: string): string {
  const plain = name.normalize('NFD').replace(/\p{M}/gu, '').replace(NAME_UNSUPPORTED, ' ').replace(/\s+/g, ' ').trim();
  return plain || 'Beneficiary';
}

type Identification = NonNullable<NonNullable<TransferInfo['counterparty']['bankAccount']>['accountIdentification']>;

/** The beneficiary's account as Adyen identifies it, or why Adyen cannot be asked to pay it. */
function identificationOf(account: PayoutRequest['account']): Identification | string {
  const number = account.secret.replace(/\s+/g, '');
  if (account.sortCode) return { type: 'ukLocal', accountNumber: number, sortCode: account.sortCode.replace(/-/g, '') } as Identification;
  if (account.routingNumber) return { type: 'usLocal', accountNumber: number, routingNumber: account.routingNumber } as Identification;
  // The Transfers API has no identification by IFSC (Indian accounts).
  if (account.ifsc) return `Adyen's Transfers API cannot pay ${account.country} accounts identified by IFSC`;
  return { type: 'iban', iban: number.toUpperCase(), ...(account.bic ? { bic: account.bic } : {}) } as Identification;
}

/** POST /transfers for our payout: a bank transfer from the balance account, our payout id as `reference`. */
export function transferInfoOf(request: PayoutRequest, balanceAccountId: string): TransferInfo | ConnectorError {
  const amount = toAdyenAmount(request.amount, request.currency);
  if (!amount.ok) return connectorError('request_rejected', `${amount.problem}; nothing was sent to Adyen`);
  const identification = identificationOf(request.account);
  if (typeof identification === 'string') return connectorError('request_rejected', `${identification}; nothing was sent`);
  const holderType = request.beneficiary.type === 'business' ? 'organization' : request.beneficiary.type === 'individual' ? 'individual' : 'unknown';
  return {
    amount: { currency: request.currency, value: amount.value },
    balanceAccountId,
    category: 'bank',
    counterparty: { bankAccount: { accountHolder: { fullName: fullName(request.beneficiary.name), type: holderType }, accountIdentification: identification } },
    priority: 'regular',
    reference: request.reference,
  } as unknown as TransferInfo;
}

/** Reasons that say more than "the bank refused" (every other reason of a refused or failed transfer is `payout_declined`). */
const FAILURE_OF_REASON: Partial<Record<Reason, PayoutFailureCode>> = {
  counterpartyAccountClosed: 'account_closed',
  counterpartyAccountNotFound: 'account_closed',
  invalidToAccount: 'account_closed',
  // Adyen's own side: the balance account, its limits or its routing, not the beneficiary's bank.
  notEnoughBalance: 'processing_error',
  amountLimitExceeded: 'processing_error',
  accountHierarchyNotActive: 'processing_error',
  balanceAccountTemporarilyBlockedByTransactionRule: 'processing_error',
  declinedByTransactionRule: 'processing_error',
  routeNotFound: 'processing_error',
  unableToRouteTransaction: 'processing_error',
  invalidFromAccount: 'processing_error',
  internalTimeout: 'processing_error',
  error: 'processing_error',
  counterpartyBankTimedOut: 'processing_error',
  counterpartyBankUnavailable: 'processing_error',
  scaAuthenticationRequired: 'processing_error',
};

const failureOf = (reason: Reason | undefined): PayoutFailureCode => (reason && FAILURE_OF_REASON[reason]) || 'payout_declined';

/**
 * Where a payout stands after Adyen's report of its transfer. `booked` (the funds left the balance
 * account for the beneficiary's bank) is paid; `failed` (the beneficiary's bank rejected it) is a
 * failure — reported after `booked`, the payout apply step records it as returned, the money having
 * come back; `returned` (sent back later by that bank) is returned. The other outcomes end it unpaid.
 */
export function payoutStateOf(transfer: TransferAnswer): PayoutState {
  const connectorReference = transfer.id ?? '';
  const status = transfer.status as Status | undefined;
  const reason = transfer.reason as Reason | undefined;
  const because = reason ? ` (${reason})` : '';
  switch (status) {
    case 'booked':
    case 'credited':
      return { kind: 'paid', connectorReference };
    case 'returned':
      return { kind: 'returned', connectorReference, failureCode: failureOf(reason), message: `The beneficiary's bank returned the payout${because}.` };
    case 'failed':
      return { kind: 'failed', connectorReference, failureCode: failureOf(reason), message: `The beneficiary's bank rejected the payout${because}.` };
    case 'refused':
    case 'rejected':
    case 'cancelled':
    case 'expired':
    case 'error':
      return { kind: 'failed', connectorReference, failureCode: failureOf(reason ?? (status === 'error' ? 'error' : undefined)), message: `Adyen did not send the payout: ${status}${because}.` };
    default:
      // received, authorised, approvalPending, bookingPending, pendingExecution, …: not final. The
      // remaining statuses are of card and issuing transfers, never of a bank payout.
      return { kind: 'pending', connectorReference };
  }
}

/** Adyen's RFC 7807 error body (title, detail, errorCode), as much as a message needs. */
export function problemOf(body: unknown): { errorCode?: string; message?: string } {
  const e = (body ?? {}) as { errorCode?: string; detail?: string; title?: string };
  return { errorCode: e.errorCode, message: e.detail ?? e.title };
}
