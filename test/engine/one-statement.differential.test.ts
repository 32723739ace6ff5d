// The one-statement paths (src/domain/payments/one-statement.ts, src/domain/payment-orders/one-statement.ts)
// against the general path, by difference: the same random sequence of requests goes to two
// services on two databases, one taking the one-statement paths where they apply and one with
// them switched off (Runtime.oneStatementPaths), and everything both leave must be the same —
// answers (status and body), orders, payments, refunds, events, journal lines, balances and
// idempotency records — once ids are replaced by their order of first appearance (sim/digest.ts),
// each service's base URL by one name, and times by their distance from the pinned clock.
//
// Sequences mix order creates (random amounts, currencies, expiries), card payments with every
// test card (success, declines, pending, timeout, processor error, 3-D Secure with and without a
// return_url), payments of unknown, paid, processing and expired orders, retries with the same key,
// keys reused for another request, twins sent at once with one key, refunds, test-helper
// resolutions and the clock moving on. A failure prints fast-check's seed and path.
import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { AT_ONCE_PREPARED } from '../../src/domain/payments/one-statement.js';
import { CREATE_ORDER } from '../../src/domain/payment-orders/one-statement.js';
import { normalised, SET_ASIDE } from '../../sim/digest.js';
import { parseId } from '../../src/kernel/ids.js';
import { useService, type ServiceFixture, type TestTenant } from '../support/fixtures.js';
import { testClock, type ApiResponse, type Row } from '../support/helpers.js';
import { CARDS, cardMethod } from '../support/payments.js';

const THREE_DS = '4000000000003220';
const CARD_LIST = [...Object.values(CARDS), THREE_DS];
// Nothing settles on its own while a sequence runs (the simulators' pending delay is far away), and
// routing's random choices are fixed: both services must meet the same processors.
const options = { settings: { simulator: { pendingDelayMs: 30 * 24 * 3600_000 } } };
const fastClock = testClock();
const generalClock = testClock();
const fast = useService({ ...options, clock: fastClock, runtime: { random: () => 0.5 } });
const general = useService({ ...options, clock: generalClock, runtime: { random: () => 0.5, oneStatementPaths: false } });
/** Where the clocks are pinned at the start of each sequence: far enough from the wall clock to tell its times apart. */
const START = Date.now() - 10 * 24 * 3600_000;
const NEAR_MS = 5 * 24 * 3600_000;

type Key = { fresh: true } | { fresh: false; earlier: number };
type Op =
  | { kind: 'order'; amount: number; currency: string; expiresInS: number | null; key: Key }
  | { kind: 'pay'; order: number; card: string; returnUrl: boolean; key: Key }
  | { kind: 'twins'; order: number; card: string }
  | { kind: 'retry'; earlier: number }
  | { kind: 'refund'; payment: number; part: number | null; key: Key }
  | { kind: 'resolve'; payment: number; outcome: 'succeeded' | 'failed' }
  | { kind: 'advance'; seconds: number };

const key: fc.Arbitrary<Key> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ fresh: true as const }) },
  { weight: 1, arbitrary: fc.nat(20).map((earlier) => ({ fresh: false as const, earlier })) },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('order' as const),
      amount: fc.integer({ min: 1, max: 200_000 }),
      currency: fc.constantFrom('EUR', 'USD', 'GBP'),
      expiresInS: fc.option(fc.integer({ min: 1, max: 7200 }), { nil: null }),
      key,
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('pay' as const), order: fc.nat(20), card: fc.constantFrom(...CARD_LIST), returnUrl: fc.boolean(), key }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('twins' as const), order: fc.nat(20), card: fc.constantFrom(CARDS.success, CARDS.declined, CARDS.pending) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('retry' as const), earlier: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('refund' as const), payment: fc.nat(20), part: fc.option(fc.integer({ min: 1, max: 100 }), { nil: null }), key }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('resolve' as const), payment: fc.nat(20), outcome: fc.constantFrom('succeeded' as const, 'failed' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), seconds: fc.integer({ min: 1, max: 3600 }) }) },
);

/** What one service saw of a sequence: the ids it handed out, the requests it was sent (to send again), its answers. */
interface Side {
  h: ServiceFixture;
  clock: ReturnType<typeof testClock>;
  tenant: TestTenant;
  orders: string[];
  payments: string[];
  sent: { path: string; body: unknown; key: string }[];
  answers: unknown[];
}

const MISSING_ORDER = 'ord_01jd8x3v0pe7wbz0m4k6f2n9qa';
const pick = <T>(list: T[], i: number): T | undefined => (list.length ? list[i % list.length] : undefined);

