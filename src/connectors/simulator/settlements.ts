// The simulated processors' settlement report (GET /{processor}/settlements?from=&to=): one line per
// movement of money their books show, as a processor's settlement report lists them. In test mode
// the simulators settle every succeeded movement at once, so the report lists it as soon as the
// object reached its state. A line is dated when its money moved, as a processor dates its records:
// a movement at its creation, a dispute's withdrawal and reinstatement when the chargeback arrived
// and when it was won, which may be days after the dispute opened. A line's id is the processor's
// own (its object id, with `_reversal` for money given back), stable across reports.
import type { SimCapture, SimCharge, SimDispute, SimPayout, SimRefund, SimSettlementLine } from './protocol.js';
import type { SimEntry, SimulatorStore } from './store.js';
import { simError, type SimResponse } from './wire.js';
import { connectorError, type ConnectorError, type SettlementRecord } from '../types.js';
import { SIMULATOR_FEE, type FeeSchedule } from './profiles.js';

/** What a simulator charges for a payment of `amount` under its schedule (profiles.ts). */
export function simulatorFee(amount: number, schedule: FeeSchedule = SIMULATOR_FEE): number {
  return Math.floor((amount * schedule.bps + 5000) / 10_000) + schedule.fixedMinor;
}

const line = (id: string, type: SimSettlementLine['type'], reference: string, amount: number, currency: string, at: string, fee = 0, object?: string): SimSettlementLine => ({
  line_id: id,
  type,
  merchant_reference: reference,
  object_id: object ?? id,
  amount_minor: amount,
  fee_minor: fee,
  currency,
  created_at: at,
});

function linesOf(entry: SimEntry, fee: FeeSchedule): SimSettlementLine[] {
  if (entry.kind === 'charge') {
    const c = entry.body as unknown as SimCharge;
    // Manual charges settle through their captures; verifications move no money.
    if (c.state !== 'CAPTURED' || c.capture === 'MANUAL' || c.amount_minor === 0) return [];
    return [line(c.charge_id, 'PAYMENT', c.merchant_reference, c.amount_minor, c.currency, c.created_at, simulatorFee(c.amount_minor, fee))];
  }
  if (entry.kind === 'capture') {
    const c = entry.body as unknown as SimCapture;
    return c.state === 'CAPTURED' ? [line(c.capture_id, 'PAYMENT', c.merchant_reference, c.amount_minor, c.currency, c.created_at, simulatorFee(c.amount_minor, fee))] : [];
  }
  if (entry.kind === 'refund') {
    const r = entry.body as unknown as SimRefund & { currency?: string };
    return r.state === 'REFUNDED' ? [line(r.refund_id, 'REFUND', r.merchant_reference, -r.amount_minor, r.currency ?? '', r.created_at)] : [];
  }
  if (entry.kind === 'dispute') {
    const d = entry.body as unknown as SimDispute;
    const out = d.funds_withdrawn ? [line(d.dispute_id, 'DISPUTE', d.merchant_reference, -d.amount_minor, d.currency, d.funds_withdrawn_at ?? d.created_at, 0, d.dispute_id)] : [];
    if (d.funds_reinstated) out.push(line(`${d.dispute_id}_reversal`, 'DISPUTE', d.merchant_reference, d.amount_minor, d.currency, d.funds_reinstated_at ?? d.created_at, 0, d.dispute_id));
    return out;
  }
  if (entry.kind === 'payout') {
    const p = entry.body as unknown as SimPayout;
    if (p.state !== 'PAID' && p.state !== 'RETURNED') return [];
    const out = [line(p.payout_id, 'PAYOUT', p.merchant_reference, -p.amount_minor, p.currency, p.created_at)];
    if (p.state === 'RETURNED') out.push(line(`${p.payout_id}_reversal`, 'PAYOUT', p.merchant_reference, p.amount_minor, p.currency, p.created_at));
    return out;
  }
  return [];
}

/** The report of `processor`: its lines dated in [from, to). */
export async function settlementReport(store: SimulatorStore, processor: string, query: URLSearchParams, fee: FeeSchedule = SIMULATOR_FEE): Promise<SimResponse> {
  const from = new Date(query.get('from') ?? '');
  const to = new Date(query.get('to') ?? '');
  if (Number.isNaN(+from) || Number.isNaN(+to) || from >= to) return simError(400, 'BAD_REQUEST', 'from and to are timestamps, from before to');
  const entries = await store.list(processor, ['charge', 'capture', 'refund', 'dispute', 'payout']);
  // A refund names its charge only: its currency is the charge's.
  const currencies = new Map(entries.filter((e) => e.kind === 'charge').map((e) => [e.objectId, (e.body as unknown as SimCharge).currency]));
  const lines = entries
    .map((e) => (e.kind === 'refund' ? { ...e, body: { ...e.body, currency: currencies.get((e.body as unknown as SimRefund).charge_id ?? '') } } : e))
    .flatMap((e) => linesOf(e, fee))
    .filter((l) => {
      const at = new Date(l.created_at);
      return at >= from && at < to;
    })
    .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.line_id < b.line_id ? -1 : 1));
  return { status: 200, body: { object: 'settlement_report', processor, lines } };
}

const KINDS = { PAYMENT: 'payment', REFUND: 'refund', DISPUTE: 'dispute', PAYOUT: 'payout' } as const;

/** The connector's side: the report's lines in our words (src/connectors/settlements.ts). */
export function settlementRecordsOf(status: number, body: unknown): SettlementRecord[] | ConnectorError {
  const lines = (body as { lines?: SimSettlementLine[] } | undefined)?.lines;
  if (status !== 200 || !Array.isArray(lines)) return connectorError(status >= 500 ? 'processor_error' : 'invalid_response', `the simulated processor answered ${status} to its settlement report`);
  return lines.map((l) => ({
    recordId: l.line_id,
    kind: KINDS[l.type] ?? 'other',
    reference: l.merchant_reference,
    objectReference: l.object_id,
    amount: l.amount_minor,
    currency: l.currency,
    fee: l.fee_minor,
    at: new Date(l.created_at),
  }));
}
