// Request and response schemas of payments: validation, handler types and OpenAPI at once.
import { CANCELLATION_REASONS } from '../voids/state.js';
import { Type, type Static } from 'typebox';
import { Amount, IdFilter, ListQuery, Metadata, OneOf, Timestamp, Versioned, bodyExamples } from '../../kernel/schemas.js';
import { ATTEMPT_OUTCOMES } from '../../connectors/router.js';
import { CAPTURE_METHODS, PAYMENT_FAILURE_CODES } from '../../connectors/types.js';
import { CARD_BRANDS } from './cards.js';
import { PAYMENT_STATUSES } from './state.js';
import { DECLINE_TYPES } from '../../kernel/decline-types.js';

const DeclineTypeOrNull = (description: string) => Type.Union([Type.String({ enum: [...DECLINE_TYPES] }), Type.Null()], { description });
import { PAYMENT_METHOD_USAGES } from '../payment-methods/state.js';
import { Capture } from '../captures/schema.js';
import { RoutingExplanation } from '../routing/schema.js';

export const CardInput = Type.Object(
  {
    number: Type.String({ pattern: '^[0-9]{12,19}$', description: 'The card number, digits only. Never stored, logged or returned.', examples: ['4242424242424242'] }),
    exp_month: Type.Integer({ minimum: 1, maximum: 12 }),
    exp_year: Type.Integer({ minimum: 2000, maximum: 2200, description: 'Four digits.' }),
    cvc: Type.String({ pattern: '^[0-9]{3,4}$', description: '3 or 4 digits. Never stored, logged or returned.' }),
  },
  { additionalProperties: false },
);

export const CardMethodInput = Type.Object(
  { type: Type.Literal('card', { description: 'A card payment.' }), card: CardInput },
  { additionalProperties: false, $id: 'CardPaymentMethodInput', title: 'CardPaymentMethodInput' },
);

export const MandateMethodInput = Type.Object(
  {
    type: Type.Literal('mandate', { description: 'A direct debit against a mandate.' }),
    mandate: Type.String({
      minLength: 1,
      maxLength: 64,
      description: "An active mandate (mdt_…) of the order's currency whose max_amount allows the order's amount.",
    }),
  },
  { additionalProperties: false, $id: 'MandatePaymentMethodInput', title: 'MandatePaymentMethodInput' },
);