function post(side: Side, path: string, body: unknown, idempotencyKey: string) {
  side.sent.push({ path, body, key: idempotencyKey });
  return side.tenant.api.post(path, body, { idempotencyKey });
}

function remember(side: Side, res: ApiResponse) {
  const id = res.body?.id as string | undefined;
  if (res.status >= 300 || !id) return;
  if (id.startsWith('ord_') && !side.orders.includes(id)) side.orders.push(id);
  if (id.startsWith('pay_') && !side.payments.includes(id)) side.payments.push(id);
}

const answer = (res: ApiResponse) => ({ status: res.status, body: res.body });

/** Runs `o` on one side; `n` numbers the request, for its idempotency key. */
async function run(side: Side, o: Op, n: string): Promise<unknown> {
  const keyOf = (k: Key) => (k.fresh ? `k-${n}` : (pick(side.sent, k.earlier)?.key ?? `k-${n}`));
  switch (o.kind) {
    case 'order': {
      const expires = o.expiresInS === null ? {} : { expires_at: new Date(side.clock.now().getTime() + o.expiresInS * 1000).toISOString() };
      const body = { amount: o.amount, currency: o.currency, reference: `ref-${n}`, customer: { email: 'jane@example.com' }, ...expires };
      const res = await post(side, '/v1/payment-orders', body, keyOf(o.key));
      remember(side, res);
      return answer(res);
    }
    case 'pay': {
      const body = {
        payment_order: pick(side.orders, o.order) ?? MISSING_ORDER,
        payment_method: cardMethod(o.card),
        ...(o.returnUrl ? { return_url: 'https://shop.example/back' } : {}),
      };
      const res = await post(side, '/v1/payments', body, keyOf(o.key));
      remember(side, res);
      return answer(res);
    }
    case 'twins': {
      const body = { payment_order: pick(side.orders, o.order) ?? MISSING_ORDER, payment_method: cardMethod(o.card) };
      const both = await Promise.all([post(side, '/v1/payments', body, `k-${n}`), post(side, '/v1/payments', body, `k-${n}`)]);
      both.forEach((res) => remember(side, res));
      // Which twin waits is the scheduler's choice: one answers, the other replays it or is told
      // the key is in use; the answer is what is compared.
      const answers = both.map(answer);
      const busy = (a: { status: number; body: any }) => a.status === 409 && a.body?.error?.code === 'idempotency_key_in_use';
      const real = answers.filter((a) => !busy(a));
      expect(real.length, JSON.stringify(answers)).toBeGreaterThan(0);
      for (const a of real) expect(a).toEqual(real[0]);
      return real[0];
    }
    case 'retry': {
      const earlier = pick(side.sent, o.earlier);
      if (!earlier) return 'nothing to retry';
      const res = await post(side, earlier.path, earlier.body, earlier.key);
      remember(side, res);
      return answer(res);
    }
    case 'refund': {
      const payment = pick(side.payments, o.payment);
      if (!payment) return 'no payment';
      const res = await post(side, '/v1/refunds', { payment, ...(o.part === null ? {} : { amount: o.part }) }, keyOf(o.key));
      return answer(res);
    }
    case 'resolve': {
      const payment = pick(side.payments, o.payment);
      if (!payment) return 'no payment';
      return answer(await post(side, `/v1/test-helpers/payments/${payment}/resolve`, { outcome: o.outcome }, `k-${n}`));
    }
    case 'advance':
      side.clock.advance(o.seconds * 1000);
      return 'advanced';
  }
}

