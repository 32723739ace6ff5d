// A processor's settlement records in our words: what it moved in or out of the money it holds for
// us, per movement, with the fee it kept. Reconciliation (src/domain/reconciliation) compares them
// with the ledger. Connectors that can be asked for them (Stripe's balance transactions, the
// simulators' report) implement Connector.settlementRecords; Adyen's come as an uploaded report
// (src/domain/reconciliation/adyen-report.ts).

export const SETTLEMENT_KINDS = ['payment', 'refund', 'dispute', 'payout', 'fee', 'other'] as const;
export type SettlementKind = (typeof SETTLEMENT_KINDS)[number];

export interface SettlementRecord {
  /** The processor's own id of this record, unique at the processor: a fee is booked once per record. */
  recordId: string;
  kind: SettlementKind;
  /** Our id as the processor echoes it (pay_, cap_, ref_, po_…); null when the record does not carry it. */
  reference: string | null;
  /** The processor's id of the object moved (a Stripe dispute's du_/dp_ id…), for records without our id. */
  objectReference: string | null;
  /** Minor units, signed as the money the processor holds for us moved: + in (a payment), − out (a refund). */
  amount: number;
  currency: string;
  /** What the processor kept as its fee on this record (minor units, ≥ 0). */
  fee: number;
  at: Date;
  /** An uploaded report's line number (1 = the header), to name in errors. */
  line?: number;
}

export interface SettlementPeriod {
  from: Date;
  to: Date;
}
