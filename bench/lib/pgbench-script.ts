// A pgbench script made from the statements one request sent (bench/lib/trace.ts), so the ceiling
// runs the service's own SQL, each in the transaction it had (the traced BEGIN/COMMIT kept). Every
// bind parameter becomes an expression cast to the type PostgreSQL inferred for it:
//   - a value, or a piece of a text value (an id inside an event's JSON), that `bindings` names
//     becomes the expression given there (the account, the order paid, the idempotency key, …);
//   - every other uuid or public id (`pay_…`, 26 base32 characters), and every simulated charge
//     reference, was made by this request: it becomes a fresh value per transaction, the same one
//     wherever the request repeated it (uuids are fixed by one leading `SELECT … \gset`);
//   - a timestamp becomes now() (plus its offset from the request's first, when that is seconds);
//   - anything else is the literal the service sent (its JSON snapshots, fingerprint, amounts), as
//     a pgbench variable, so a bind parameter too.
// `overrides` replaces a parameter outright where a literal would make a hot row that the service
// spreads (the ledger's balance slots).
import pg from 'pg';
import type { TracedStatement } from './trace.js';

// pg turns JS values into the text it sends (dates, arrays, JSON) with its own utils (pg/lib/index.js
// sets them on the module: `utils`), so the literal is what the service sent.
const { utils } = pg as unknown as { utils: { prepareValue(v: unknown): unknown } };

/** A time-ordered uuid like the service's UUIDv7 (48-bit millisecond prefix, random rest). */
export const UUID7 = `(lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') || substr(replace(gen_random_uuid()::text, '-', ''), 13))::uuid`;

export interface Override {
  /** Picks the statement (by its text). */
  statement: RegExp;
  /** 1-based parameter number → pgbench expression. */
  params: Record<number, string>;
}

export interface ScriptOptions {
  statements: TracedStatement[];
  /** Parameter types per statement, as PostgreSQL infers them (parameterTypes below). */
  types: string[][];
  /** Exact values (whole parameters or pieces of text ones) → pgbench expression. */
  bindings: Record<string, string>;
  /** SQL text (no trailing ;) making a fresh public id from its prefix, e.g. `('pay_' || …)`. */
  freshPublicId: (prefix: string) => string;
  /** Expression for a fresh simulated charge reference. */
  freshChargeReference: string;
  overrides?: Override[];
  /** Lines put before the `\gset` (\set …). */
  preamble?: string[];
  /** Extra columns for the leading `SELECT … \gset` (`expr AS name`). */
  gsetColumns?: string[];
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const PUBLIC_ID = '\\b[a-z]{2,5}_[0-9a-hjkmnp-tv-z]{26}\\b';
const CHARGE = '\\bsimulator_[ab]_ch_[0-9a-f]{16}\\b';
const DATE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}/;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The text pg sends for a value (null stays null). */
export function wireValue(v: unknown): string | null {
  const out = utils.prepareValue(v);
  return out === null || out === undefined ? null : String(out);
}

/** The type PostgreSQL infers for each parameter of each statement, read from a PREPARE. */
export async function parameterTypes(url: string, statements: TracedStatement[]): Promise<string[][]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: string[][] = [];
    for (const s of statements) {
      if (!s.values.length) {
        out.push([]);
        continue;
      }
      await client.query(`PREPARE bench_probe AS ${s.text}`);
      const { rows } = await client.query<{ types: string[] }>(`SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = 'bench_probe'`);
      await client.query('DEALLOCATE bench_probe');
      out.push(rows[0]!.types);
    }
    return out;
  } finally {
    await client.end();
  }
}

export interface BuiltScript {
  script: string;
  /** The literals' pgbench variables (-D), `v1`…. */
  vars: Record<string, string>;
  /** How many fresh uuids a transaction makes (its gset columns). */
  freshUuids: number;
}

