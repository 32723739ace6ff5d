// What a new payment is made of, shared by the general path (service.ts) and the one-statement
// path (one-statement.ts): the payment method as given, the route, the new row and the request sent.
import crypto from 'node:crypto';
import { newId, toPublicId } from '../../kernel/ids.js';
import { customerUrl } from '../../kernel/customer-urls.js';
import type { RequestContext } from '../../kernel/context.js';
import type { CaptureMethod, CardDetails, ChargeRequest } from '../../connectors/types.js';
import { inJsonbOrder } from '../../storage/jsonb.js';
import type { Runtime } from '../../runtime.js';
import { abandonAfterMs } from '../../movement/saga.js';
import type { Routing } from '../routing/targets.js';
import { cascadeOf, planExplainedRoute } from '../routing/planner.js';
import { segmentOutcomes, type SegmentOutcomes } from '../routing/stats.js';
import type { Ranked } from '../routing/strategy.js';
import type { CascadeRule } from '../../storage/routing-rules.js';
import { attemptFields, callsOf } from './cascade.js';
import type { PaymentOrderRow } from '../payment-orders/service.js';
import type { MandateRow } from '../mandates/transitions.js';
import { cardBrand, summarizeCard, validateCard } from './cards.js';
import { returnEndpointUrl, type PaymentRow } from './transitions.js';
import type { CreatePaymentBody } from './schema.js';
import { NEW_PAYMENT_STATUS } from './state.js';
import { storedCredentialOf } from './saving.js';

type OrderRow = PaymentOrderRow;

/** A payment and its order as its first phase committed them. */
export interface CommittedPayment {
  payment: PaymentRow;
  order: OrderRow;
}

/** The payment method as given: a card (checked, in memory only) or a mandate's id. */
export type MethodInput = { type: 'card'; card: CardDetails } | { type: 'mandate'; id: string } | { type: 'saved_card'; id: string; cvc?: string };

/** What the connector is sent besides the amount: the card, or the mandate as the processor knows it. */
export type ChargeMethod = Pick<ChargeRequest, 'card' | 'mandate' | 'merchantInitiated'>;

export function methodOf(input: CreatePaymentBody, livemode: boolean, now: Date, resuming: boolean): MethodInput {
  const method = input.payment_method;
  // The body schema admits each type with its own field alone (a discriminated oneOf).
  if (method.type === 'mandate') return { type: 'mandate', id: method.mandate };
  if (method.type === 'saved_card') return { type: 'saved_card', id: method.saved_card.id, cvc: method.saved_card.cvc };
  const given = method.card;
  const card = { number: given.number, expMonth: given.exp_month, expYear: given.exp_year, cvc: given.cvc };
  validateCard(card, livemode, now, { resuming });
  return { type: 'card', card };
}

export function debitOf(mandate: MandateRow): ChargeMethod {
  return { mandate: { connectorReference: mandate.connectorReference!, scheme: mandate.scheme } };
}

/** The card brand of a payment's segment (routing/stats.ts); null for a direct debit. */
export function segmentBrandOf(method: MethodInput, saved?: { cardBrand: string | null }): string | null {
  return method.type === 'card' ? cardBrand(method.card.number) : method.type === 'saved_card' ? (saved?.cardBrand ?? null) : null;
}

/**
 * The route for a payment of `order` and why (routing/planner.ts); a typed 422 when the amount
 * alone leaves it empty. `outcomes`: the window's (routing/stats.ts), when a rule routes by success rate.
 */
export function planPaymentRoute(
  rt: Runtime,
  routing: Routing,
  order: OrderRow,
  methodType: MethodInput['type'],
  segment: { brand: string | null; country: string | null },
  outcomes?: readonly SegmentOutcomes[],
): Ranked {
  // A saved card is a card: any card connector of the route may charge it (the card is in our vault).
  const need = methodType === 'saved_card' ? 'card' : methodType;
  // The issuing country is known only once a processor has reported it for a saved card (there is
  // no BIN table): a typed card, and a saved card not yet charged, are in the unknown segment.
  const stats = outcomes && segmentOutcomes(outcomes, { card_brand: segment.brand, currency: order.currency, issuing_country: segment.country });
  return planExplainedRoute(rt, routing, { need, currency: order.currency, amount: order.amount }, { amountLimitParam: 'payment_order', stats });
}

