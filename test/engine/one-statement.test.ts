// The one-statement card payment (src/domain/payments/one-statement.ts): it must leave exactly what the
// general path leaves, and whenever it cannot finish in its statement (key taken, order changed,
// payment changed, key taken over) it must write nothing and hand over to the general path.
import { and, eq, sql, type SQL } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import crypto from 'node:crypto';
import type { Row } from '../support/helpers.js';
import { CARDS, cardMethod, newOrder, pay } from '../support/payments.js';
import { claimKey, fingerprint } from '../../src/idempotency/store.js';
import type { RequestContext } from '../../src/kernel/context.js';
import { newPayment } from '../../src/domain/payments/service.js';
import { runMovement } from '../../src/movement/engine.js';
import { atOnceStatementsDuring } from '../support/one-statement.js';
import { finishSucceededAtOnce } from '../../src/domain/payments/finish-at-once.js';
import { parseId } from '../../src/kernel/ids.js';
import { checkLedger } from '../../src/ledger/check.js';
import { paymentOrders, payments } from '../../src/storage/schema.js';
import { useService } from '../support/fixtures.js';
const h = useService();
const { api } = h;
let accountUuid: string;
beforeAll(() => {
  accountUuid = parseId('acct', h.tenant.accountId)!;
});
const rows = (q: SQL) => h.query(q);

/** Everything one payment left behind, with its ids, times and references masked. */
async function footprint(paymentId: string, orderId: string) {
  const uuid = parseId('pay', paymentId)!;
  const [payment] = await rows(sql`SELECT * FROM payments WHERE id = ${uuid}`);
  const [order] = await rows(sql`SELECT * FROM payment_orders WHERE account_id = ${payment!.account_id} AND id = ${payment!.payment_order_id}`);
  const events = await rows(sql`
    SELECT type, data, request_id IS NOT NULL AS has_request, idempotency_key IS NOT NULL AS has_key FROM events
    WHERE account_id = ${payment!.account_id} AND object_id IN (${paymentId}, ${orderId}) ORDER BY id`);
  const journal = await rows(sql`
    SELECT e.type, e.currency, e.source_type, l.line_no, l.ledger_account, l.amount
    FROM journal_entries e JOIN journal_lines l ON l.account_id = e.account_id AND l.entry_id = e.id
    WHERE e.account_id = ${payment!.account_id} AND e.source_id = ${uuid} ORDER BY l.line_no`);
  const [key] = await rows(sql`
    SELECT recovery_point, response_status, locked_at IS NULL AS unlocked, response_body FROM idempotency_keys
    WHERE account_id = ${payment!.account_id} AND response_body LIKE ${'%' + paymentId + '%'}`);
  const mask = (value: unknown): unknown =>
    JSON.parse(
      JSON.stringify(value)
        .replaceAll(paymentId, 'pay_X')
        .replaceAll(orderId, 'ord_X')
        .replaceAll(/simulator_a_ch_[0-9A-Za-z_-]+/g, 'simulator_a_ch_X')
        .replaceAll(/\d{4}-\d\d-\d\dT[0-9:.]+Z/g, 'T')
        .replaceAll(/"duration_ms":[0-9.]+/g, '"duration_ms":0')
        .replaceAll(/order-[a-z]-[0-9a-f-]+/g, 'order-X')
        .replaceAll(/\/checkout\/[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}/g, '/checkout/X'),
    );
  const { id: _p, payment_order_id: _o, created_at: _c, updated_at: _u, next_status_check_at: _n, connector_reference: _r, ...paymentRest } = payment!;
  const { id: _oi, reference: _ref, created_at: _oc, updated_at: _ou, expires_at: _oe, checkout_token: _ot, ...orderRest } = order!;
  return {
    masked: mask({ payment: paymentRest, order: orderRest, events, journal, key: { ...key, response_body: JSON.parse(key!.response_body) } }) as Row,
    storedAnswer: key!.response_body as string,
  };
}

