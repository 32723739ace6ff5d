// Request and response schemas of payment orders: validation, handler types and OpenAPI at once.
import { Type, type Static } from 'typebox';
import { Amount, Currency, ListQuery, Metadata, MetadataView, OneOf, Timestamp, Versioned, bodyExamples } from '../../kernel/schemas.js';
import { PAYMENT_ORDER_STATUSES } from './state.js';
import { CAPTURE_METHODS } from '../../connectors/types.js';
import { PAYMENT_METHOD_USAGES } from '../payment-methods/state.js';

const CustomerUrl = (description: string, example: string) =>
  Type.String({ minLength: 1, maxLength: 2048, description: `${description} An absolute URL; https in live mode.`, examples: [example] });

export const CreatePaymentOrderBody = Type.Object(
  {
    amount: Amount,
    currency: Currency,
    reference: Type.String({ minLength: 1, maxLength: 128, description: "The caller's own reference for the order." }),
    customer: Type.Object(
      {
        id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'A customer (cus_) of this account and mode; the order copies its email and name.', examples: ['cus_01jd8x3v0pe7wbz0m4k6f2n9qa'] })),
        email: Type.Optional(Type.String({ format: 'email', maxLength: 254, description: 'Required unless `id` names a customer; not allowed with it.' })),
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Not allowed with `id`.' })),
      },
      { additionalProperties: false, description: 'Who pays: `email` (and `name`), or `id` of a customer (cus_), whose email and name the order copies.' },
    ),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    capture_method: Type.Optional(
      Type.String({ enum: [...CAPTURE_METHODS], description: 'How its payments take the money: at once (automatic, the default), or authorised to be captured later (manual; docs/authorise-and-capture.md).' }),
    ),
    setup_future_usage: Type.Optional(
      Type.String({
        enum: [...PAYMENT_METHOD_USAGES],
        description:
          'Needs `customer.id`. The hosted checkout then offers the customer to save the card for that use (a consent box saying what you may do with it); ' +
          'ticked, the payment saves it (`payment_method_saved`); unticked, nothing is saved. `on_session`: the customer will be present to pay again; ' +
          '`off_session`: you may also charge it without the customer (docs/customers.md).',
      }),
    ),
    metadata: Type.Optional(Metadata),
    expires_at: Type.Optional(
      Type.String({ format: 'date-time', description: 'When an unpaid order expires: in the future, at most 30 days ahead. Default: 24 hours after creation.' }),
    ),
    success_url: Type.Optional(CustomerUrl('Where the hosted checkout sends the customer once the order is paid.', 'https://shop.example.com/orders/1042/thanks')),
    cancel_url: Type.Optional(CustomerUrl('Where the hosted checkout sends a customer who gives up (the order stays open).', 'https://shop.example.com/cart')),
  },
  {
    additionalProperties: false,
    ...bodyExamples({
      order: { summary: 'An order of 19.99 EUR', value: { amount: 1999, currency: 'EUR', reference: 'order-1042', customer: { email: 'jane@example.com', name: 'Jane Doe' } } },
    }),
  },
);
export type CreatePaymentOrderBody = Static<typeof CreatePaymentOrderBody>;

export const PaymentOrder = Type.Object(
  {
    id: Type.String({ examples: ['ord_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('payment_order'),
    livemode: Type.Boolean(),
    status: Type.String({ enum: [...PAYMENT_ORDER_STATUSES] }),
    amount: Amount,
    amount_paid: Type.Integer({ minimum: 0 }),
    currency: Type.String(),
    reference: Type.String(),
    customer: Type.Object({
      id: Type.Union([Type.String(), Type.Null()], { description: 'The customer (cus_) the order named, or null.' }),
      email: Type.String(),
      name: Type.Union([Type.String(), Type.Null()]),
    }),
    description: Type.Union([Type.String(), Type.Null()]),
    capture_method: Type.String({ enum: [...CAPTURE_METHODS] }),
    setup_future_usage: Type.Union([Type.String({ enum: [...PAYMENT_METHOD_USAGES] }), Type.Null()], {
      description: 'What the hosted checkout offers to save the card for, with the customer\'s consent; null: it offers nothing.',
    }),
    metadata: MetadataView,
    expires_at: Timestamp,
    checkout_url: Type.Union([Type.String(), Type.Null()], {
      description:
        'The hosted checkout of this order: send the customer here to pay it by card (and pass 3-D Secure) on a page served by this ' +
        'service, so card numbers never reach your server. Opened by a secret token; treat the URL like one. Null only for orders ' +
        'created before the checkout existed.',
      examples: ['https://pay.example.com/checkout/AZKj3vY8cdd5bsWv0Fmd0A.Hq3V0pe7wbz0m4k6f2n9qaY1cR8sTt2uXvWz5aBcDeF'],
    }),
    success_url: Type.Union([Type.String(), Type.Null()]),
    cancel_url: Type.Union([Type.String(), Type.Null()]),
    ...Versioned('Increases by one with every change; order webhooks by it.'),
  },
  { $id: 'PaymentOrder', title: 'PaymentOrder' },
);
export type PaymentOrderView = Static<typeof PaymentOrder>;

export const ListPaymentOrdersQuery = ListQuery({
  status: OneOf(PAYMENT_ORDER_STATUSES),
  reference: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
});
export type ListPaymentOrdersQuery = Static<typeof ListPaymentOrdersQuery>;
