// The request and response shapes of a bank account, shared by beneficiaries (payouts) and mandates
// (direct debits), and registered once under their own names in the OpenAPI document. The rules
// beyond what a schema can say are in rules.ts.
import { Type, type Static } from 'typebox';

export const BankAccountInput = Type.Object(
  {
    country: Type.String({
      pattern: '^[A-Z]{2}$',
      description: 'ISO 3166-1 alpha-2 country of the account, upper case. It decides which fields are needed: an IBAN for IBAN countries (GB also takes sort_code + account_number), routing_number + account_number for US, ifsc + account_number for IN.',
      examples: ['DE'],
    }),
    currency: Type.String({
      pattern: '^[A-Z]{3}$',
      description: "ISO 4217 code of the account, upper case. Must fit the country: its national currency, or EUR in any SEPA country.",
      examples: ['EUR'],
    }),
    iban: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 50,
        description: 'The IBAN, with or without spaces, any case; its country must be `country`. Encrypted at rest, never returned.',
        examples: ['DE89 3704 0044 0532 0130 00'],
      }),
    ),
    bic: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 20,
        description: "Optional BIC (SWIFT code), 8 or 11 characters; its country (characters 5-6) must be the account's.",
        examples: ['COBADEFFXXX'],
      }),
    ),
    account_number: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: 'Digits: 8 for GB, 4 to 17 for US, 9 to 18 for IN. Not with an IBAN. Encrypted at rest, never returned.',
        examples: ['00012345'],
      }),
    ),
    sort_code: Type.Optional(
      Type.String({ minLength: 1, maxLength: 10, description: 'GB only: 6 digits, dashes allowed (12-34-56).', examples: ['20-00-00'] }),
    ),
    routing_number: Type.Optional(
      Type.String({ minLength: 1, maxLength: 12, description: 'US only: 9-digit ABA routing number (checksum verified).', examples: ['110000000'] }),
    ),
    ifsc: Type.Optional(
      Type.String({ minLength: 1, maxLength: 15, description: 'IN only: 11-character IFSC, e.g. HDFC0000001.', examples: ['HDFC0000001'] }),
    ),
  },
  {
    $id: 'BankAccountInput',
    title: 'BankAccountInput',
    additionalProperties: false,
    description: 'A bank account: `iban` (+ optional `bic`), or `account_number` with the routing field of its country.',
  },
);
export type BankAccountInput = Static<typeof BankAccountInput>;

const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const BankAccountView = Type.Object(
  {
    country: Type.String({ description: 'ISO 3166-1 alpha-2.' }),
    currency: Type.String({ description: 'ISO 4217.' }),
    last4: Type.String({ description: 'The last four characters of the IBAN or account number; the rest is never returned.' }),
    bic: NullableString('The BIC, when one was given.'),
    sort_code: NullableString('GB accounts given by sort code: 6 digits.'),
    routing_number: NullableString('US accounts: the ABA routing number.'),
    ifsc: NullableString('IN accounts: the IFSC.'),
    fingerprint: Type.String({ description: 'Equal for the same account however it was written (spaces, case); useless for recovering the number.' }),
  },
  { $id: 'BankAccount', title: 'BankAccount' },
);
export type BankAccountView = Static<typeof BankAccountView>;
