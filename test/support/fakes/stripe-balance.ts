// The fake Stripe's balance transactions (GET /v1/balance_transactions), as Stripe lists them:
// newest first, `limit` (default 10, at most 100) a page, `starting_after` a transaction id,
// `created[gte|gt|lte|lt]` in Unix seconds, `expand[]=data.source` replacing each source id by its
// object. Each is Stripe's published example balance_transaction (fixtures/stripe/objects.json)
// with the fields of one movement: a succeeded PaymentIntent's charge (its fee 2.9 % + 30, as
// Stripe's standard card pricing), a refund; plantBalanceTransaction adds a test's own.
import examples from '../fixtures/stripe/objects.json' with { type: 'json' };

type Obj = Record<string, any>;

export interface BalanceBooks {
  intents: Map<string, Obj>;
  refunds: Map<string, Obj>;
}

/** Transactions a test adds as they are (a charge Stripe holds and the service never made), per fake. */
const planted = new WeakMap<BalanceBooks, Obj[]>();

export function plantBalanceTransaction(books: BalanceBooks, transaction: Obj): void {
  planted.set(books, [...(planted.get(books) ?? []), { ...structuredClone(examples.balance_transaction), ...transaction }]);
}

/** Stripe's standard card fee, in the smallest unit. */
export const stripeFee = (amount: number) => Math.round(amount * 0.029) + 30;

function transactions(books: BalanceBooks): Obj[] {
  const out: Obj[] = [];
  const base = (over: Obj) => ({ ...structuredClone(examples.balance_transaction), exchange_rate: null, fee_details: [], status: 'pending', ...over });
  for (const intent of books.intents.values()) {
    if (intent.status !== 'succeeded' || !intent.latest_charge) continue;
    const amount = intent.amount_received ?? intent.amount;
    const fee = stripeFee(amount);
    const charge = { id: intent.latest_charge, object: 'charge', amount, currency: intent.currency, payment_intent: intent.id, metadata: {} };
    out.push(base({ id: `txn_${intent.latest_charge}`, amount, fee, net: amount - fee, currency: intent.currency, type: 'charge', reporting_category: 'charge', created: Math.floor(intent._at / 1000), source: charge, description: null }));
  }
  for (const refund of books.refunds.values()) {
    out.push(base({ id: `txn_${refund.id}`, amount: -refund.amount, fee: 0, net: -refund.amount, currency: refund.currency, type: 'refund', reporting_category: 'refund', created: refund.created, source: refund, description: null }));
  }
  return [...out, ...(planted.get(books) ?? [])].sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1));
}

export function listBalanceTransactions(books: BalanceBooks, url: URL): { status: number; body: Obj } {
  const q = url.searchParams;
  const limit = Number(q.get('limit') ?? 10);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return { status: 400, body: { error: { type: 'invalid_request_error', message: 'Invalid integer: limit', param: 'limit' } } };
  const bound = (op: string) => (q.get(`created[${op}]`) === null ? undefined : Number(q.get(`created[${op}]`)));
  const [gte, gt, lte, lt] = ['gte', 'gt', 'lte', 'lt'].map(bound);
  let all = transactions(books).filter((t) => (gte === undefined || t.created >= gte) && (gt === undefined || t.created > gt) && (lte === undefined || t.created <= lte) && (lt === undefined || t.created < lt));
  const after = q.get('starting_after');
  if (after) all = all.slice(all.findIndex((t) => t.id === after) + 1);
  const expand = [...q.entries()].some(([k, v]) => k.startsWith('expand') && v === 'data.source');
  const page = all.slice(0, limit).map((t) => ({ ...t, source: expand || typeof t.source === 'string' ? t.source : t.source.id }));
  return { status: 200, body: { object: 'list', url: '/v1/balance_transactions', has_more: all.length > limit, data: page } };
}
