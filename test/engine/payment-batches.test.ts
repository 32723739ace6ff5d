// Concurrent card payments share their first- and third-phase statements (src/storage/batched.ts,
// used by src/domain/payments/one-statement.ts and finish-at-once.ts), and a saved card charged
// off session takes the same fast path. What each request gets back and what is stored must be
// exactly what it would be alone: one payment per order, each answer stored byte for byte, every
// balance row holding the sum of its payments, and one payment's trouble failing no other.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { CARDS, cardMethod, newOrder } from '../support/payments.js';
import { newCustomer, savedCard } from '../support/customers.js';
import { atOnceStatementsDuring } from '../support/one-statement.js';
import { parseId } from '../../src/kernel/ids.js';
import { checkLedger } from '../../src/ledger/check.js';
import { useService } from '../support/fixtures.js';

const h = useService();
const { api } = h;
let accountUuid: string;
beforeAll(() => {
  accountUuid = parseId('acct', h.tenant.accountId)!;
});

const balanceOf = async (ledgerAccount: string) => {
  const [row] = await h.query(sql`SELECT coalesce(sum(balance), 0)::bigint AS total FROM ledger_balances
    WHERE account_id = ${accountUuid} AND livemode = false AND ledger_account = ${ledgerAccount} AND currency = 'EUR'`);
  return Number(row!.total);
};

const storedAnswer = async (key: string) => {
  const [row] = await h.query(sql`SELECT response_status, response_body FROM idempotency_keys WHERE account_id = ${accountUuid} AND key = ${key}`);
  return row;
};

