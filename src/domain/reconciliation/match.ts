// Matching a processor's settlement records with our movements. Every connector sends our id as
// the processor's reference on every movement, so a record names the object it moved (a capture's
// record counts for its payment); a record without our id is matched by the processor's id of the
// object (Stripe's PaymentIntent, a dispute's id). Per object, what the processor moved is compared
// with what our object says it moved:
//   missing_in_ledger     the processor moved money for no object of ours
//   missing_at_processor  we booked money the processor never settled, past its settlement delay
//   amount_mismatch       both moved money, not the same amount (or currency)
//   status_mismatch       our object moved nothing (failed, canceled…) and the processor settled it
import { and, eq, gte, inArray, lt, or, type SQL } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { captures, disputes, payments, payouts, refunds } from '../../storage/schema.js';
import { parseId, toPublicId } from '../../kernel/ids.js';
import type { SettlementPeriod, SettlementRecord } from '../../connectors/types.js';
import { invalidReport } from './adyen-report.js';

export const EXCEPTION_TYPES = ['missing_in_ledger', 'missing_at_processor', 'amount_mismatch', 'status_mismatch'] as const;
export type ExceptionType = (typeof EXCEPTION_TYPES)[number];

export interface ReconciliationException {
  type: ExceptionType;
  /** Our object (pay_, ref_, dp_, po_), null for missing_in_ledger. */
  object: string | null;
  /** The processor's records behind it. */
  processor_records: string[];
  status: string | null;
  expected_amount: number | null;
  processor_amount: number | null;
  currency: string;
}

/** One object of ours as the comparison sees it: the money it says moved at the processor (signed). */
interface Ours {
  id: string;
  uuid: string;
  status: string;
  expected: number;
  currency: string;
  createdAt: Date;
  connectorReference: string | null;
  paymentId?: string;
  /** Its outcome is not known to us yet (the processor may be ahead of its webhook): not compared. */
  inFlight: boolean;
}

type Kind = 'payment' | 'refund' | 'dispute' | 'payout';
const PREFIX = { payment: 'pay', refund: 'ref', dispute: 'dp', payout: 'po' } as const;

interface Scope {
  accountId: string;
  livemode: boolean;
  /** The route keys the connector account's movements went under (its ca_ id; a simulator's name too). */
  routeKeys: string[];
}

const TABLES = { payment: payments, refund: refunds, dispute: disputes, payout: payouts } as const;
const IN_FLIGHT: Record<Kind, string[]> = { payment: ['pending', 'requires_action'], refund: ['pending'], dispute: [], payout: ['pending', 'processing'] };

function ours(kind: Kind, row: Record<string, any>): Ours {
  const expected =
    kind === 'payment' ? (['failed', 'canceled'].includes(row.status) ? 0 : row.amountCaptured)
    : kind === 'refund' ? (row.status === 'succeeded' ? -row.amount : 0)
    : kind === 'dispute' ? (row.fundsBooked ? -row.amount : 0)
    : row.status === 'paid' ? -row.amount : 0;
  return { id: toPublicId(PREFIX[kind], row.id), uuid: row.id, status: row.status, expected, currency: row.currency, createdAt: row.createdAt, connectorReference: row.connectorReference ?? null, paymentId: row.paymentId, inFlight: IN_FLIGHT[kind].includes(row.status) };
}

/** Our objects of the connector account created in the period, and those the records name. */
async function loadOurs(tx: Executor, scope: Scope, period: SettlementPeriod, records: SettlementRecord[]) {
  const byId = new Map<string, Ours & { kind: Kind }>();
  const own = (t: (typeof TABLES)[Kind]) => [eq(t.accountId, scope.accountId), eq(t.livemode, scope.livemode)];
  const capturePayments = new Map<string, string>();
  const capUuids = records.map((r) => (r.reference ? parseId('cap', r.reference) : undefined)).filter((u): u is string => !!u);
  if (capUuids.length) {
    const rows = await tx.select({ id: captures.id, paymentId: captures.paymentId }).from(captures).where(and(eq(captures.accountId, scope.accountId), eq(captures.livemode, scope.livemode), inArray(captures.id, capUuids)));
    for (const row of rows) capturePayments.set(toPublicId('cap', row.id), toPublicId('pay', row.paymentId));
  }
  const objectRefs = records.map((r) => r.objectReference).filter((r): r is string => !!r);
  for (const kind of Object.keys(TABLES) as Kind[]) {
    const t = TABLES[kind];
    const uuids = records.map((r) => (r.reference ? parseId(PREFIX[kind], capturePayments.get(r.reference) ?? r.reference) : undefined)).filter((u): u is string => !!u);
    const named: (SQL | undefined)[] = [uuids.length ? inArray(t.id, uuids) : undefined, objectRefs.length ? inArray(t.connectorReference, objectRefs) : undefined];
    if (kind === 'dispute') {
      const paymentUuids = records.filter((r) => r.kind === 'dispute' && r.reference).map((r) => parseId('pay', r.reference!)).filter((u): u is string => !!u);
      if (paymentUuids.length) named.push(inArray(disputes.paymentId, paymentUuids));
    }
    const inPeriod = and(inArray(t.connector, scope.routeKeys), gte(t.createdAt, period.from), lt(t.createdAt, period.to));
    const rows = await tx.select().from(t as typeof payments).where(and(...own(t), or(inPeriod, ...named)));
    for (const row of rows) {
      const o = { ...ours(kind, row), kind };
      byId.set(o.id, o);
    }
  }
  return { byId, capturePayments };
}

