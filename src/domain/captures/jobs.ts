// The worker's part of captures. (1) Pending captures are checked with their processor when their
// check time comes, as pending voids are (src/domain/voids/jobs.ts): one whose answer was lost, or
// whose request crashed after the processor took it, is found there and settled; one the processor
// never took is sent again under the same capture id (its idempotency key: never captured twice);
// one the processor confirms by notification (Adyen) stays pending until it comes. (2) An
// authorisation partly captured (non-final captures only) and past capture_before can no longer be
// voided — Adyen's /cancels and our simulators release only what nothing was captured from, and a
// Stripe PaymentIntent is captured once — and the processor lets the rest lapse with the
// authorisation: the payment is closed at what was captured (succeeded, amount_capturable 0, its
// order paid with amount_paid = captured), as a final capture would have left it.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { captures, payments } from '../../storage/schema.js';
import type { Runtime } from '../../runtime.js';
import { systemContext } from '../../events/service.js';
import { lockRow } from '../../movement/apply.js';
import { moveTo } from '../../movement/transition.js';
import { checkAll, checkMovement, claimPendingChecks } from '../../movement/worker.js';
import { paymentStates } from '../payments/state.js';
import { PAYMENT_RULES, type PaymentRow } from '../payments/transitions.js';
import { captureKind, captureRequest } from './kind.js';
import type { CaptureRow } from './view.js';

/** One pass: checks up to `batch` due captures with their processor. */
export async function runCaptureChecks(db: Db, rt: Runtime, batch = 50): Promise<number> {
  const due = await claimPendingChecks<CaptureRow>(db, rt, captures, batch);
  await checkAll(due, (row) =>
    checkMovement(db, rt, captureKind, row, { overdue: false, whenNowhere: 'send', whenUnknown: 'send', request: () => captureRequest(db, row) }),
  );
  return due.length;
}

/**
 * Closes a lapsed authorisation something was captured from at what was captured; false when it
 * was settled meanwhile (a capture's answer, another worker) or a capture of it is on its way.
 */
export function closeAtCaptured(db: Db, rt: Runtime, p: { accountId: string; livemode: boolean; id: string }): Promise<boolean> {
  return db.transaction(async (tx) => {
    const payment = await lockRow<PaymentRow>(tx, payments, p.accountId, p.livemode, p.id);
    if (!payment || !paymentStates.is(payment.status, 'authorized') || payment.amountCaptured === 0) return false;
    const [capturing] = await tx
      .select({ id: captures.id })
      .from(captures)
      .where(and(eq(captures.accountId, p.accountId), eq(captures.livemode, p.livemode), eq(captures.paymentId, p.id), eq(captures.status, 'pending')));
    if (capturing) return false;
    await moveTo(tx, PAYMENT_RULES, systemContext(p.accountId, p.livemode), payment, 'succeeded', 'close a lapsed authorisation', rt.now(), { amountCapturable: 0 });
    return true;
  });
}
