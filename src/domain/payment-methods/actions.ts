// The customer's way back from 3-D Secure asked during a card verification: the return endpoint
// GET|POST /v1/payment-methods/{id}/return/{token}, opened by the method's random action token (the
// browser carries no API key). As for payments (src/domain/payments/actions.ts), nothing of the
// request is taken as an outcome: what the processor appended is handed to it (verificationStatus
// with `params`, which its own keys verify), and only its answer is applied, through the movement
// core; then the customer goes on to the merchant's return_url.
import { eq } from 'drizzle-orm';
import { callConnector } from '../../connectors/router.js';
import type { VerificationState } from '../../connectors/types.js';
import { ApiError } from '../../kernel/errors.js';
import { parseId, toPublicId } from '../../kernel/ids.js';
import { applyState } from '../../movement/apply.js';
import type { Runtime } from '../../runtime.js';
import type { Db } from '../../storage/db.js';
import { paymentMethods } from '../../storage/schema.js';
import { systemContext } from '../../events/service.js';
import { sameSecret } from '../payments/actions.js';
import { verificationKind } from './kind.js';
import type { PaymentMethodRow } from './service.js';
import { paymentMethodStates } from './state.js';

/** Where the merchant's page gets the customer back: its return_url with the method's id appended. */
function merchantReturn(row: PaymentMethodRow): string {
  const url = new URL(row.returnUrl!);
  url.searchParams.set('payment_method', toPublicId('pm', row.id));
  return url.href;
}

export async function returnFromVerification(db: Db, rt: Runtime, id: string, token: string, params: Record<string, string>): Promise<string> {
  const uuid = parseId('pm', id);
  // Found by its id alone (no account in a browser's request), then its token: the same 404 for both.
  const [row] = uuid ? await db.select().from(paymentMethods).where(eq(paymentMethods.id, uuid)) : [];
  if (!row || !sameSecret(token, row.actionToken)) throw new ApiError('resource_missing', { message: 'No such customer action.' });
  if (!paymentMethodStates.is(row.status, 'verifying') || row.connector === null) return merchantReturn(row);
  const connector = row.connector;
  const ctx = systemContext(row.accountId, row.livemode);
  const request = { reference: toPublicId('pm', row.id), connectorReference: row.connectorReference, params };
  const guarded = await callConnector<VerificationState | { kind: 'not_found' }>(
    rt.callsFor(ctx),
    connector,
    (c, signal) => (c.verificationStatus ? c.verificationStatus(request, signal) : Promise.resolve({ kind: 'not_found' as const })),
    'payment_method.complete_action',
  );
  if (!('skipped' in guarded) && guarded.result.kind !== 'error' && guarded.result.kind !== 'not_found') {
    await applyState<PaymentMethodRow>(db, rt, verificationKind, ctx, row.id, connector, guarded.result);
  }
  return merchantReturn(row);
}