export function scriptFromTrace(opts: ScriptOptions): BuiltScript {
  const known = Object.keys(opts.bindings).sort((a, b) => b.length - a.length);
  const token = new RegExp([...known.map(escape), UUID, PUBLIC_ID, CHARGE].join('|'), 'g');
  const fresh = new Map<string, string>();
  let uuids = 0;
  const freshFor = (value: string): string => {
    let expr = fresh.get(value);
    if (!expr) {
      if (new RegExp(`^${UUID}$`).test(value)) expr = `:u${++uuids}`;
      else if (new RegExp(`^${CHARGE}$`).test(value)) expr = opts.freshChargeReference;
      else expr = opts.freshPublicId(value.slice(0, value.indexOf('_')));
      fresh.set(value, expr);
    }
    return expr;
  };
  // Offsets are kept from the request's earliest timestamp (its `now`), e.g. a status check due in 150 s.
  const dates = opts.statements.flatMap((st, i) =>
    st.values.flatMap((v, k) => (opts.types[i]![k]?.startsWith('timestamp') && v !== null && DATE.test(wireValue(v) ?? '') ? [new Date(v instanceof Date ? v : String(v)).getTime()] : [])),
  );
  const firstDate = Math.min(...dates);
  // Literals travel as pgbench variables (-D), so bind parameters as the service's did; written
  // into the script, pgbench would take every `:word` inside them (a time, a port) for a variable.
  const vars: Record<string, string> = {};
  const literals = new Map<string, string>();
  const literal = (text: string): string => {
    if (text === '') return "''";
    let name = literals.get(text);
    if (!name) {
      name = `v${literals.size + 1}`;
      literals.set(text, name);
      vars[name] = text;
    }
    return `:${name}`;
  };
  const param = (raw: unknown, type: string): string => {
    const value = wireValue(raw);
    if (value === null) return `NULL::${type}`;
    if (type.startsWith('timestamp') && DATE.test(value)) {
      const at = new Date(raw instanceof Date ? raw : value).getTime();
      const offsetS = Math.round((at - firstDate) / 1000);
      return offsetS === 0 ? `now()` : `(now() + interval '${offsetS} seconds')`;
    }
    const pieces: string[] = [];
    let at = 0;
    for (const m of value.matchAll(token)) {
      if (m.index! > at) pieces.push(literal(value.slice(at, m.index)));
      pieces.push(opts.bindings[m[0]] ?? freshFor(m[0]));
      at = m.index! + m[0].length;
    }
    if (at < value.length || pieces.length === 0) pieces.push(literal(value.slice(at)));
    return `(${pieces.length === 1 ? pieces[0] : pieces.map((p) => `(${p})::text`).join(' || ')})::${type}`;
  };
  const used = new Set<Override>();
  const lines = opts.statements.map((s, i) => {
    const override = opts.overrides?.find((o) => o.statement.test(s.text));
    if (override) used.add(override);
    // One line per statement: the text's own line comments (`-- …`) would swallow the rest.
    const text = s.text.replace(/--[^\n]*/g, '').replace(/\s+/g, ' ').trim();
    const named = new Set([...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    const stale = Object.keys(override?.params ?? {}).filter((k) => !named.has(Number(k)));
    if (stale.length) throw new Error(`statement ${i + 1} has no $${stale.join(', $')} to override: the service's statement changed (${text.slice(0, 80)})`);
    return `${text.replace(/\$(\d+)/g, (_, n: string) => {
      const k = Number(n);
      if (override?.params[k] !== undefined) return override.params[k]!;
      if (k > s.values.length) throw new Error(`statement ${i + 1} has no value for $${k}: ${text.slice(0, 80)}`);
      return param(s.values[k - 1], opts.types[i]![k - 1]!);
    })};`;
  });
  const unused = (opts.overrides ?? []).filter((o) => !used.has(o));
  if (unused.length) throw new Error(`no traced statement matches ${unused.map((o) => o.statement).join(', ')}: the service's statements changed`);
  const gset = [...Array.from({ length: uuids }, (_, i) => `${UUID7} AS u${i + 1}`), ...(opts.gsetColumns ?? [])];
  const head = gset.length ? [`SELECT ${gset.join(', ')} \\gset`] : [];
  return { script: [...(opts.preamble ?? []), ...head, ...lines].join('\n') + '\n', vars, freshUuids: uuids };
}