describe('card payments under load', () => {
  it('share their statements and commits, and each is paid once, answered and booked as alone', async () => {
    const n = 24;
    const orders = await Promise.all(Array.from({ length: n }, (_, i) => newOrder(api, { amount: 1000 + i, currency: 'EUR' })));
    const clearingBefore = await balanceOf('processor_clearing');
    const keys = orders.map(() => crypto.randomUUID());
    const { result, counts } = await atOnceStatementsDuring(h.db, () =>
      Promise.all(orders.map((o, i) => api.post('/v1/payments', { payment_order: o.id, payment_method: cardMethod(CARDS.success) }, { idempotencyKey: keys[i] }))),
    );
    for (const res of result) expect(res.status, res.text).toBe(201);
    // Fewer statements than payments: concurrent ones went together.
    expect(counts.readOrder).toBeLessThan(n);
    expect(counts.createPayment).toBeLessThan(n);
    expect(counts.finishSucceeded).toBeLessThan(n);
    for (const [i, res] of result.entries()) {
      expect(res.body).toMatchObject({ status: 'succeeded', amount: 1000 + i, payment_order: orders[i]!.id });
      expect(await storedAnswer(keys[i]!)).toEqual({ response_status: 201, response_body: res.text });
      const order = (await api.get(`/v1/payment-orders/${orders[i]!.id}`)).body;
      expect(order).toMatchObject({ status: 'paid', amount_paid: 1000 + i });
    }
    const total = orders.reduce((sum, _, i) => sum + 1000 + i, 0);
    expect((await balanceOf('processor_clearing')) - clearingBefore).toBe(total);
    expect((await checkLedger(h.db, { accountId: accountUuid })).ok).toBe(true);
  });

  it('a batch with one payment whose order was taken meanwhile pays the others and refuses that one alone', async () => {
    const orders = await Promise.all(Array.from({ length: 6 }, () => newOrder(api, { amount: 2500, currency: 'EUR' })));
    // Two requests for the first order, with different keys: exactly one pays it.
    const bodies = [orders[0]!, ...orders].map((o) => ({ payment_order: o.id, payment_method: cardMethod(CARDS.success) }));
    const result = await Promise.all(bodies.map((b) => api.post('/v1/payments', b, { idempotencyKey: crypto.randomUUID() })));
    const first = result.slice(0, 2).map((r) => r.status).sort();
    expect(first).toEqual([201, 422]);
    expect(result.slice(0, 2).find((r) => r.status === 422)!.body.error.code).toBe('order_not_payable');
    for (const res of result.slice(2)) expect(res.status, res.text).toBe(201);
    const paid = (await api.get(`/v1/payments?payment_order=${orders[0]!.id}`)).body.data;
    expect(paid).toHaveLength(1);
    expect((await checkLedger(h.db, { accountId: accountUuid })).ok).toBe(true);
  });

  it('a retry of a declined payment among new ones replays alone and fails no statement of theirs', async () => {
    // Declined, its order is open again: the retry's order could move, only its key stops it.
    const paidBefore = await newOrder(api);
    const key = crypto.randomUUID();
    const retried = { payment_order: paidBefore.id, payment_method: cardMethod(CARDS.declined) };
    const first = await api.post('/v1/payments', retried, { idempotencyKey: key });
    expect(first.body.status, first.text).toBe('failed');
    expect((await api.get(`/v1/payment-orders/${paidBefore.id}`)).body.status).toBe('open');
    const orders = await Promise.all(Array.from({ length: 8 }, () => newOrder(api, { amount: 3000, currency: 'EUR' })));
    const { result, refused } = await atOnceStatementsDuring(h.db, () =>
      Promise.all([
        api.post('/v1/payments', retried, { idempotencyKey: key }),
        ...orders.map((o) => api.post('/v1/payments', { payment_order: o.id, payment_method: cardMethod(CARDS.success) }, { idempotencyKey: crypto.randomUUID() })),
      ]),
    );
    expect(result[0]!.text).toBe(first.text);
    for (const res of result.slice(1)) expect(res.status, res.text).toBe(201);
    // The retry's key was skipped inside its batch: no statement was refused and sent again.
    expect(refused).toBe(0);
    expect((await api.get(`/v1/payments?payment_order=${paidBefore.id}`)).body.data).toHaveLength(1);
  });

  it('a saved card charged off session takes the fast path: paid, booked, its card unsealed with an audit row each time, its use stored', async () => {
    const customer = await newCustomer(api);
    const card = await savedCard(h.db, { accountId: h.tenant.accountId, livemode: false }, customer.id);
    const body = (o: { id: string }) => ({
      payment_order: o.id,
      payment_method: { type: 'saved_card', saved_card: { id: card.id } },
      off_session: true,
      off_session_reason: 'unscheduled',
    });
    // Its first payment teaches the card its issuing country, which the general finish writes on it.
    const teaching = await api.post('/v1/payments', body(await newOrder(api)), { idempotencyKey: crypto.randomUUID() });
    expect(teaching.status, teaching.text).toBe(201);
    const [learnt] = await h.query(sql`SELECT card_issuing_country FROM payment_methods WHERE account_id = ${accountUuid} AND id = ${parseId('pm', card.id)}`);
    expect(learnt!.card_issuing_country).toBeTruthy();
    const orders = await Promise.all(Array.from({ length: 4 }, () => newOrder(api, { amount: 4990, currency: 'EUR' })));
    const { result, counts } = await atOnceStatementsDuring(h.db, () => Promise.all(orders.map((o) => api.post('/v1/payments', body(o), { idempotencyKey: crypto.randomUUID() }))));
    for (const res of result) expect(res.status, res.text).toBe(201);
    expect(counts.readOrder).toBeGreaterThan(0);
    expect(counts.createPayment).toBeGreaterThan(0);
    expect(counts.finishSucceeded).toBeGreaterThan(0);
    const payment = result[0]!.body;
    expect(payment).toMatchObject({ status: 'succeeded', payment_method: { type: 'card', card: { last4: '4242' } } });
    const [stored] = await h.query(sql`SELECT payment_method FROM payments WHERE account_id = ${accountUuid} AND id = ${parseId('pay', payment.id as string)}`);
    expect(stored!.payment_method).toMatchObject({ saved_card: { payment_method: parseId('pm', card.id), off_session: 'unscheduled' } });
    // The card was unsealed for the charge, each time with its audit row.
    const ids = result.map((r) => r.body.id as string).join(',');
    const [audit] = await h.query(sql`SELECT count(DISTINCT movement_id)::int AS n FROM vault_unsealings
      WHERE account_id = ${accountUuid} AND movement_id = ANY(string_to_array(${ids}, ','))`);
    expect(audit!.n).toBe(orders.length);
    const events = await h.query(sql`SELECT type FROM events WHERE account_id = ${accountUuid} AND object_id IN (${payment.id}, ${orders[0]!.id}) ORDER BY id`);
    expect(events.map((e) => e.type)).toEqual(['payment_order.created', 'payment_order.processing', 'payment.created', 'payment_order.paid', 'payment.succeeded']);
    // A GET answers the very bytes the request got.
    expect((await api.get(`/v1/payments/${payment.id}`)).text).toBe(result[0]!.text);
    expect((await checkLedger(h.db, { accountId: accountUuid })).ok).toBe(true);
  });

  it('a saved card the general path refuses (on-session only, charged off session) is refused as before, nothing written', async () => {
    const customer = await newCustomer(api);
    const card = await savedCard(h.db, { accountId: h.tenant.accountId, livemode: false }, customer.id, { usage: 'on_session' });
    const order = await newOrder(api);
    const res = await api.post(
      '/v1/payments',
      { payment_order: order.id, payment_method: { type: 'saved_card', saved_card: { id: card.id } }, off_session: true },
      { idempotencyKey: crypto.randomUUID() },
    );
    expect(res.status, res.text).toBe(422);
    expect(res.body.error.code).toBe('payment_method_on_session_only');
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'open', version: 1 });
  });
});
