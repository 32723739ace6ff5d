// Request and response schemas of payouts and their test helper.
import { Type, type Static } from 'typebox';
import { Amount, Currency, IdFilter, ListQuery, Metadata, MetadataView, OneOf, Versioned } from '../../kernel/schemas.js';
import { PAYOUT_FAILURE_CODES } from '../../connectors/types.js';
import { PaymentAttempt } from '../payments/schema.js';
import { PAYOUT_STATUSES } from './state.js';

export const CreatePayoutBody = Type.Object(
  {
    beneficiary: Type.String({ minLength: 1, maxLength: 64, description: 'The active beneficiary to pay (ben_…).' }),
    amount: Amount,
    currency: { ...Currency, description: "Must be the currency of the beneficiary's bank account (422 currency_mismatch otherwise)." },
    reference: Type.String({ minLength: 1, maxLength: 128, description: "Your reference; banks show it to the beneficiary where they can." }),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type CreatePayoutBody = Static<typeof CreatePayoutBody>;

// Every movement's attempts are recorded alike (src/connectors/router.ts attemptOf).
const AttemptSchema = PaymentAttempt;

export const Payout = Type.Object(
  {
    id: Type.String({ examples: ['po_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('payout'),
    livemode: Type.Boolean(),
    status: Type.String({
      enum: [...PAYOUT_STATUSES],
      description:
        'pending (amount reserved, not yet sent; cancellable) → processing (sent to the bank) → paid | failed; pending → cancelled; ' +
        'paid → returned (the beneficiary bank sent it back). failed, cancelled and returned give the amount back to the available balance.',
    }),
    amount: Amount,
    currency: Type.String(),
    beneficiary: Type.String(),
    reference: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    connector: Type.Union([Type.String(), Type.Null()], { description: 'The connector that took the payout; null until one has.' }),
    connector_reference: Type.Union([Type.String(), Type.Null()]),
    attempts: Type.Array(AttemptSchema, { description: 'Every call to a connector while submitting, fallbacks included.' }),
    failure_code: Type.Union([Type.String({ enum: [...PAYOUT_FAILURE_CODES] }), Type.Null()]),
    failure_message: Type.Union([Type.String(), Type.Null()]),
    metadata: MetadataView,
    ...Versioned(),
  },
  { $id: 'Payout', title: 'Payout' },
);
export type PayoutView = Static<typeof Payout>;

export const ListPayoutsQuery = ListQuery({
  status: OneOf(PAYOUT_STATUSES),
  beneficiary: IdFilter,
  reference: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
});
export type ListPayoutsQuery = Static<typeof ListPayoutsQuery>;

export const ResolvePayoutBody = Type.Object(
  {
    outcome: Type.String({
      enum: ['paid', 'failed', 'returned'],
      description: 'paid or failed settle a payout the bank holds in transit; returned has the bank send back a paid (or in-transit) payout.',
    }),
  },
  { additionalProperties: false },
);
export type ResolvePayoutBody = Static<typeof ResolvePayoutBody>;
