// The catalogue of event types: every type the service can emit, what it means and which object
// its `data.object` holds. `recordEvent` takes only these names, so an event type that is not
// catalogued does not compile; the OpenAPI document (one schema and one `webhooks` entry per type),
// GET /v1/event-types, the check of webhook endpoints' enabled_events and `cli trigger` are all
// read from here.
import { ApiError } from '../kernel/errors.js';
import { closest } from '../kernel/closest.js';

/** The objects events carry, by their `object` name, with the $id of their schema. */
export const EVENT_OBJECTS = {
  payment_order: 'PaymentOrder',
  payment: 'Payment',
  refund: 'Refund',
  capture: 'Capture',
  dispute: 'Dispute',
  payout: 'Payout',
  mandate: 'Mandate',
  beneficiary: 'Beneficiary',
  customer: 'Customer',
  payment_method: 'PaymentMethod',
  webhook_endpoint: 'WebhookEndpoint',
  webhook_test: 'WebhookTest',
  balance_transaction: 'BalanceTransaction',
  reconciliation_run: 'ReconciliationRun',
} as const;
export type EventObject = keyof typeof EVENT_OBJECTS;

export interface EventTypeEntry {
  /** The `object` of the event's `data.object`. */
  object: EventObject;
  description: string;
}

const on = <O extends EventObject>(object: O, description: string) => ({ object, description });

export const EVENT_TYPES = {
  'payment_order.created': on('payment_order', 'A payment order was created; it is open for payment.'),
  'payment_order.processing': on('payment_order', 'A payment was started on the order, which waits for its outcome. Committed with the payment.created event.'),
  'payment_order.open': on('payment_order', 'The payment on the order failed; the order is open again and can take another payment. Committed with payment.failed.'),
  'payment_order.paid': on('payment_order', 'A payment of the order succeeded: the order is paid (final). Committed with payment.succeeded.'),
  'payment_order.cancelled': on('payment_order', 'The open order was cancelled (POST /v1/payment-orders/{id}/cancel); final.'),
  'payment_order.expired': on('payment_order', 'The order was still open at its expires_at and the worker expired it; final.'),

  'payment.created': on('payment', "A payment was created (pending) and is being sent to its route's connectors."),
  'payment.pending': on('payment', 'A connector accepted the payment and its outcome comes later (processor webhook, status check or test helper).'),
  'payment.requires_action': on(
    'payment',
    'The processor needs the customer (3-D Secure, a redirect): send them to next_action.url. The outcome comes later (succeeded, or failed authentication_failed).',
  ),
  'payment.succeeded': on(
    'payment',
    "The payment succeeded (final); its amount less the account's fee is credited to available, or to pending until its settlement date (then balance.available).",
  ),
  'payment.authorized': on(
    'payment',
    'A manual payment was authorised (requires_capture): the processor holds amount_capturable until capture_before. Nothing is booked until it is captured.',
  ),
  'payment.canceled': on('payment', 'The authorisation was voided (final): cancellation_reason says why (expired: past capture_before); its order is open again.'),
  'payment.failed': on('payment', 'The payment failed (final): failure_code says why (a decline, processing_error…); its order is open again.'),

  'refund.created': on('refund', 'A refund was created (pending); its amount is reserved from the available balance.'),
  'refund.pending': on('refund', 'A connector accepted the refund and its outcome comes later.'),
  'refund.succeeded': on('refund', 'The refund succeeded (final): the money went back to the customer.'),
  'refund.failed': on('refund', 'The refund failed (final): its amount returns to the available balance and to what the payment can still refund.'),

  'capture.created': on('capture', 'A capture was created (pending): its amount is taken from the authorisation, and it goes to the processor.'),
  'capture.succeeded': on('capture', "The capture succeeded (final): its amount is added to the payment's amount_captured and booked like a payment."),
  'capture.failed': on('capture', 'The capture failed (final): failure_code says why (capture_declined, authorization_expired…); nothing was taken.'),

  'dispute.created': on('dispute', "The processor reported a cardholder's chargeback (or an inquiry: warning_needs_response) of a payment. Written once per processor dispute."),
  'dispute.updated': on(
    'dispute',
    'An open dispute changed: its status (evidence submitted: under_review), its deadline, or the worker warns that evidence_due_by is less than three days away (evidence_due_soon: true).',
  ),
  'dispute.closed': on('dispute', 'The dispute reached won, lost or accepted. A lost or accepted dispute keeps its funds out of the balance; a won one has them back (dispute.funds_reinstated).'),
  'dispute.funds_withdrawn': on('dispute', "The processor withdrew the disputed amount: it and the account's dispute fee (fee) left the balance, pending money first, then available (which may go negative)."),
  'reconciliation_run.completed': on(
    'reconciliation_run',
    "A reconciliation run compared a connector account's settlement records with the ledger: matched counts, exceptions lists what differs, fees_booked the processor fees it booked.",
  ),
  'dispute.funds_reinstated': on('dispute', 'The processor gave the disputed amount back (a won dispute): it returned to available, with the dispute fee where the processor gives its own back.'),

  'payout.created': on('payout', 'A payout was created (pending), its amount reserved from the available balance.'),
  'payout.processing': on('payout', "The payout was sent to the bank; only the bank's answer moves it on."),
  'payout.paid': on('payout', "The bank paid the payout; the beneficiary's bank may still return it."),
  'payout.failed': on('payout', 'The bank refused the payout (final); the reserved amount returns to available.'),
  'payout.cancelled': on('payout', 'The pending payout was cancelled before it was sent (final); the reserved amount returns to available.'),
  'payout.returned': on('payout', "The beneficiary's bank sent a paid payout back (final); the amount returns to available."),

  'mandate.created': on('mandate', "A mandate was created (pending) and is being set up with the customer's bank."),
  'mandate.pending': on('mandate', 'A connector accepted the mandate and the bank answers later.'),
  'mandate.active': on('mandate', 'The bank accepted the mandate: it can be debited.'),
  'mandate.failed': on('mandate', 'The bank refused the mandate (final); failure_code says why.'),
  'mandate.revoked': on('mandate', 'The mandate was revoked (final), by the merchant (POST /v1/mandates/{id}/revoke) or by the customer through their bank.'),
  'mandate.expired': on('mandate', 'The active mandate went unused for MANDATE_DORMANCY_DAYS and the worker expired it (final).'),

  'beneficiary.created': on('beneficiary', 'A beneficiary was created (active).'),
  'beneficiary.updated': on('beneficiary', "A beneficiary's name, email or metadata changed."),
  'beneficiary.disabled': on('beneficiary', 'The beneficiary was deleted through the API: disabled, kept for the history of its payouts (final).'),

  'customer.created': on('customer', 'A customer was created.'),
  'customer.updated': on('customer', "A customer's email, name, reference or metadata changed."),
  'customer.deleted': on(
    'customer',
    'The customer was deleted (DELETE /v1/customers/{id}); data.object is its last state. Every payment method it held was detached first, in the same transaction (one payment_method.detached each).',
  ),

  'payment_method.attached': on('payment_method', "A card was saved for a customer and is usable (active): its verification succeeded (POST /v1/payment-methods, written when it becomes active, after 3-D Secure if asked)."),
  'payment_method.updated': on('payment_method', "A saved card's expiry or metadata changed."),
  'payment_method.detached': on(
    'payment_method',
    'The saved card was detached (POST /v1/payment-methods/{id}/detach, or its customer was deleted): its card data is erased and it can no longer be used (final).',
  ),

  'balance.available': on(
    'balance_transaction',
    "Pending money became available: a payment's net reached its settlement date (available_on) and the worker moved it from pending to available. data.object is that movement's balance transaction (type settlement, source the payment); sent once per payment.",
  ),

  'webhook_endpoint.enabled': on('webhook_endpoint', 'A disabled webhook endpoint was enabled again (PATCH status: enabled).'),
  'webhook_endpoint.disabled': on('webhook_endpoint', 'A webhook endpoint was disabled: disabled_reason is requested (through the API), gone (it answered 410) or failing (no success for days).'),
  'webhook_endpoint.test': on(
    'webhook_test',
    'A synthetic event sent by POST /v1/test-helpers/webhook-endpoints/{id}/send straight to that endpoint, whatever its enabled_events. Never stored: GET /v1/events does not list it.',
  ),
} as const satisfies Record<string, EventTypeEntry>;