describe('the one-statement card payment', () => {
  it('leaves exactly what the general path leaves: rows, events, journal and the stored answer', async () => {
    const reference = (tag: string) => `order-${tag}-${crypto.randomUUID()}`;
    const fast = await newOrder(api, { amount: 4321, currency: 'EUR', reference: reference('a') });
    // Keys in an order jsonb does not keep: the answer must not depend on the path.
    const metadata = { zeta: '1', cart: '2', a: '3' };
    const { result: fastRes, sent } = await atOnceStatementsDuring(h.db, () => pay(api, fast.id, CARDS.success, { metadata }));
    expect(fastRes.status, fastRes.text).toBe(201);
    expect(sent).toEqual(['readOrder', 'createPayment', 'finishSucceeded']);

    // The general path, called as the route calls it once the key is claimed the ordinary way.
    const general = await newOrder(api, { amount: 4321, currency: 'EUR', reference: reference('b') });
    const ctx: RequestContext = { accountId: accountUuid, livemode: false, requestId: 'req_general_path' };
    const input = { payment_order: general.id, payment_method: cardMethod(CARDS.success), metadata } as any;
    const claim = await claimKey(h.db, ctx, `general-${crypto.randomUUID()}`, fingerprint('POST', '/v1/payments', input), {
      retentionS: 3600,
      lockTimeoutS: 60,
    });
    expect(claim.kind).toBe('owner');
    ctx.idempotency = (claim as { claim: RequestContext['idempotency'] }).claim;
    const { result: outcome, sent: sentByGeneral } = await atOnceStatementsDuring(h.db, () => runMovement(h.db, h.service.payments, ctx, newPayment(h.db, h.service.payments, ctx, input)));
    expect(outcome.status).toBe(201);
    expect(sentByGeneral).toEqual([]);
    const generalPayment = JSON.parse(outcome.body);

    const a = await footprint(fastRes.body.id, fast.id);
    const b = await footprint(generalPayment.id, general.id);
    expect(a.masked).toEqual(b.masked);
    expect(a.masked.payment.status).toBe('succeeded');
    expect(a.masked.events.map((e: Row) => e.type)).toEqual(['payment_order.created', 'payment_order.processing', 'payment.created', 'payment_order.paid', 'payment.succeeded']);
    expect(a.masked.journal).toHaveLength(2);
    expect(a.masked.key).toMatchObject({ recovery_point: 'finished', response_status: 201, unlocked: true });
    // The stored answer is the very bytes the client got.
    expect(a.storedAnswer).toBe(fastRes.text);
    // …and the same bytes a GET sends, metadata keys included.
    expect((await api.get(`/v1/payments/${fastRes.body.id}`)).text).toBe(fastRes.text);
    expect(Object.keys(fastRes.body.metadata)).toEqual(Object.keys(generalPayment.metadata));
    expect((await checkLedger(h.db, { accountId: accountUuid })).ok).toBe(true);
  });

  it('a key used before for another order rolls the whole statement back: the second order stays open and untouched', async () => {
    const first = await newOrder(api);
    const second = await newOrder(api);
    const key = crypto.randomUUID();
    const res1 = await api.post('/v1/payments', { payment_order: first.id, payment_method: cardMethod(CARDS.success) }, { idempotencyKey: key });
    expect(res1.status, res1.text).toBe(201);
    const res2 = await api.post('/v1/payments', { payment_order: second.id, payment_method: cardMethod(CARDS.success) }, { idempotencyKey: key });
    expect(res2.status, res2.text).toBe(422);
    expect(res2.body.error.code).toBe('idempotency_key_reused');
    const order = (await api.get(`/v1/payment-orders/${second.id}`)).body;
    expect(order).toMatchObject({ status: 'open', version: 1, amount_paid: 0 });
    const list = (await api.get(`/v1/payments?payment_order=${second.id}`)).body;
    expect(list.data).toHaveLength(0);
  });

  it('a replay of a finished payment sends the same bytes and pays nothing more', async () => {
    const order = await newOrder(api);
    const key = crypto.randomUUID();
    const body = { payment_order: order.id, payment_method: cardMethod(CARDS.success) };
    const first = await api.post('/v1/payments', body, { idempotencyKey: key });
    const again = await api.post('/v1/payments', body, { idempotencyKey: key });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await api.get(`/v1/payments?payment_order=${order.id}`)).body.data).toHaveLength(1);
  });

  it('concurrent twins with one key: one payment, one charge, the same answer or 409', async () => {
    const order = await newOrder(api, { amount: 777 });
    const key = crypto.randomUUID();
    const body = { payment_order: order.id, payment_method: cardMethod(CARDS.success) };
    const answers = await Promise.all(Array.from({ length: 12 }, () => api.post('/v1/payments', body, { idempotencyKey: key })));
    const ok = answers.filter((r) => r.status === 201);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.text)).size).toBe(1);
    for (const r of answers) expect([201, 409]).toContain(r.status);
    const payments = (await api.get(`/v1/payments?payment_order=${order.id}`)).body.data;
    expect(payments).toHaveLength(1);
    expect(payments[0].attempts).toHaveLength(1);
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 777 });
  });

  it('concurrent payments of one order with different keys: exactly one is taken, the rest answer order_not_payable', async () => {
    const order = await newOrder(api, { amount: 1234, currency: 'GBP' });
    const before = await rows(sql`SELECT coalesce(sum(amount), 0)::bigint AS total FROM journal_lines WHERE account_id = ${accountUuid} AND ledger_account = 'merchant_available'`);
    const answers = await Promise.all(Array.from({ length: 12 }, () => pay(api, order.id)));
    const created = answers.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    for (const r of answers.filter((x) => x.status !== 201)) {
      expect(r.status, r.text).toBe(422);
      expect(r.body.error.code).toBe('order_not_payable');
    }
    expect((await api.get(`/v1/payments?payment_order=${order.id}`)).body.data).toHaveLength(1);
    const after = await rows(sql`SELECT coalesce(sum(amount), 0)::bigint AS total FROM journal_lines WHERE account_id = ${accountUuid} AND ledger_account = 'merchant_available'`);
    expect(Number(before[0]!.total) - Number(after[0]!.total)).toBe(1234);
    expect((await checkLedger(h.db, { accountId: accountUuid })).ok).toBe(true);
  });
});

