// Request and response schemas of mandates: validation, handler types and OpenAPI at once.
import { Type, type Static } from 'typebox';
import { Amount, Currency, ListQuery, Metadata, MetadataView, OneOf, Timestamp, Versioned } from '../../kernel/schemas.js';
import { MANDATE_FAILURE_CODES, MANDATE_SCHEMES } from '../../connectors/types.js';
import type { BankAccountInput, BankAccountView } from '../bank-accounts/schema.js';
import { PaymentAttempt } from '../payments/schema.js';
import { MANDATE_STATUSES } from './state.js';

export const CreateMandateBody = Type.Object(
  {
    customer: Type.Object(
      {
        email: Type.String({ format: 'email', maxLength: 254 }),
        name: Type.String({ minLength: 1, maxLength: 256, description: 'The account holder, as the bank knows them.' }),
      },
      { additionalProperties: false },
    ),
    bank_account: Type.Unsafe<BankAccountInput>(Type.Ref('BankAccountInput')),
    scheme: Type.String({
      enum: [...MANDATE_SCHEMES],
      description: '`sepa_core`: an IBAN in a SEPA country, EUR. `bacs`: a GB account, GBP. `ach`: a US account, USD.',
    }),
    currency: Currency,
    reference: Type.String({ minLength: 1, maxLength: 128, description: "The caller's own reference for the mandate (shown to the customer by their bank)." }),
    max_amount: Type.Optional({ ...Amount, description: 'The largest amount one debit may take, in minor units. Unset: no limit.' }),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type CreateMandateBody = Static<typeof CreateMandateBody>;

export const Mandate = Type.Object(
  {
    id: Type.String({ examples: ['mdt_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('mandate'),
    livemode: Type.Boolean(),
    status: Type.String({ enum: [...MANDATE_STATUSES] }),
    scheme: Type.String({ enum: [...MANDATE_SCHEMES] }),
    currency: Type.String(),
    reference: Type.String(),
    max_amount: Type.Union([Type.Integer(), Type.Null()], { description: 'The largest amount one debit may take; null: no limit.' }),
    customer: Type.Object({ email: Type.String(), name: Type.String() }),
    bank_account: Type.Unsafe<BankAccountView>(Type.Ref('BankAccount')),
    connector: Type.Union([Type.String(), Type.Null()], { description: 'The connector holding the mandate; its debits go there.' }),
    connector_reference: Type.Union([Type.String(), Type.Null()], { description: "The processor's own id for the mandate." }),
    attempts: Type.Array(PaymentAttempt, { description: 'Every call to a connector to set the mandate up, and every connector skipped, in order.' }),
    failure_code: Type.Union([Type.String({ enum: [...MANDATE_FAILURE_CODES] }), Type.Null()]),
    failure_message: Type.Union([Type.String(), Type.Null()]),
    revoked_by: Type.Union([Type.String({ enum: ['merchant', 'bank'] }), Type.Null()], {
      description: '`merchant`: POST /v1/mandates/{id}/revoke; `bank`: the customer revoked it through their bank.',
    }),
    activated_at: Type.Union([Timestamp, Type.Null()]),
    last_debit_at: Type.Union([Timestamp, Type.Null()], { description: 'When the last successful debit settled.' }),
    metadata: MetadataView,
    ...Versioned('Increases by one with every change; order webhooks by it.'),
  },
  { $id: 'Mandate', title: 'Mandate' },
);
export type MandateView = Static<typeof Mandate>;

export const ListMandatesQuery = ListQuery({
  status: OneOf(MANDATE_STATUSES),
  customer_email: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'Only the mandates of this customer (exact match).' })),
});
export type ListMandatesQuery = Static<typeof ListMandatesQuery>;

export const ResolveMandateBody = Type.Object(
  {
    outcome: Type.String({
      enum: ['active', 'failed', 'revoked'],
      description:
        '`active` or `failed`: how the simulated bank answers a pending mandate. `revoked`: the customer revokes an active mandate through their bank.',
    }),
  },
  { additionalProperties: false },
);
export type ResolveMandateBody = Static<typeof ResolveMandateBody>;
