// A payout as a money movement (src/movement): sent to a beneficiary's bank along its fixed
// route, the payout id being the bank's idempotency key (its calls: src/connectors/movements/payout.ts);
// its states and rules are in transitions.ts.
import { and, eq } from 'drizzle-orm';
import type { PayoutRequest, PayoutState } from '../../connectors/types.js';
import { PAYOUT_CALLS } from '../../connectors/movements/payout.js';
import { toPublicId } from '../../kernel/ids.js';
import { plannedRoute, type MovementKind } from '../../movement/kind.js';
import type { Runtime } from '../../runtime.js';
import type { Db } from '../../storage/db.js';
import { beneficiaries } from '../../storage/schema.js';
import { openBeneficiarySecret } from '../beneficiaries/service.js';
import { PAYOUT_RULES, type PayoutRow, type PayoutUpdate } from './transitions.js';

export const payoutKind: MovementKind<PayoutRow, PayoutState, PayoutUpdate, PayoutRequest> = {
  ...PAYOUT_CALLS,
  object: 'payout',
  prefix: 'po',
  rules: PAYOUT_RULES,
  route: plannedRoute,
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
