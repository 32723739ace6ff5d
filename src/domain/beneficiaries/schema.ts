// Request and response schemas of beneficiaries. The bank account fields are those of
// src/domain/bank-accounts/rules.ts, inlined (not referenced by $id) so that mandates and beneficiaries can
// each use them without registering one shared schema twice.
import { Type, type Static } from 'typebox';
import { ListQuery, Metadata, MetadataView, OneOf, Versioned } from '../../kernel/schemas.js';
import { BankAccountInput, BankAccountView } from '../bank-accounts/schema.js';
import { BENEFICIARY_STATUSES } from './state.js';

export const BENEFICIARY_TYPES = ['individual', 'business'] as const;

const Name = Type.String({ minLength: 1, maxLength: 200, description: "The account holder's name, as the bank knows it." });
const Email = Type.String({ format: 'email', maxLength: 254 });

export const CreateBeneficiaryBody = Type.Object(
  {
    name: Name,
    type: Type.String({ enum: [...BENEFICIARY_TYPES] }),
    email: Type.Optional(Email),
    bank_account: Type.Object(BankAccountInput.properties, {
      additionalProperties: false,
      description:
        'country, currency, and either `iban` (+ optional `bic`) or `account_number` with the routing field of its country ' +
        '(`sort_code` GB, `routing_number` US, `ifsc` IN). Checksums and formats are verified. The IBAN or account number is ' +
        'encrypted at rest and never returned: answers carry `last4` and a `fingerprint`.',
    }),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type CreateBeneficiaryBody = Static<typeof CreateBeneficiaryBody>;

export const UpdateBeneficiaryBody = Type.Object(
  {
    name: Type.Optional(Name),
    email: Type.Optional(Type.Union([Email, Type.Null()], { description: 'null removes it.' })),
    metadata: Type.Optional({ ...Metadata, description: 'Replaces the whole metadata.' }),
  },
  { additionalProperties: false, description: 'Only name, email and metadata can change; the bank account cannot (create a new beneficiary).' },
);
export type UpdateBeneficiaryBody = Static<typeof UpdateBeneficiaryBody>;

export const Beneficiary = Type.Object(
  {
    id: Type.String({ examples: ['ben_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('beneficiary'),
    livemode: Type.Boolean(),
    status: Type.String({ enum: [...BENEFICIARY_STATUSES], description: '`disabled` after DELETE: kept for history, receives no payouts.' }),
    type: Type.String({ enum: [...BENEFICIARY_TYPES] }),
    name: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
    bank_account: Type.Object(BankAccountView.properties),
    metadata: MetadataView,
    ...Versioned(),
  },
  { $id: 'Beneficiary', title: 'Beneficiary' },
);
export type BeneficiaryView = Static<typeof Beneficiary>;

export const ListBeneficiariesQuery = ListQuery({
  status: OneOf(BENEFICIARY_STATUSES),
  fingerprint: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'Only beneficiaries whose bank account has this fingerprint (duplicates of one account).' }),
  ),
});
export type ListBeneficiariesQuery = Static<typeof ListBeneficiariesQuery>;
