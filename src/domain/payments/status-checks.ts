// The worker's status checks of pending payments (and those waiting for their customer) and
// refunds, on the movement core: claimed when their check time comes (src/movement/worker.ts),
// then verified with their processor.
//
// A payment that no connector has taken is one whose request crashed between the phases: once
// its retry window is over, the route's connectors are asked whether one holds the charge (it is
// adopted) or none does (the payment fails as abandoned and its order reopens). Where the one
// connector that may hold it cannot be asked but replays sends (Adyen), the worker sends it there
// again, under the same key, with the card the payment kept in the vault (in-flight.ts) and no
// CVC. A payment sent without an answer (timeout) that its processor still does not know once
// overdue fails the same way. A refund never received is sent again: the processor dedupes by the
// refund id, and no card data is needed.
import { paymentStates } from './state.js';
import type { Db } from '../../storage/db.js';
import { payments, refunds } from '../../storage/schema.js';
import type { Runtime } from '../../runtime.js';
import type { ChargeRequest } from '../../connectors/types.js';
import { systemContext } from '../../events/service.js';
import { checkAll, checkMovement, claimPendingChecks } from '../../movement/worker.js';
import { abandonAfterMs } from '../../movement/saga.js';
import { ACTION_EXPIRED, type PaymentRow } from './transitions.js';
import { ABANDONED, paymentKind, unbooked } from './kind.js';
import { chargeRequest } from './new-payment.js';
import { callsOf } from './cascade.js';
import { replayRecordOf } from './in-flight.js';
import { savedCardUseOf, unsealedCharge, unsealForPayment } from './saved-cards.js';
import { refundKind, refundRequest } from '../refunds/kind.js';
import type { RefundRow } from '../refunds/transitions.js';

/** One pass: checks up to `batch` due payments and refunds; returns how many were checked. */
export async function runStatusChecks(db: Db, rt: Runtime, batch = 50): Promise<{ payments: number; refunds: number }> {
  const duePayments = await claimPendingChecks<PaymentRow>(db, rt, payments, batch, ['pending', 'requires_action']);
  await checkAll(duePayments, (row) =>
    checkMovement(db, rt, paymentKind, row, {
      overdue: rt.now().getTime() - row.createdAt.getTime() >= abandonAfterMs(rt, callsOf(row.route, row.cascade)),
      whenNowhere: 'abandon',
      whenUnknown: 'fail',
      abandoned: ABANDONED,
      unbooked,
      request: replayRequestOf(db, rt, row),
      // A customer action left waiting past ACTION_TIMEOUT_MS: failed after this last check, so its order reopens.
      expired: paymentStates.is(row.status, 'withCustomer') && row.actionExpiresAt !== null && rt.now() >= row.actionExpiresAt ? ACTION_EXPIRED : undefined,
    }),
  );
  const dueRefunds = await claimPendingChecks<RefundRow>(db, rt, refunds, batch);
  await checkAll(dueRefunds, (row) =>
    checkMovement(db, rt, refundKind, row, { overdue: false, whenNowhere: 'send', whenUnknown: 'send', request: () => refundRequest(db, row) }),
  );
  return { payments: duePayments.length, refunds: dueRefunds.length };
}

/**
 * What the worker sends again for a payment it may replay: the kept card unsealed for it (its audit
 * row naming the payment, committed before the call), without a CVC. Undefined for a payment that
 * keeps no card (a direct debit, a typed card on a route whose processors are asked).
 */
function replayRequestOf(db: Db, rt: Runtime, row: PaymentRow): (() => Promise<ChargeRequest>) | undefined {
  const record = replayRecordOf(row);
  if (record === undefined) return undefined;
  const ctx = systemContext(row.accountId, row.livemode);
  return async () =>
    chargeRequest(row, savedCardUseOf(row) ? await unsealedCharge(db, rt, ctx, row, undefined) : { card: { ...(await unsealForPayment(db, rt, ctx, row, record)), cvc: '' } }, rt.publicUrl());
}
