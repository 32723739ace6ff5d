// Adyen's Settlement details report (CSV) read into settlement records (src/connectors/settlements.ts).
// The columns API.md §7 names are required, by their header names in any order; other columns,
// which Adyen lets merchants add to the report, are ignored. Anything else wrong — a malformed or
// truncated file, a missing column, a line of another merchant account, an amount that is not a
// decimal of its currency, a net currency other than the gross one (we book in one currency) — is
// a 400 `report_invalid` naming the line or the column, and nothing is booked.
import { ApiError } from '../../kernel/errors.js';
import { CURRENCY_EXPONENTS } from '../../kernel/currencies.js';
import type { SettlementKind, SettlementRecord } from '../../connectors/types.js';

export const REQUIRED_COLUMNS = [
  'Company Account', 'Merchant Account', 'Psp Reference', 'Merchant Reference', 'Payment Method', 'Creation Date', 'TimeZone', 'Type',
  'Modification Reference', 'Gross Currency', 'Gross Debit (GC)', 'Gross Credit (GC)', 'Exchange Rate', 'Net Currency', 'Net Debit (NC)',
  'Net Credit (NC)', 'Commission (NC)', 'Markup (NC)', 'Scheme Fees (NC)', 'Interchange (NC)', 'Payment Method Variant', 'Batch Number',
] as const;
const MODIFICATION_MERCHANT_REFERENCE = 'Modification Merchant Reference';
type Column = (typeof REQUIRED_COLUMNS)[number];

export const invalidReport = (message: string) => new ApiError('report_invalid', { param: 'report', message });

/** RFC 4180 fields, line by line; `line` is the physical line a record starts on. */
function* csvRows(text: string): Generator<{ line: number; fields: string[] }> {
  let i = 0;
  let line = 1;
  while (i < text.length) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      let field = '';
      if (text[i] === '"') {
        i += 1;
        for (;;) {
          if (i >= text.length) throw invalidReport(`Line ${start}: a quoted field is not closed; the file looks truncated.`);
          const c = text[i]!;
          if (c === '"' && text[i + 1] === '"') (field += '"'), (i += 2);
          else if (c === '"') break;
          else (field += c), (line += c === '\n' ? 1 : 0), (i += 1);
        }
        i += 1;
        if (i < text.length && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') throw invalidReport(`Line ${line}: characters after a closing quote.`);
      } else {
        while (i < text.length && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') field += text[i++];
        if (field.includes('"')) throw invalidReport(`Line ${line}: a quote inside an unquoted field.`);
      }
      fields.push(field);
      if (text[i] === ',') {
        i += 1;
        continue;
      }
      if (text[i] === '\r') i += 1;
      if (text[i] === '\n') i += 1;
      line += 1;
      break;
    }
    if (fields.length === 1 && fields[0] === '') continue;
    yield { line: start, fields };
  }
}

const TYPES: Record<string, { kind: SettlementKind; modification: boolean }> = {
  Settled: { kind: 'payment', modification: true },
  SettledBulk: { kind: 'payment', modification: true },
  SettledInInstallments: { kind: 'payment', modification: true },
  Refunded: { kind: 'refund', modification: true },
  RefundedBulk: { kind: 'refund', modification: true },
  RefundedInInstallments: { kind: 'refund', modification: true },
  RefundedReversed: { kind: 'refund', modification: true },
  Chargeback: { kind: 'dispute', modification: false },
  SecondChargeback: { kind: 'dispute', modification: false },
  ChargebackReversed: { kind: 'dispute', modification: false },
  Fee: { kind: 'fee', modification: false },
  MiscCosts: { kind: 'fee', modification: false },
  PaymentCost: { kind: 'fee', modification: false },
};

/** Hours east of UTC of the time zones Adyen writes in TimeZone. */
const ZONES: Record<string, number> = { UTC: 0, GMT: 0, WET: 0, WEST: 1, CET: 1, CEST: 2, EET: 2, EEST: 3, BST: 1, EST: -5, EDT: -4, CST: -6, CDT: -5, PST: -8, PDT: -7 };