/** Everything the side's tenant left in its database, with the answers it got. */
async function footprint(side: Side) {
  const account = parseId('acct', side.tenant.accountId)!;
  const q = (text: ReturnType<typeof sql>) => side.h.query(text);
  return {
    answers: side.answers,
    orders: await q(sql`SELECT * FROM payment_orders WHERE account_id = ${account} ORDER BY id`),
    payments: await q(sql`SELECT * FROM payments WHERE account_id = ${account} ORDER BY id`),
    refunds: await q(sql`SELECT * FROM refunds WHERE account_id = ${account} ORDER BY id`),
    events: await q(sql`
      SELECT type, object_id, data, request_id IS NOT NULL AS has_request, idempotency_key, created_at FROM events
      WHERE account_id = ${account} ORDER BY id`),
    journal: await q(sql`
      SELECT e.type, e.currency, e.source_type, e.source_id, e.description, e.created_at, l.line_no, l.ledger_account, l.amount
      FROM journal_entries e JOIN journal_lines l ON l.account_id = e.account_id AND l.entry_id = e.id
      WHERE e.account_id = ${account} ORDER BY e.id, l.line_no`),
    balances: await q(sql`
      SELECT livemode, ledger_account, currency, sum(balance)::bigint AS balance FROM ledger_balances
      WHERE account_id = ${account} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
    settlements: await q(sql`SELECT count(*)::int AS n FROM ledger_settlements WHERE account_id = ${account}`),
    keys: (
      await q(sql`
        SELECT key, recovery_point, locked_at IS NULL AS unlocked, response_status, response_body, request_id IS NOT NULL AS has_request
        FROM idempotency_keys WHERE account_id = ${account} ORDER BY key`)
    ).map((r: Row) => ({ ...r, response_body: r.response_body === null ? null : JSON.parse(String(r.response_body)) })),
  };
}

const ISO = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d(:?\d\d)?)$/;
/** A time from the pinned clock as its distance from START; one from the database's own clock (now()) as "wall". */
function times(value: unknown): unknown {
  const rel = (ms: number) => (Math.abs(ms - START) < NEAR_MS ? `T+${ms - START}` : 'wall');
  if (value instanceof Date) return rel(value.getTime());
  if (typeof value === 'string') return ISO.test(value) ? rel(Date.parse(value.replace(' ', 'T').replace(/\+00$/, 'Z'))) : value;
  if (Array.isArray(value)) return value.map(times);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, times(v)]));
  return value;
}

const IGNORED = new Set([...SET_ASIDE, 'request_id']);
/** The footprint as lines to compare: its own base URL named BASE, times relative, ids by first appearance. */
function comparable(side: Side, print: Awaited<ReturnType<typeof footprint>>): Record<string, string> {
  const tokens = new Map<string, number>();
  // The simulated processors' references and challenge ids are their own random names.
  const text = JSON.stringify(print)
    .replaceAll(side.h.url, 'BASE')
    .replaceAll(/\b(simulator_[ab]_[a-z]+)_[0-9A-Za-z]+/g, '$1_X')
    .replaceAll(/\b[0-9a-f]{32}\b/g, 'HEX');
  const plain = times(JSON.parse(text)) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(plain).map(([name, v]) => [name, normalised(v, tokens, IGNORED)]));
}

let sequence = 0;

/** Counts the one-statement texts a service's pool sends: the fast side must take them, the other never. */
function oneStatementsSent(h: ServiceFixture): () => number {
  const texts = new Set([CREATE_ORDER, ...AT_ONCE_PREPARED].map((s) => s.text));
  const client = (h.db as unknown as { $client: { query: (...args: unknown[]) => unknown } }).$client;
  const send = client.query;
  let sent = 0;
  client.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0] as string | { text?: string };
    if (texts.has(typeof q === 'string' ? q : (q?.text ?? ''))) sent++;
    return send.apply(this, args);
  };
  return () => sent;
}
let sentByFast: () => number;
let sentByGeneral: () => number;
beforeAll(() => {
  sentByFast = oneStatementsSent(fast);
  sentByGeneral = oneStatementsSent(general);
});

describe('the one-statement paths against the general path', () => {
  it('leave the same answers, rows, events, ledger and idempotency records for any sequence of requests', async () => {
    const sides = (): [Side, Side] =>
      [
        [fast, fastClock],
        [general, generalClock],
      ].map(([h, clock]) => ({ h, clock, tenant: undefined as never, orders: [], payments: [], sent: [], answers: [] }) as unknown as Side) as [Side, Side];
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 3, maxLength: 14 }), async (ops) => {
        const run_ = ++sequence;
        const [a, b] = sides();
        for (const side of [a, b]) {
          side.tenant = await side.h.newTenant(`differential ${run_}`);
          side.clock.set(START);
        }
        for (const [i, o] of ops.entries()) {
          const n = `${run_}-${i}`;
          a.answers.push(await run(a, o, n));
          b.answers.push(await run(b, o, n));
        }
        const [left, right] = [comparable(a, await footprint(a)), comparable(b, await footprint(b))];
        for (const part of Object.keys(left)) expect(left[part], `${part} after ${JSON.stringify(ops)}`).toBe(right[part]);
      }),
      { numRuns: 20, verbose: 1 },
    );
    expect(sentByFast()).toBeGreaterThan(0);
    expect(sentByGeneral()).toBe(0);
  }, 120_000);
});
