// POST /v1/payment-methods: a card saved without paying, verified by an account-verification
// (zero-amount) authorisation at a connector of the route, run by the movement engine
// (src/movement/engine.ts) like a payment: phase 1 inserts the method `pending` with its card
// sealed in the vault, phase 2 calls the connectors with no transaction open (our pm_ id as the
// processor's idempotency key), phase 3 records the outcome — `active` (payment_method.attached),
// `requires_action`, or `failed` (its sealed card erased at once: a declined card saves nothing
// usable). A retry with the same Idempotency-Key resumes a request interrupted between phases.
// docs/customers.md tells the whole story.
import crypto from 'node:crypto';
import type { Db, Executor } from '../../storage/db.js';
import { paymentMethods } from '../../storage/schema.js';
import { newId, toPublicId } from '../../kernel/ids.js';
import { ApiError } from '../../kernel/errors.js';
import { idParam } from '../../kernel/pagination.js';
import type { RequestContext } from '../../kernel/context.js';
import type { CardDetails, CardVerificationRequest } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import type { NewMovement } from '../../movement/engine.js';
import { abandonAfterMs } from '../../movement/saga.js';
import { onlySimulated, routingFor, type Routing } from '../routing/targets.js';
import { planMovementRoute } from '../routing/planner.js';
import { verificationGivesNetworkId } from '../../connectors/catalogue.js';
import { requireTestCard, summarizeCard, validateCard } from '../payments/cards.js';
import { lockCustomerForUse } from '../customers/store.js';
import { customerUrl } from '../../kernel/customer-urls.js';
import type { CreatePaymentMethodBody } from './schema.js';
import type { PaymentMethodRow } from './service.js';
import type { PaymentMethodUsage } from './state.js';
import { verificationKind } from './kind.js';

/** The currency a verification defaults to when the request names none. */
export const DEFAULT_VERIFICATION_CURRENCY = 'USD';

/** The account's first card currency: the first one its card routing rules name, in rule order. */
function defaultCurrency(routing: Routing): string {
  const named = routing.rules.filter((r) => !r.payment_method_types || r.payment_method_types.includes('card')).flatMap((r) => r.currencies ?? []);
  return named[0] ?? DEFAULT_VERIFICATION_CURRENCY;
}

/**
 * The route of a verification: the card route for an amount of 0, only connectors that verify
 * cards, those whose verification answers a network transaction id first (a later off-session
 * payment cites it, at whichever processor), in the route's order otherwise.
 */
function verificationRoute(rt: Runtime, routing: Routing, currency: string): string[] {
  const target = (key: string) => routing.targets.find((t) => t.key === key);
  const verifies = (key: string) => target(key)?.capabilities?.card_verification === true;
  const planned = planMovementRoute(rt, routing, { need: 'card', currency, amount: 0 }).filter(verifies);
  const givesId = (key: string) => verificationGivesNetworkId(target(key)?.connector ?? key);
  const route = [...planned.filter(givesId), ...planned.filter((key) => !givesId(key))];
  if (route.length === 0) {
    throw new ApiError('routing_no_match', {
      param: 'currency',
      message: `No connector of this account and mode verifies ${currency} cards; see GET /v1/routing and the connectors' card_verification capability.`,
    });
  }
  if (!route.some((name) => rt.connectors.breaker.isAvailable(name))) {
    throw new ApiError('processor_unavailable', { message: `Every connector of the route (${route.join(', ')}) is failing; nothing was saved. Retry later.` });
  }
  return route;
}

/** The return endpoint of a verification: where the processor sends the customer back after 3-D Secure (actions.ts). */
export function verificationReturnUrl(base: string, row: Pick<PaymentMethodRow, 'id' | 'actionToken'>): string {
  return `${base}/v1/payment-methods/${toPublicId('pm', row.id)}/return/${row.actionToken}`;
}

