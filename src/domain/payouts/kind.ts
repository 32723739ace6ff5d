// A payout as a money movement (src/movement): sent to a beneficiary's bank along its fixed
// route, the payout id being the bank's idempotency key; its states and rules are in transitions.ts.
import { and, eq } from 'drizzle-orm';
import { connectorError, type ConnectorErrorCode, type PayoutRequest, type PayoutState } from '../../connectors/types.js';
import { toPublicId } from '../../kernel/ids.js';
import { reported, type MovementKind } from '../../movement/kind.js';
import type { Runtime } from '../../runtime.js';
import type { Db } from '../../storage/db.js';
import { beneficiaries, payouts } from '../../storage/schema.js';
import { openBeneficiarySecret } from '../beneficiaries/service.js';
import { PAYOUT_RULES, payoutView, type PayoutRow, type PayoutUpdate } from './transitions.js';

export const payoutKind: MovementKind<PayoutRow, PayoutState, PayoutUpdate, PayoutRequest> = {
  object: 'payout',
  prefix: 'po',
  rules: PAYOUT_RULES,
  route: (row) => row.route,
  send: async (connector, request, signal) =>
    connector.payout ? connector.payout(request, signal) : connectorError('request_rejected', `${connector.name} cannot send payouts`),
  status: async (connector, request, signal) =>
    connector.payoutStatus ? connector.payoutStatus(request, signal) : connectorError('request_rejected', `${connector.name} cannot send payouts`),
  // A bank that paid (or paid and returned) took it, like a succeeded charge.
  attempt: (state) =>
    state.kind === 'failed' ? { kind: 'declined', failureCode: state.failureCode } : { kind: state.kind === 'pending' ? 'pending' : 'succeeded' },
  fromState: (connector, state) =>
    reported(({ pending: 'processing', paid: 'paid', failed: 'failed', returned: 'returned' } as const)[state.kind], connector, state) as PayoutUpdate,
  // No bank took the payout: nothing left the account anywhere.
  nothingDone: (connector: string | null, code: ConnectorErrorCode) => ({
    kind: 'failed',
    connector,
    connectorReference: null,
    failureCode: 'processing_error',
    failureMessage: `No connector could send the payout (${code}).`,
  }),
  // The request went out and no answer came back: the bank may have paid. Verify later.
  unknown: (connector) => ({ kind: 'processing', connector: connector!, connectorReference: null }),
};

/** The payout as its bank needs it, the beneficiary's account number opened for the call only. */
export async function payoutRequest(db: Db, rt: Runtime, row: PayoutRow): Promise<PayoutRequest> {
  const [beneficiary] = await db
    .select()
    .from(beneficiaries)
    .where(and(eq(beneficiaries.accountId, row.accountId), eq(beneficiaries.livemode, row.livemode), eq(beneficiaries.id, row.beneficiaryId)));
  if (!beneficiary) throw new Error(`payout ${row.id} names beneficiary ${row.beneficiaryId}, which does not exist`);
  return {
    reference: toPublicId('po', row.id),
    amount: row.amount,
    currency: row.currency,
    account: {
      country: beneficiary.bankCountry,
      currency: beneficiary.bankCurrency,
      secret: openBeneficiarySecret(rt, beneficiary),
      bic: beneficiary.bankBic,
      sortCode: beneficiary.bankSortCode,
      routingNumber: beneficiary.bankRoutingNumber,
      ifsc: beneficiary.bankIfsc,
    },
    beneficiary: { name: beneficiary.name, type: beneficiary.type },
  };
}
