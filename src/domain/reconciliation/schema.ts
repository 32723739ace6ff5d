// The reconciliation run (rec_…) as the API shows it, and what creates one (docs/reconciliation.md).
import { Type, type Static } from 'typebox';
import { IdFilter, ListQuery, Timestamp, Versioned } from '../../kernel/schemas.js';
import { EXCEPTION_TYPES } from './match.js';

/** The largest settlement report upload taken (bytes); a larger one is refused 413 body_too_large. */
export const REPORT_LIMIT_BYTES = 32 * 1024 * 1024;

export const RECONCILIATION_SOURCES = ['stripe_balance_transactions', 'adyen_settlement_report', 'simulator_report'] as const;

const Exception = Type.Object({
  type: Type.String({ enum: [...EXCEPTION_TYPES] }),
  object: Type.Union([Type.String(), Type.Null()], { description: 'Our payment, refund, dispute or payout; null for missing_in_ledger.' }),
  processor_records: Type.Array(Type.String(), { description: "The processor's ids of the records behind it (Stripe txn_…, an Adyen report line's Psp Reference:Type:Modification Reference:Batch Number)." }),
  status: Type.Union([Type.String(), Type.Null()], { description: "Our object's status." }),
  expected_amount: Type.Union([Type.Integer(), Type.Null()], { description: 'What our object says the processor moved (signed, minor units).' }),
  processor_amount: Type.Union([Type.Integer(), Type.Null()], { description: 'What the records say it moved (signed, minor units); null for missing_at_processor.' }),
  currency: Type.String(),
});

export const ReconciliationRun = Type.Object(
  {
    id: Type.String({ examples: ['rec_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('reconciliation_run'),
    livemode: Type.Boolean(),
    status: Type.Literal('completed'),
    connector_account: Type.String(),
    connector: Type.String(),
    source: Type.String({ enum: [...RECONCILIATION_SOURCES] }),
    period_start: Timestamp,
    period_end: Timestamp,
    records: Type.Integer({ description: "The processor's records read." }),
    matched: Type.Integer({ description: 'Our objects whose records agree with them.' }),
    exceptions: Type.Array(Exception),
    fees_booked: Type.Record(Type.String(), Type.Integer(), { description: 'Processor fees this run booked as processor_fee ledger lines, per currency (fees an earlier run booked are not booked again).' }),
    ...Versioned(),
  },
  { $id: 'ReconciliationRun', title: 'ReconciliationRun' },
);
export type ReconciliationRunView = Static<typeof ReconciliationRun>;

export const CreateReconciliationRunBody = Type.Object(
  {
    connector_account: Type.String({ description: 'The connector account (ca_…) whose records are compared.' }),
    period_start: Type.Optional(Timestamp),
    period_end: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);
export type CreateReconciliationRunBody = Static<typeof CreateReconciliationRunBody>;

export const ReportQuery = Type.Object(
  {
    connector_account: Type.Optional(Type.String({ description: 'With a text/csv body: the connector account (ca_…) the report is of.' })),
    period_start: Type.Optional(Timestamp),
    period_end: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);

export const ListReconciliationRunsQuery = ListQuery({ connector_account: IdFilter });
export type ListReconciliationRunsQuery = Static<typeof ListReconciliationRunsQuery>;