function verificationRequest(rt: Runtime, row: PaymentMethodRow, card: CardDetails): CardVerificationRequest {
  const request = { reference: toPublicId('pm', row.id), currency: row.currency!, card, usage: row.usage };
  return row.actionToken === null ? request : { ...request, returnUrl: verificationReturnUrl(rt.publicUrl(), row) };
}

/** POST /v1/payment-methods as the engine runs it (runMovement): the card checked at once, then the verification's admit rule and what it sends. */
export function newPaymentMethod(db: Db, rt: Runtime, ctx: RequestContext, input: CreatePaymentMethodBody): NewMovement<PaymentMethodRow, CardVerificationRequest> {
  const customerId = idParam('cus', 'customer', input.customer);
  const card: CardDetails = { number: input.card.number, expMonth: input.card.exp_month, expYear: input.card.exp_year, cvc: input.card.cvc };
  const resuming = ctx.idempotency?.recoveryPoint !== undefined;
  validateCard(card, ctx.livemode, rt.now(), { resuming, param: 'card' });
  const returnUrl = input.return_url === undefined ? null : customerUrl(input.return_url, 'return_url', ctx.livemode);
  return {
    kind: verificationKind,
    // The retry carries the same card (its Idempotency-Key fingerprint covers it): the CVC is never kept to send again.
    resend: async (row) => verificationRequest(rt, row, card),
    plan: async () => {
      const routing = await routingFor(db, rt, ctx);
      const currency = input.currency ?? defaultCurrency(routing);
      const route = verificationRoute(rt, routing, currency);
      requireTestCard(card, ctx.livemode, onlySimulated(routing, route), 'card');
      return {
        admit: (tx, now) => insertPending(tx, rt, ctx, { customerId, card, usage: input.usage as PaymentMethodUsage, currency, route, returnUrl, metadata: input.metadata }, now),
        missing: async () => new ApiError('resource_missing', { param: 'customer', message: `No such customer: '${input.customer}'.` }),
        request: (row) => verificationRequest(rt, row, card),
      };
    },
  };
}

interface PendingInput {
  customerId: string;
  card: CardDetails;
  usage: PaymentMethodUsage;
  currency: string;
  route: string[];
  returnUrl: string | null;
  metadata?: Record<string, string>;
}

/**
 * The admit rule: the customer share-locked (a concurrent DELETE waits, then detaches this method
 * too) and not deleted, the card sealed in the vault, the method inserted pending.
 */
async function insertPending(tx: Executor, rt: Runtime, ctx: RequestContext, input: PendingInput, now: Date): Promise<PaymentMethodRow | undefined> {
  if (!(await lockCustomerForUse(tx, ctx, input.customerId))) return undefined;
  const summary = summarizeCard(input.card, rt.fingerprintKey, ctx.accountId);
  const vaultRecordId = await rt.vault.seal(tx, ctx, { number: input.card.number, expMonth: input.card.expMonth, expYear: input.card.expYear }, 'payment_method');
  const [row] = await tx
    .insert(paymentMethods)
    .values({
      accountId: ctx.accountId,
      id: newId('pm').uuid,
      livemode: ctx.livemode,
      customerId: input.customerId,
      usage: input.usage,
      status: 'pending',
      cardBrand: summary.brand,
      cardLast4: summary.last4,
      cardExpMonth: summary.exp_month,
      cardExpYear: summary.exp_year,
      cardFingerprint: summary.fingerprint,
      vaultRecordId,
      currency: input.currency,
      route: input.route,
      returnUrl: input.returnUrl,
      actionToken: input.returnUrl === null ? null : crypto.randomBytes(24).toString('base64url'),
      metadata: input.metadata ?? {},
      // Only a verification abandoned by a crashed request is still without a connector by then.
      nextStatusCheckAt: new Date(now.getTime() + abandonAfterMs(rt, input.route.length)),
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return row;
}

/**
 * A failed verification keeps its summary (the answer names it) but not its card: the sealed
 * record is erased once the failure is recorded. Best effort after the answer is stored; a
 * method left failed with its record (a crash here) still has it erased when detached.
 */