/** The cascade of the rule that routes a payment of `order` (cascade.ts); null: a decline ends it. */
export function planPaymentCascade(routing: Routing, order: OrderRow, methodType: MethodInput['type']): CascadeRule | null {
  if (methodType === 'mandate') return null;
  return cascadeOf(routing, { need: 'card', currency: order.currency, amount: order.amount }) ?? null;
}

/** Whether some connector of the route may be tried now (its circuit is not open). */
export function routeAvailable(rt: Runtime, route: readonly string[]): boolean {
  return route.some((name) => rt.connectors.breaker.isAvailable(name));
}

/** The payment's capture method: its own when the request gives one, else its order's (what the hosted checkout pays by). */
export function captureMethodOf(input: Pick<CreatePaymentBody, 'capture_method'>, order: OrderRow): CaptureMethod {
  return (input.capture_method as CaptureMethod | undefined) ?? order.captureMethod;
}

/** A new payment of `order`, pending and not yet taken by any connector. */
export function newPaymentRow(
  rt: Runtime,
  ctx: RequestContext,
  order: OrderRow,
  captureMethod: CaptureMethod,
  paymentMethod: Record<string, unknown>,
  { route, explanation }: Ranked,
  metadata: Record<string, string>,
  now: Date,
  returnUrl: string | null = null,
  cascade: CascadeRule | null = null,
): PaymentRow {
  return {
    accountId: ctx.accountId,
    id: newId('pay').uuid,
    livemode: ctx.livemode,
    paymentOrderId: order.id,
    status: NEW_PAYMENT_STATUS,
    amount: order.amount,
    currency: order.currency,
    amountRefunded: 0,
    captureMethod,
    amountCapturable: 0,
    amountCaptured: 0,
    disputeCount: 0,
    captureBefore: null,
    cancellationReason: null,
    declineType: null,
    attemptNumber: 1,
    cascade,
    paymentMethod,
    route,
    routing: explanation,
    connector: null,
    connectorReference: null,
    attempts: [],
    failureCode: null,
    failureMessage: null,
    metadata: inJsonbOrder(metadata),
    // Only a payment abandoned by a crashed request is still without a connector by then.
    nextStatusCheckAt: new Date(now.getTime() + abandonAfterMs(rt, callsOf(route, cascade))),
    returnUrl,
    // Only a payment that can bring its customer back has our return endpoint, reached with this secret.
    actionToken: returnUrl === null ? null : crypto.randomBytes(24).toString('base64url'),
    customerAction: null,
    nextActionUrl: null,
    actionExpiresAt: null,
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/** What a card payment keeps of its card: brand, last4, expiry and the keyed fingerprint. */
export function cardPaymentMethod(rt: Runtime, ctx: RequestContext, card: CardDetails): Record<string, unknown> {
  return { type: 'card', card: summarizeCard(card, rt.config.cardFingerprintKey, ctx.accountId) };
}

/**
 * Validates the payment method of a new (not resumed) request; throws the typed 400 of the first
 * problem found.
 */
export function newPaymentMethod(input: CreatePaymentBody, ctx: RequestContext, now: Date): MethodInput {
  return methodOf(input, ctx.livemode, now, false);
}

/** `publicUrl`: the service's PUBLIC_BASE_URL, base of our return endpoint given to the processor. */
export function chargeRequest(row: PaymentRow, method: ChargeMethod, publicUrl: string): ChargeRequest {
  const request: ChargeRequest = { ...attemptFields(row), amount: row.amount, currency: row.currency, captureMethod: row.captureMethod, ...method, ...storedCredentialOf(row) };
  return row.actionToken === null ? request : { ...request, returnUrl: returnEndpointUrl(publicUrl, row) };
}

/** The merchant's return_url of a new payment, checked: absolute http(s), https in live mode; null when not given. */
export function returnUrlOf(input: CreatePaymentBody, livemode: boolean): string | null {
  return input.return_url === undefined ? null : customerUrl(input.return_url, 'return_url', livemode);
}
