// Response schemas of the balance and its transactions (the journal seen from the merchant's side).
import { Type, type Static } from 'typebox';
import { Amount, Currency, IdFilter, ListQuery, OneOf, Timestamp } from '../kernel/schemas.js';
import { ENTRY_TYPES as ALL_ENTRY_TYPES } from './journal.js';

/** The entries a merchant sees: processor fees are the service's own (src/domain/reconciliation). */
const ENTRY_TYPES = ALL_ENTRY_TYPES.filter((t) => t !== 'processor_fee');

const BalanceAmounts = Type.Array(Type.Object({ currency: Type.String(), amount: Type.Integer() }));

const PendingAmounts = Type.Array(
  Type.Object({
    currency: Type.String(),
    amount: Type.Integer(),
    available_on: Type.Optional(Timestamp),
  }),
  {
    description:
      'Money that becomes available later: one entry per currency and date (available_on). A currency with nothing pending has one entry of amount 0 and no date.',
  },
);

export const Balance = Type.Object(
  {
    object: Type.Literal('balance'),
    livemode: Type.Boolean(),
    available: BalanceAmounts,
    pending: PendingAmounts,
    reserved: BalanceAmounts,
  },
  { $id: 'Balance', title: 'Balance' },
);
export type BalanceView = Static<typeof Balance>;

export const BalanceTransaction = Type.Object(
  {
    id: Type.String({ examples: ['txn_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('balance_transaction'),
    livemode: Type.Boolean(),
    type: Type.String({ enum: [...ENTRY_TYPES] }),
    currency: Type.String(),
    amount: Type.Integer({ description: 'Gross amount of the movement: net plus fee.' }),
    fee: Type.Integer({ description: 'Fee the service charged on it (negative when a fee is given back), booked as its own journal lines.' }),
    net: Type.Integer({ description: "Change of the merchant's total balance (available + pending + reserved): amount minus fee." }),
    balance_changes: Type.Object(
      { available: Type.Integer(), pending: Type.Integer(), reserved: Type.Integer() },
      { description: 'Change of each part of the balance; a refund in flight moves its amount from available to reserved.' },
    ),
    source: Type.Union([Type.String(), Type.Null()], { description: 'The object behind the movement (pay_…, ref_…, po_…).' }),
    available_on: Type.String({
      format: 'date-time',
      description: "When the movement's money is (or was) available: the settlement date of a payment that settles later, otherwise created_at.",
    }),
    description: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
  },
  { $id: 'BalanceTransaction', title: 'BalanceTransaction' },
);
export type BalanceTransactionView = Static<typeof BalanceTransaction>;

export const ListBalanceTransactionsQuery = ListQuery({ type: OneOf(ENTRY_TYPES), currency: Type.Optional(Currency), source: IdFilter });
export type ListBalanceTransactionsQuery = Static<typeof ListBalanceTransactionsQuery>;

export const FundBalanceBody = Type.Object({ amount: Amount, currency: Currency }, { additionalProperties: false });
export type FundBalanceBody = Static<typeof FundBalanceBody>;