export type EventType = keyof typeof EVENT_TYPES;
export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES) as EventType[];

/**
 * The statuses `s` of an object for which `${object}.${s}` is a catalogued event type: what code
 * that writes an event named after a status may move the object to.
 */
export type EventStatus<O extends string> = EventType extends infer T ? (T extends `${O}.${infer S}` ? S : never) : never;

export function isEventType(name: string): name is EventType {
  return Object.hasOwn(EVENT_TYPES, name);
}

/** `*` matches every type, `<prefix>.*` every type under the prefix, anything else itself (as the delivery queue matches). */
export function matchesEventPattern(pattern: string, type: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  return type === pattern;
}

const RESOURCE_PATTERNS = [...new Set(EVENT_TYPE_NAMES.map((t) => `${t.split('.')[0]}.*`))];

/**
 * Refuses a list of event types and patterns (a webhook endpoint's enabled_events) with a typed
 * 400 naming the first element that matches no catalogued type and the nearest valid one, since
 * an endpoint subscribed to a misspelt type would silently never hear anything.
 */
export function checkEventPatterns(patterns: readonly string[], param: string): void {
  patterns.forEach((pattern, i) => {
    if (EVENT_TYPE_NAMES.some((type) => matchesEventPattern(pattern, type))) return;
    const suggestion = closest(pattern, pattern.endsWith('.*') ? RESOURCE_PATTERNS : EVENT_TYPE_NAMES);
    const what = pattern.includes('*') ? 'matches no event type' : 'is not an event type';
    throw new ApiError('parameter_invalid', {
      param: `${param}.${i}`,
      message: `${param}.${i} ${JSON.stringify(pattern)} ${what}; did you mean ${JSON.stringify(suggestion)}? GET /v1/event-types lists them.`,
    });
  });
}