export interface AdyenReport {
  records: SettlementRecord[];
  /** The earliest and latest Creation Date of its lines (none: null). */
  from: Date | null;
  to: Date | null;
}

/** Reads the report of `merchantAccount`; throws report_invalid on the first problem. */
export function readSettlementReport(text: string, merchantAccount: string): AdyenReport {
  const rows = csvRows(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  const header = rows.next();
  if (header.done) throw invalidReport('The report is empty: it has no header line.');
  const names = header.value.fields.map((f) => f.trim());
  const missing = REQUIRED_COLUMNS.filter((c) => !names.includes(c));
  if (missing.length) throw invalidReport(`The report has no column ${missing.map((c) => `"${c}"`).join(', ')} (line 1, the header).`);
  const at = (c: string) => names.indexOf(c);
  const records: SettlementRecord[] = [];
  let from: Date | null = null;
  let to: Date | null = null;
  for (const { line, fields } of rows) {
    if (fields.length !== names.length) throw invalidReport(`Line ${line} has ${fields.length} fields where the header has ${names.length}; the file is malformed or truncated.`);
    const get = (c: Column) => fields[at(c)]!.trim();
    const where = (c: string) => `line ${line}, column "${c}"`;
    if (get('Merchant Account') !== merchantAccount) {
      throw invalidReport(`Line ${line} is for merchant account "${get('Merchant Account')}", not this connector account's "${merchantAccount}".`);
    }
    const currency = get('Gross Currency');
    const exponent = CURRENCY_EXPONENTS.get(currency);
    if (exponent === undefined) throw invalidReport(`Unknown currency "${currency}" at ${where('Gross Currency')}.`);
    const net = get('Net Currency');
    if (net !== '' && net !== currency) throw invalidReport(`Currency mismatch on line ${line}: Net Currency ${net} is not the Gross Currency ${currency}.`);
    const minor = (c: Column) => {
      const value = get(c);
      if (value === '') return 0;
      const m = /^(\d+)(?:\.(\d+))?$/.exec(value);
      if (!m || (m[2]?.length ?? 0) > exponent) throw invalidReport(`"${value}" at ${where(c)} is not an amount in ${currency}.`);
      return Number(m[1]) * 10 ** exponent + Number((m[2] ?? '').padEnd(exponent, '0') || 0);
    };
    const zone = ZONES[get('TimeZone')];
    if (zone === undefined) throw invalidReport(`Unknown time zone "${get('TimeZone')}" at ${where('TimeZone')}.`);
    const date = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})$/.exec(get('Creation Date'));
    const time = date ? new Date(`${date[1]}T${date[2]}Z`).getTime() - zone * 3_600_000 : NaN;
    if (Number.isNaN(time)) throw invalidReport(`"${get('Creation Date')}" at ${where('Creation Date')} is not a date (YYYY-MM-DD hh:mm:ss).`);
    const type = TYPES[get('Type')] ?? { kind: 'other' as const, modification: false };
    const modification = at(MODIFICATION_MERCHANT_REFERENCE) >= 0 ? fields[at(MODIFICATION_MERCHANT_REFERENCE)]!.trim() : '';
    const gross = minor('Gross Credit (GC)') - minor('Gross Debit (GC)');
    const fees = minor('Commission (NC)') + minor('Markup (NC)') + minor('Scheme Fees (NC)') + minor('Interchange (NC)');
    const when = new Date(time);
    if (!from || when < from) from = when;
    if (!to || when > to) to = when;
    records.push({
      recordId: [get('Psp Reference'), get('Type'), get('Modification Reference'), get('Batch Number')].join(':'),
      kind: type.kind,
      reference: (type.modification && modification) || get('Merchant Reference') || null,
      objectReference: get('Psp Reference') || null,
      amount: type.kind === 'fee' ? 0 : gross,
      currency,
      fee: type.kind === 'fee' ? minor('Net Debit (NC)') - minor('Net Credit (NC)') : fees,
      at: when,
      line,
    });
  }
  return { records, from, to };
}