describe('the one-statement finish refuses to write half of its work', () => {
  async function pendingPayment() {
    const created = await newOrder(api, { amount: 5000 });
    const res = await pay(api, created.id, CARDS.pending);
    expect(res.status, res.text).toBe(201);
    expect(res.body.status).toBe('pending');
    const db = h.db;
    const [payment] = await db.select().from(payments).where(eq(payments.id, parseId('pay', res.body.id)!));
    const [order] = await db.select().from(paymentOrders).where(and(eq(paymentOrders.accountId, accountUuid), eq(paymentOrders.id, payment!.paymentOrderId)));
    // As phase 1 left it: the finish is asked to settle a payment that no connector has answered yet.
    return { payment: { ...payment!, attempts: [] }, order: order!, view: res.body };
  }

  async function state(paymentUuid: string) {
    const [p] = await rows(sql`SELECT status, version, payment_order_id FROM payments WHERE id = ${paymentUuid}`);
    const [o] = await rows(sql`SELECT status, version FROM payment_orders WHERE id = ${p!.payment_order_id}`);
    const [e] = await rows(sql`SELECT count(*)::int AS n FROM journal_entries WHERE source_id = ${paymentUuid}`);
    const [ev] = await rows(sql`SELECT count(*)::int AS n FROM events WHERE account_id = ${accountUuid} AND type IN ('payment.succeeded', 'payment_order.paid')`);
    const [k] = await rows(sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE account_id = ${accountUuid} AND key = 'owned-key' AND response_status IS NOT NULL`);
    return { payment: p!.status, version: p!.version, order: o!.status, orderVersion: o!.version, entries: e!.n, settledEvents: ev!.n, keyAnswered: k!.n };
  }

  /** A key held by a request in progress, as the one-statement finish expects to find it. */
  async function ownedKey(): Promise<RequestContext> {
    const ctx: RequestContext = { accountId: accountUuid, livemode: false, requestId: 'req_owned' };
    await rows(sql`DELETE FROM idempotency_keys WHERE account_id = ${accountUuid} AND key = 'owned-key'`);
    const claim = await claimKey(h.db, ctx, 'owned-key', 'print', { retentionS: 3600, lockTimeoutS: 60 });
    expect(claim.kind).toBe('owner');
    return { ...ctx, idempotency: { key: 'owned-key', recoveryPoint: 'payment_created:x' } };
  }

  const succeeded = { kind: 'succeeded', connector: 'simulator_a', connectorReference: 'simulator_a_ch_test' } as const;

  it('a payment changed since its first phase: nothing is written and the caller takes the general path', async () => {
    const { payment, order } = await pendingPayment();
    const before = await state(payment.id);
    const ctx: RequestContext = { accountId: accountUuid, livemode: false, requestId: 'req_x', idempotency: { key: 'k', recoveryPoint: 'x' } };
    const stale = { ...payment, version: payment.version - 1 };
    expect(await finishSucceededAtOnce(h.db, ctx, { payment: stale, order }, succeeded, [], new Date())).toBeUndefined();
    expect(await state(payment.id)).toEqual(before);
  });

  it('the order changed under an owned key: the statement aborts and rolls back the payment it had updated', async () => {
    const { payment, order } = await pendingPayment();
    const ctx = await ownedKey();
    const before = await state(payment.id);
    expect(before).toMatchObject({ payment: 'pending', order: 'processing', entries: 0, keyAnswered: 0 });
    expect(await finishSucceededAtOnce(h.db, ctx, { payment, order: { ...order, version: order.version + 5 } }, succeeded, [], new Date())).toBeUndefined();
    expect(await state(payment.id)).toEqual(before);
  });

  it('a key no longer ours (taken over): the statement aborts and rolls back the payment and the order', async () => {
    const { payment, order } = await pendingPayment();
    await ownedKey();
    const before = await state(payment.id);
    const other: RequestContext = { accountId: accountUuid, livemode: false, requestId: 'req_someone_else', idempotency: { key: 'owned-key', recoveryPoint: 'x' } };
    expect(await finishSucceededAtOnce(h.db, other, { payment, order }, succeeded, [], new Date())).toBeUndefined();
    expect(await state(payment.id)).toEqual(before);
  });

  it('everything as committed and the key owned: one statement settles payment, order, journal, events and answer', async () => {
    const { payment, order } = await pendingPayment();
    const ctx = await ownedKey();
    const before = await state(payment.id);
    const outcome = await finishSucceededAtOnce(h.db, ctx, { payment, order }, succeeded, [], new Date());
    expect(outcome?.status).toBe(201);
    expect(JSON.parse(outcome!.body)).toMatchObject({ status: 'succeeded', connector_reference: 'simulator_a_ch_test', version: payment.version + 1 });
    expect(await state(payment.id)).toEqual({
      payment: 'succeeded',
      version: payment.version + 1,
      order: 'paid',
      orderVersion: order.version + 1,
      entries: 1,
      settledEvents: before.settledEvents + 2,
      keyAnswered: 1,
    });
    expect((await checkLedger(h.db, { accountId: accountUuid })).ok).toBe(true);
  });
});
