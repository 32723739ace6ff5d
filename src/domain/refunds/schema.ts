// Request and response schemas of refunds.
import { Type, type Static } from 'typebox';
import { Amount, IdFilter, ListQuery, Metadata, OneOf, Versioned, bodyExamples } from '../../kernel/schemas.js';
import { REFUND_FAILURE_CODES } from '../../connectors/types.js';
import { REFUND_STATUSES } from './state.js';

export const REFUND_REASONS = ['requested_by_customer', 'duplicate', 'fraudulent'] as const;

export const CreateRefundBody = Type.Object(
  {
    payment: Type.String({ minLength: 1, maxLength: 64, description: 'The succeeded payment to refund (pay_…).' }),
    amount: Type.Optional({ ...Amount, description: 'Default: all that remains refundable.' }),
    reason: Type.Optional(Type.String({ enum: [...REFUND_REASONS] })),
    metadata: Type.Optional(Metadata),
  },
  {
    additionalProperties: false,
    ...bodyExamples({
      refund: { summary: 'Refund part of a payment', value: { payment: 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa', amount: 500, reason: 'requested_by_customer' } },
    }),
  },
);
export type CreateRefundBody = Static<typeof CreateRefundBody>;

export const Refund = Type.Object(
  {
    id: Type.String({ examples: ['ref_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('refund'),
    livemode: Type.Boolean(),
    status: Type.String({ enum: [...REFUND_STATUSES] }),
    amount: Amount,
    currency: Type.String(),
    payment: Type.String(),
    reason: Type.Union([Type.String({ enum: [...REFUND_REASONS] }), Type.Null()]),
    connector: Type.String(),
    connector_reference: Type.Union([Type.String(), Type.Null()]),
    failure_code: Type.Union([Type.String({ enum: [...REFUND_FAILURE_CODES] }), Type.Null()]),
    failure_message: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.String()),
    ...Versioned(),
  },
  { $id: 'Refund', title: 'Refund' },
);
export type RefundView = Static<typeof Refund>;

export const ListRefundsQuery = ListQuery({ status: OneOf(REFUND_STATUSES), payment: IdFilter });
export type ListRefundsQuery = Static<typeof ListRefundsQuery>;
