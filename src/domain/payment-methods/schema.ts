// Request and response schemas of saved payment methods. The object never carries the card number,
// the CVC or the network transaction id (kept for merchant-initiated payments only).
import { Type, type Static } from 'typebox';
import { Currency, IdFilter, ListQuery, Metadata, MetadataView, OneOf, Versioned } from '../../kernel/schemas.js';
import { CardInput } from '../payments/schema.js';
import { CARD_BRANDS } from '../payments/cards.js';
import { PAYMENT_METHOD_STATUSES, PAYMENT_METHOD_USAGES } from './state.js';

export const CARD_FUNDINGS = ['credit', 'debit', 'prepaid', 'unknown'] as const;
export type CardFunding = (typeof CARD_FUNDINGS)[number];

const ExpMonth = Type.Integer({ minimum: 1, maximum: 12 });
const ExpYear = Type.Integer({ minimum: 2000, maximum: 2099, description: 'Four digits.' });

export const CreatePaymentMethodBody = Type.Object(
  {
    customer: Type.String({ maxLength: 64, description: 'The customer (cus_) to save the card for.', examples: ['cus_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    card: CardInput,
    usage: Type.String({ enum: [...PAYMENT_METHOD_USAGES], description: '`off_session`: the merchant may later charge it without the customer.' }),
    return_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description:
          'Where the customer comes back to after 3-D Secure, with `payment_method=pm_…` appended. An absolute URL; https in live mode. ' +
          'Without it a card whose issuer needs the customer fails `authentication_required`.',
        examples: ['https://shop.example.com/cards/saved'],
      }),
    ),
    currency: Type.Optional({ ...Currency, description: 'The currency of the zero-amount authorisation, routed as a payment of 0 would be. Default: the first currency the card routing rules name, else USD.' }),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type CreatePaymentMethodBody = Static<typeof CreatePaymentMethodBody>;

export const UpdatePaymentMethodBody = Type.Object(
  {
    exp_month: Type.Optional(ExpMonth),
    exp_year: Type.Optional(ExpYear),
    metadata: Type.Optional({ ...Metadata, description: 'Replaces the whole metadata.' }),
  },
  {
    additionalProperties: false,
    description: 'The card number cannot change (save the new card instead); the new expiry may not be in the past.',
  },
);
export type UpdatePaymentMethodBody = Static<typeof UpdatePaymentMethodBody>;

export const PaymentMethod = Type.Object(
  {
    id: Type.String({ examples: ['pm_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('payment_method'),
    livemode: Type.Boolean(),
    type: Type.Literal('card'),
    customer: Type.String({ description: 'The customer (cus_) the method is saved for.', examples: ['cus_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    usage: Type.String({
      enum: [...PAYMENT_METHOD_USAGES],
      description: '`on_session`: the customer is present to pay with it again; `off_session`: the merchant may also charge it without them.',
    }),
    status: Type.String({
      enum: [...PAYMENT_METHOD_STATUSES],
      description: '`detached` after POST /v1/payment-methods/{id}/detach or the deletion of its customer: its card data is erased (final).',
    }),
    card: Type.Object({
      brand: Type.String({ enum: [...CARD_BRANDS] }),
      last4: Type.String({ examples: ['4242'] }),
      exp_month: Type.Integer(),
      exp_year: Type.Integer(),
      fingerprint: Type.String({ description: 'Equal for the same card number within this account; tells nothing across accounts.' }),
      funding: Type.Union([Type.String({ enum: [...CARD_FUNDINGS] }), Type.Null()], { description: 'When the processor told it.' }),
    }),
    failure_code: Type.Union([Type.String(), Type.Null()], { description: 'Why the verification of a `failed` method failed.' }),
    next_action: Type.Union([Type.Object({ type: Type.Literal('redirect_to_url'), url: Type.String(), return_url: Type.String() }), Type.Null()], {
      description: 'While `requires_action`: where to send the customer (3-D Secure).',
    }),
    metadata: MetadataView,
    ...Versioned(),
  },
  { $id: 'PaymentMethod', title: 'PaymentMethod' },
);
export type PaymentMethodView = Static<typeof PaymentMethod>;

export const ListPaymentMethodsQuery = ListQuery({
  customer: IdFilter,
  status: OneOf(PAYMENT_METHOD_STATUSES),
});
export type ListPaymentMethodsQuery = Static<typeof ListPaymentMethodsQuery>;