export const SavedCardMethodInput = Type.Object(
  {
    type: Type.Literal('saved_card', { description: "A card the customer saved (docs/customers.md), kept in the service's vault." }),
    saved_card: Type.Object(
      {
        id: Type.String({ minLength: 1, maxLength: 64, description: 'The saved payment method (pm_…), active.' }),
        cvc: Type.Optional(Type.String({ pattern: '^[0-9]{3,4}$', description: 'The CVC collected again from a present customer. Never stored, logged or returned.' })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, $id: 'SavedCardPaymentMethodInput', title: 'SavedCardPaymentMethodInput' },
);

/**
 * One of the methods, told apart by `type` (a discriminator, so generated clients get a tagged
 * union, and the validator checks the branch `type` names — its errors name that branch's fields).
 */
const PaymentMethodInput = Type.Unsafe<Static<typeof CardMethodInput> | Static<typeof MandateMethodInput> | Static<typeof SavedCardMethodInput>>({
  type: 'object',
  oneOf: [Type.Ref('CardPaymentMethodInput'), Type.Ref('MandatePaymentMethodInput'), Type.Ref('SavedCardPaymentMethodInput')],
  discriminator: {
    propertyName: 'type',
    mapping: {
      card: '#/components/schemas/CardPaymentMethodInput',
      mandate: '#/components/schemas/MandatePaymentMethodInput',
      saved_card: '#/components/schemas/SavedCardPaymentMethodInput',
    },
  },
  description: '`card`: give `card`. `mandate`: a direct debit, give `mandate`. `saved_card`: a saved card, give `saved_card`.',
});

export const CreatePaymentBody = Type.Object(
  {
    payment_order: Type.String({ minLength: 1, maxLength: 64, description: 'The open payment order to pay (ord_…).' }),
    payment_method: PaymentMethodInput,
    return_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description:
          'Where the customer comes back to after a customer action (3-D Secure, a redirect), with `payment=pay_…` appended. ' +
          'An absolute URL; https in live mode. Without it a payment whose processor needs the customer fails `authentication_required`.',
        examples: ['https://shop.example.com/checkout/done'],
      }),
    ),
    customer: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'The customer (cus_…) the card is saved for; needs `setup_future_usage`.' }),
    ),
    setup_future_usage: Type.Optional(
      Type.String({
        enum: [...PAYMENT_METHOD_USAGES],
        description:
          'Card payments: save the card for `customer` once the payment succeeded (`payment_method_saved`). `on_session`: the customer will be present to pay again; ' +
          '`off_session`: the merchant may also charge it without the customer (subscriptions, top-ups, no-shows).',
      }),
    ),
    off_session: Type.Optional(
      Type.Boolean({ description: 'With a `saved_card` saved for off_session: a merchant-initiated payment, the customer absent (never a customer action: a processor asking for 3-D Secure fails it authentication_required).' }),
    ),
    off_session_reason: Type.Optional(Type.String({ enum: ['unscheduled', 'subscription'], description: 'Why the merchant charges the absent customer; default `unscheduled`.' })),
    capture_method: Type.Optional(
      Type.String({
        enum: [...CAPTURE_METHODS],
        description: "automatic: taken when authorised; manual: authorised only, captured later (`POST /v1/payments/{id}/capture`). Default: the payment order's `capture_method`.",
      }),
    ),
    metadata: Type.Optional(Metadata),
  },
  {
    additionalProperties: false,
    ...bodyExamples({
      card: { summary: 'Pay with a test card', value: { payment_order: 'ord_01jd8x3v0pe7wbz0m4k6f2n9qa', payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' } } } },
      save: {
        summary: 'Pay with a card and save it for the customer',
        value: { payment_order: 'ord_01jd8x3v0pe7wbz0m4k6f2n9qa', payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' } }, customer: 'cus_01jd8x3v0pe7wbz0m4k6f2n9qa', setup_future_usage: 'off_session' },
      },
      off_session: {
        summary: 'Charge a saved card without the customer',
        value: { payment_order: 'ord_01jd8x3v0pe7wbz0m4k6f2n9qa', payment_method: { type: 'saved_card', saved_card: { id: 'pm_01jd8x3v0pe7wbz0m4k6f2n9qa' } }, off_session: true, off_session_reason: 'subscription' },
      },
      mandate: { summary: 'Debit an active mandate', value: { payment_order: 'ord_01jd8x3v0pe7wbz0m4k6f2n9qa', payment_method: { type: 'mandate', mandate: 'mdt_01jd8x3v0pe7wbz0m4k6f2n9qa' } } },
    }),
  },
);
export type CreatePaymentBody = Static<typeof CreatePaymentBody>;

export const PaymentAttempt = Type.Object({
  connector: Type.String(),
  outcome: Type.String({ enum: [...ATTEMPT_OUTCOMES] }),
  error_code: Type.Union([Type.String(), Type.Null()], { description: 'Why a declined, failed or skipped attempt ended as it did.' }),
  decline_type: DeclineTypeOrNull('What a refusal says about trying again; null for a success, a skip, or an outcome that is not known (a timeout after sending, a 5xx).'),
  duration_ms: Type.Number(),
  started_at: Timestamp,
});

export const Payment = Type.Object(
  {
    id: Type.String({ examples: ['pay_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('payment'),
    livemode: Type.Boolean(),
    status: Type.String({ enum: [...PAYMENT_STATUSES] }),
    amount: Amount,
    currency: Type.String(),
    amount_refunded: Type.Integer({ minimum: 0, description: 'Sum of the pending and succeeded refunds.' }),
    capture_method: Type.String({ enum: [...CAPTURE_METHODS], description: "automatic: taken when authorised; manual: held until captured (docs/authorise-and-capture.md)." }),
    amount_capturable: Type.Integer({ minimum: 0, description: 'What the authorisation still holds for captures (requires_capture); 0 otherwise.' }),
    amount_captured: Type.Integer({ minimum: 0, description: 'What was taken: the amount once an automatic payment succeeded, the sum of succeeded captures of a manual one.' }),
    capture_before: Type.Union([Timestamp, Type.Null()], { description: 'When the authorisation lapses (requires_capture); null otherwise.' }),
    cancellation_reason: Type.Union([Type.String({ enum: [...CANCELLATION_REASONS] }), Type.Null()], { description: 'Why a canceled payment was voided (expired: its authorisation lapsed).' }),
    captures: Type.Array(Capture, { description: "The captures of a manual payment's authorisation, oldest first (also GET /v1/captures?payment=…); none for an automatic payment." }),
    disputed: Type.Boolean({ description: 'Whether its cardholder disputed it (a chargeback, or a notice of one): see disputes and docs/disputes.md.' }),
    disputes: Type.Array(Type.String({ examples: ['dp_01jd8x3v0pe7wbz0m4k6f2n9qa'] }), { description: 'Its disputes (dp_…), oldest first (also GET /v1/disputes?payment=…); none for a payment never disputed.' }),
    payment_order: Type.String(),
    payment_method: Type.Union([
      Type.Object({
        type: Type.Literal('card'),
        card: Type.Object({
          brand: Type.String({ enum: [...CARD_BRANDS] }),
          last4: Type.String(),
          exp_month: Type.Integer(),
          exp_year: Type.Integer(),
          fingerprint: Type.String({ description: 'The same card gives the same fingerprint within an account.' }),
        }),
      }),
      Type.Object({
        type: Type.Literal('mandate'),
        mandate: Type.String({ description: 'The mandate debited (mdt_…).' }),
        scheme: Type.String({ enum: ['sepa_core', 'bacs', 'ach'] }),
        last4: Type.String({ description: "The last four characters of the mandate's account." }),
      }),
    ]),
    payment_method_saved: Type.Union([Type.String(), Type.Null()], {
      description: 'The payment method (pm_…) the card was saved as, once a payment with `setup_future_usage` succeeded; null otherwise.',
    }),
    connector: Type.Union([Type.String(), Type.Null()], { description: 'The connector that took the payment; null while none has.' }),
    connector_reference: Type.Union([Type.String(), Type.Null()], { description: "The processor's own id for the charge." }),
    attempts: Type.Array(PaymentAttempt, { description: 'Every call to a connector, and every connector skipped (circuit open), in order.' }),
    routing: Type.Union([RoutingExplanation, Type.Null()], { description: 'Why the payment went where it went; null for payments made before it was kept.' }),
    failure_code: Type.Union([Type.String({ enum: [...PAYMENT_FAILURE_CODES] }), Type.Null()]),
    failure_message: Type.Union([Type.String(), Type.Null()]),
    decline_type: DeclineTypeOrNull('A failed payment: what its last refusal says about trying again (docs/declines.md); null otherwise.'),
    next_action: Type.Union(
      [
        Type.Object({
          type: Type.Literal('redirect_to_url'),
          url: Type.String({ description: "Send the customer's browser here (a GET): the processor's page, or ours that takes them on to it." }),
          return_url: Type.String({ description: 'The return_url of the payment, where the customer lands afterwards.' }),
        }),
        Type.Null(),
      ],
      { description: 'Set while the status is `requires_action`: what the customer must do before the processor decides; null otherwise.' },
    ),
    return_url: Type.Union([Type.String(), Type.Null()], { description: 'The return_url given at creation.' }),
    metadata: Type.Record(Type.String(), Type.String()),
    ...Versioned('Increases by one with every change; order webhooks by it.'),
  },
  { $id: 'Payment', title: 'Payment' },
);
export type PaymentView = Static<typeof Payment>;

export const RetrievePaymentQuery = Type.Object(
  {
    refresh: Type.Optional(
      Type.Boolean({ default: false, description: 'Ask the connector for the current state of a pending payment first, and apply it.' }),
    ),
  },
  { additionalProperties: false },
);

export const ListPaymentsQuery = ListQuery({ status: OneOf(PAYMENT_STATUSES), payment_order: IdFilter });
export type ListPaymentsQuery = Static<typeof ListPaymentsQuery>;

export const ResolvePaymentBody = Type.Object(
  { outcome: Type.String({ enum: ['succeeded', 'failed'], description: 'How the simulated processor settles the pending charge.' }) },
  { additionalProperties: false },
);
export type ResolvePaymentBody = Static<typeof ResolvePaymentBody>;