/** The object a record names, if ours. */
function resolve(record: SettlementRecord, loaded: Awaited<ReturnType<typeof loadOurs>>, objects: (Ours & { kind: Kind })[]) {
  const ref = record.reference && (loaded.capturePayments.get(record.reference) ?? record.reference);
  if (record.kind === 'dispute') {
    const disputesOf = objects.filter((o) => o.kind === 'dispute');
    return (
      disputesOf.find((d) => d.connectorReference !== null && d.connectorReference === record.objectReference) ??
      disputesOf.find((d) => d.id === ref) ??
      disputesOf.find((d) => ref && d.paymentId === parseId('pay', ref))
    );
  }
  const kind = record.kind as Kind;
  return (ref ? loaded.byId.get(ref) : undefined) ?? objects.find((o) => o.kind === kind && o.connectorReference !== null && o.connectorReference === record.objectReference);
}

export interface MatchResult {
  matched: number;
  exceptions: ReconciliationException[];
  /** Each record with the object it moved, if any (fees are booked against it). */
  objectOf: Map<SettlementRecord, { kind: Kind; uuid: string } | undefined>;
  /** Records left out (skipUnknown: naming no object of ours; or dated before the period and naming none of its objects): not this run's, so neither are their fees. */
  ignored: Set<SettlementRecord>;
  /** The records the run read for its period: those dated in it, and the earlier ones its objects took. */
  records: number;
}

/**
 * Compares `records` with our movements. `settledBy`: objects created after it may not be settled
 * yet (the processor's settlement delay) and are not missing. `skipUnknown`: records naming no
 * object of ours are left out rather than reported (a shared sandbox's report lists every merchant's).
 * Records dated before the period (the look-back, service.ts) count only for objects created in
 * it: the money of an object we learnt of after the processor moved it; earlier objects were the
 * earlier periods' to compare, and an object out of the period without records is not missing here.
 */
export async function match(tx: Executor, scope: Scope, period: SettlementPeriod, records: SettlementRecord[], opts: { settledBy: Date; skipUnknown: boolean }): Promise<MatchResult> {
  const loaded = await loadOurs(tx, scope, period, records);
  const objects = [...loaded.byId.values()];
  const groups = new Map<string, SettlementRecord[]>();
  const orphans = new Map<string, SettlementRecord[]>();
  const objectOf: MatchResult['objectOf'] = new Map();
  const ignored = new Set<SettlementRecord>();
  const inPeriod = (at: Date) => at >= period.from && at < period.to;
  for (const record of records) {
    const earlier = record.at < period.from;
    if (record.kind === 'fee' || record.kind === 'other') {
      if (opts.skipUnknown || earlier) ignored.add(record);
      continue;
    }
    const object = resolve(record, loaded, objects);
    if ((!object && opts.skipUnknown) || (earlier && !(object && inPeriod(object.createdAt)))) {
      ignored.add(record);
      continue;
    }
    objectOf.set(record, object && { kind: object.kind, uuid: object.uuid });
    if (object && record.currency !== object.currency && record.line !== undefined) {
      throw invalidReport(`Currency mismatch on line ${record.line}: ${record.currency}, where ${object.id} is in ${object.currency}.`);
    }
    const key = object?.id ?? `${record.kind}:${record.reference ?? record.objectReference ?? record.recordId}`;
    const into = object ? groups : orphans;
    into.set(key, [...(into.get(key) ?? []), record]);
  }
  const exceptions: ReconciliationException[] = [];
  let matched = 0;
  const sum = (rs: SettlementRecord[]) => rs.reduce((s, r) => s + r.amount, 0);
  for (const object of objects) {
    const rs = groups.get(object.id);
    if (object.inFlight || (!rs && !inPeriod(object.createdAt))) continue;
    const base = { object: object.id, status: object.status, expected_amount: object.expected, currency: object.currency, processor_records: rs?.map((r) => r.recordId) ?? [] };
    if (!rs) {
      if (object.expected !== 0 && object.createdAt <= opts.settledBy) exceptions.push({ ...base, type: 'missing_at_processor', processor_amount: null });
      continue;
    }
    const moved = sum(rs);
    const sameCurrency = rs.every((r) => r.currency === object.currency);
    if (moved === object.expected && sameCurrency) matched += 1;
    else if (object.expected === 0 && moved !== 0) exceptions.push({ ...base, type: 'status_mismatch', processor_amount: moved });
    else exceptions.push({ ...base, type: 'amount_mismatch', processor_amount: moved });
  }
  for (const rs of orphans.values()) {
    exceptions.push({ type: 'missing_in_ledger', object: null, status: null, expected_amount: null, processor_amount: sum(rs), currency: rs[0]!.currency, processor_records: rs.map((r) => r.recordId) });
  }
  return { matched, exceptions, objectOf, ignored, records: records.filter((r) => r.at >= period.from || !ignored.has(r)).length };
}
