// Customer actions (3-D Secure, redirects): the customer's way back, through our return endpoint,
// and our page for a processor that wants its form posted. Both are reached without an API key
// (the customer's browser), so each is opened only by the payment's random action token, and the
// return endpoint never takes an outcome from the request: the query and form fields are handed
// to the processor (`completeAction`, which verifies them with its own keys) or ignored (a plain
// status check), and only the processor's answer is applied, through the movement core.
import { paymentStates } from './state.js';
import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { callConnector } from '../../connectors/router.js';
import type { ChargeState, CustomerAction } from '../../connectors/types.js';
import { ApiError } from '../../kernel/errors.js';
import { parseId, toPublicId } from '../../kernel/ids.js';
import { applyState } from '../../movement/apply.js';
import type { Runtime } from '../../runtime.js';
import type { Db } from '../../storage/db.js';
import { payments } from '../../storage/schema.js';
import { systemContext } from '../../events/service.js';
import { paymentKind } from './kind.js';
import { attemptReference } from './cascade.js';
import type { PaymentRow } from './transitions.js';

export function sameSecret(given: string, held: string | null): boolean {
  if (held === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(held);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** The payment whose action token is `token`; the same 404 for an unknown id and a wrong token. */
async function paymentByToken(db: Db, id: string, token: string): Promise<PaymentRow> {
  const uuid = parseId('pay', id);
  // The customer's browser carries no account: the payment is found by its id alone, then its token.
  const [row] = uuid ? await db.select().from(payments).where(eq(payments.id, uuid)) : [];
  if (!row || !sameSecret(token, row.actionToken)) throw new ApiError('resource_missing', { message: 'No such customer action.' });
  return row;
}

/** Where the merchant's page gets the customer back: its return_url with the payment id appended. */
function merchantReturn(row: PaymentRow): string {
  const url = new URL(row.returnUrl!);
  url.searchParams.set('payment', toPublicId('pay', row.id));
  return url.href;
}

/**
 * The customer is back from the processor's page: asks the processor for the outcome (its
 * completeAction with what it appended, or a status check), applies it, and answers where to send
 * the customer. A processor that cannot answer now leaves the payment to its webhook and the worker.
 */
export async function returnFromAction(db: Db, rt: Runtime, id: string, token: string, params: Record<string, string>): Promise<string> {
  const row = await paymentByToken(db, id, token);
  if (!paymentStates.is(row.status, 'withCustomer') || row.connector === null) return merchantReturn(row);
  const connector = row.connector;
  const ctx = systemContext(row.accountId, row.livemode);
  // The processor holds the attempt the customer is completing under that attempt's reference (cascade.ts).
  const request = { reference: attemptReference(row), connectorReference: row.connectorReference, params };
  const guarded = await callConnector<ChargeState | { kind: 'not_found' }>(
    rt.callsFor(ctx),
    connector,
    (c, signal) => (c.completeAction ? c.completeAction(request, signal) : c.chargeStatus(request, signal)),
    'payment.complete_action',
  );
  if (!('skipped' in guarded) && guarded.result.kind !== 'error' && guarded.result.kind !== 'not_found') {
    await applyState(db, rt, paymentKind, ctx, row.id, connector, guarded.result);
  }
  return merchantReturn(row);
}

/** What our page posts for a POST action: the processor's page and fields; undefined once nothing waits. */
export async function pendingAction(db: Db, id: string, token: string): Promise<CustomerAction | undefined> {
  const row = await paymentByToken(db, id, token);
  return paymentStates.is(row.status, 'withCustomer') ? (row.customerAction ?? undefined) : undefined;
}

/**
 * The cardholder's answer on a simulated processor's challenge page (card 4000000000003220): the
 * sandbox settles its charge and reports it (webhook, status); the customer then goes on to the
 * charge's return URL — our return endpoint, which asks the processor like for any other. Only a
 * URL of ours is followed; undefined when the sandbox knows no such challenge.
 */
export async function answerSimulatorChallenge(
  rt: Runtime,
  name: string,
  reference: string,
  challengeId: string,
  outcome: 'completed' | 'failed',
): Promise<{ next: string | null } | undefined> {
  const connector = rt.connectors.registry.get(name);
  const controls = connector && rt.connectors.testControlsOf(connector);
  if (!controls) return undefined;
  const answer = await controls.answerChallenge(reference, challengeId, outcome, AbortSignal.timeout(rt.config.connectorTimeoutMs));
  if (answer.kind === 'not_found') return undefined;
  if (answer.kind === 'error') throw new ApiError('processor_unavailable', { message: `The simulated processor ${name} could not take the answer; retry.` });
  // A payment's return endpoint, or a card verification's (src/domain/payment-methods/actions.ts).
  const ours = answer.returnUrl !== null && [`${rt.publicUrl()}/v1/payments/`, `${rt.publicUrl()}/v1/payment-methods/`].some((p) => answer.returnUrl!.startsWith(p));
  return { next: ours ? answer.returnUrl : null };
}
