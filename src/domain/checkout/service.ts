// The hosted checkout (docs/checkout-and-dashboard.md): a customer's browser, holding only an order's checkout token,
// pays that order by card. The token finds the order (and nothing else); from there every step is
// the API's own: the payment is created as POST /v1/payments creates it (newPayment) under the order's account and mode, with
// an Idempotency-Key of the form's own (so a form sent twice pays once and shows the same answer),
// routed, recorded and announced exactly as POST /v1/payments does.
import { and, count, desc, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { accounts, checkoutTokenRoutes, paymentOrders, payments } from '../../storage/schema.js';
import { checkoutTokenAccount } from '../payment-orders/checkout-token.js';
import { parseId, toPublicId } from '../../kernel/ids.js';
import { ApiError } from '../../kernel/errors.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { claimKey, fingerprint, keepOrReleaseKey } from '../../idempotency/store.js';
import type { CardDetails } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import type { PaymentOrderRow } from '../payment-orders/service.js';
import { newPayment } from '../payments/service.js';
import { runMovement } from '../../movement/engine.js';
import { redactCardForFingerprint } from '../payments/cards.js';
import type { PaymentRow } from '../payments/transitions.js';
import type { CreatePaymentBody, PaymentView } from '../payments/schema.js';

/**
 * Payments one order may have: anyone holding the URL can send cards to it, and a checkout that
 * takes cards without end is a tool for testing stolen card numbers.
 */
export const MAX_PAYMENTS_PER_ORDER = 20;
/** The form's own attempt id, part of its Idempotency-Key. */
export const ATTEMPT_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;

export interface Checkout {
  order: PaymentOrderRow;
  merchantName: string;
  /** The merchant's support contact (accounts update --support-email); null: none given. */
  supportEmail: string | null;
}

/** The order whose checkout token is `token`, with its merchant's name and contact; undefined for anything unknown. */
export async function findCheckout(db: Db, token: string): Promise<Checkout | undefined> {
  const named = checkoutTokenAccount(token);
  if (named === undefined) return undefined;
  // The browser carries no account but the token's own; an older token's is in a reference table.
  const accountId = named ?? (await db.select().from(checkoutTokenRoutes).where(eq(checkoutTokenRoutes.token, token)))[0]?.accountId;
  if (!accountId) return undefined;
  const [row] = await db
    .select({ order: paymentOrders, merchantName: accounts.name, supportEmail: accounts.supportEmail, accountStatus: accounts.status })
    .from(paymentOrders)
    .innerJoin(accounts, eq(accounts.id, paymentOrders.accountId))
    .where(and(eq(paymentOrders.accountId, accountId), eq(paymentOrders.checkoutToken, token)));
  // A suspended merchant takes no payments through the API; its checkout is gone as well.
  if (!row || row.accountStatus !== 'active') return undefined;
  return { order: row.order, merchantName: row.merchantName, supportEmail: row.supportEmail };
}

/** A payment of the checkout's order by its public id; undefined for any other (another order's, account's or mode's). */
export async function checkoutPayment(db: Db, checkout: Checkout, id: string): Promise<PaymentRow | undefined> {
  const uuid = parseId('pay', id);
  if (!uuid) return undefined;
  const { order } = checkout;
  const [row] = await db
    .select()
    .from(payments)
    .where(and(eq(payments.accountId, order.accountId), eq(payments.livemode, order.livemode), eq(payments.id, uuid), eq(payments.paymentOrderId, order.id)));
  return row;
}

/**
 * The order's payment still waiting for an outcome (pending, or for the customer at their bank),
 * or authorised under the order's manual capture method, waiting for the merchant's capture; if any.
 */
export async function inFlightPayment(db: Db, checkout: Checkout): Promise<PaymentRow | undefined> {
  const { order } = checkout;
  const [row] = await db
    .select()
    .from(payments)
    .where(and(eq(payments.accountId, order.accountId), eq(payments.livemode, order.livemode), eq(payments.paymentOrderId, order.id), inArray(payments.status, ['pending', 'requires_action', 'requires_capture'])))
    .orderBy(desc(payments.id))
    .limit(1);
  return row;
}

export type CheckoutResult = { kind: 'payment'; payment: PaymentView } | { kind: 'refused'; code: string; message: string; param: string | null };

export interface CheckoutSettings {
  idempotencyRetentionS: number;
}

/** What the customer sent: the card, whether they ticked the consent box to save it, the form's attempt id. */
export interface CheckoutForm {
  card: CardDetails;
  saveCard: boolean;
  attempt: string;
}

/**
 * Pays the checkout's order with the form's card as POST /v1/payments does. `attempt` is the form's random id:
 * the same form sent again (a double click, a reload of the POST) replays the first answer; the
 * payment's return_url is the checkout itself, so a customer action comes back to it. The card is
 * saved for the order's customer only when the order asks for it and the customer ticked the box.
 */
export async function payCheckout(db: Db, rt: Runtime, settings: CheckoutSettings, checkout: Checkout, form: CheckoutForm, requestId: string): Promise<CheckoutResult> {
  const { card, attempt } = form;
  const { order } = checkout;
  if (!ATTEMPT_PATTERN.test(attempt)) throw new ApiError('parameter_invalid', { param: 'attempt', message: 'The form is incomplete; reload the page.' });
  const ctx: RequestContext = { accountId: order.accountId, livemode: order.livemode, requestId };
  const [made] = await db
    .select({ n: count() })
    .from(payments)
    .where(and(eq(payments.accountId, order.accountId), eq(payments.livemode, order.livemode), eq(payments.paymentOrderId, order.id)));
  if ((made?.n ?? 0) >= MAX_PAYMENTS_PER_ORDER) {
    throw new ApiError('rate_limited', { message: 'This order has had too many payment attempts; ask the shop for help.' });
  }
  const input: CreatePaymentBody = {
    payment_order: toPublicId('ord', order.id),
    payment_method: { type: 'card', card: { number: card.number, exp_month: card.expMonth, exp_year: card.expYear, cvc: card.cvc } },
    return_url: order.checkoutUrl!,
    metadata: { source: 'checkout' },
    ...(form.saveCard ? savingOf(order) : {}),
  };
  const key = `checkout_${attempt}`;
  // Fingerprinted as the API fingerprints a payment: card data only as keyed digests.
  const print = fingerprint('POST', '/v1/payments', redactCardForFingerprint(rt.fingerprintKey)(input));
  const claim = await claimKey(db, ctx, key, print, { retentionS: settings.idempotencyRetentionS, lockTimeoutS: rt.idempotencyLockTimeoutS, encryptor: rt.encryptor });
  if (claim.kind === 'replay') return resultOf(claim.outcome);
  ctx.idempotency = claim.claim;
  let outcome: Outcome;
  try {
    outcome = await runMovement(db, rt, ctx, newPayment(db, rt, ctx, input));
  } catch (err) {
    await settleKey(db, ctx, err);
    throw err;
  }
  return resultOf(outcome);
}

/** The saving the order offers, as a payment asks for it; nothing when it offers none. */
function savingOf(order: PaymentOrderRow): Pick<CreatePaymentBody, 'customer' | 'setup_future_usage'> {
  if (order.setupFutureUsage === null || order.customerId === null) return {};
  return { customer: toPublicId('cus', order.customerId), setup_future_usage: order.setupFutureUsage };
}

/**
 * A payment that ended in an error settles its key as the API's error path does (src/http/key-after-error.ts).
 * A key taken over by another request is no longer ours; a key that cannot be settled now (the
 * database away) unlocks by itself after the lock timeout.
 */
async function settleKey(db: Db, ctx: RequestContext, err: unknown): Promise<void> {
  if (err instanceof ApiError && err.code === 'idempotency_key_in_use') return;
  const error = err instanceof ApiError ? err : new ApiError('internal_error');
  await keepOrReleaseKey(db, ctx, { status: error.status, body: JSON.stringify(error.body(ctx.requestId)) }).catch(() => undefined);
}

function resultOf(outcome: Outcome): CheckoutResult {
  const body = JSON.parse(outcome.body) as PaymentView & { error?: { code: string; message: string; param?: string } };
  if (outcome.status < 300) return { kind: 'payment', payment: body };
  const error = body.error!;
  return { kind: 'refused', code: error.code, message: error.message, param: error.param ?? null };
}
