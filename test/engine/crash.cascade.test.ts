// A service killed mid-cascade (docs/declines.md "One charge, whatever crashes"): a payment routed
// [Stripe, Adyen] cascading retry_later, with Stripe's velocity card (declined there, approved at
// Adyen), is killed with SIGKILL at each point of its cascade, and the same request is retried on
// another process. It must resume at the right attempt — attempt 2 under `pay_…_2` at Adyen — and
// hold one authorisation in all at the fakes' own books. PostgreSQL only (several processes).
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { call, client, isPostgres, orderBody, type Api, type Tenant } from '../support/helpers.js';
import { cardMethod } from '../support/payments.js';
import { startChild, sendWhileLocked, type Child } from '../support/processes.js';
import { useDatabase } from '../support/fixtures.js';
import { STRIPE_CARDS } from '../support/fakes/stripe.js';
import type { Connected } from '../connectors/contract/harness.js';
import { useStripeAndAdyen } from '../connectors/contract/stripe-and-adyen.js';


describe.skipIf(!isPostgres)('a service killed mid-cascade (Stripe → Adyen fakes)', () => {
  const both = useStripeAndAdyen();
  const { stripe, adyen } = both;
  const h = useDatabase({ postgresOnly: true });
  let tenant: Tenant;
  let survivor: Child;
  let api: Api;
  let atStripe: Connected;
  let atAdyen: Connected;
  const env = () => ({ DATABASE_URL: h.databaseUrl!, IDEMPOTENCY_LOCK_TIMEOUT_S: '3', CONNECTOR_TIMEOUT_MS: '700', ...both.processEnv() });
  beforeAll(async () => {
    tenant = await h.createTenant('Cascade crash tenant');
    survivor = h.track(await startChild(env()));
    api = client(survivor.url, tenant.testKey);
    atStripe = await stripe.connect(api, survivor.url);
    atAdyen = await adyen.connect(api, survivor.url);
    const body = { rules: [{ connectors: [atStripe.route, atAdyen.route], cascade: { on: ['retry_later'], max_attempts: 2 } }] };
    const res = await api.request('PUT', '/v1/routing', { body });
    expect(res.status, res.text).toBe(200);
  }, 120_000);

  it.each(['payment_connector_answered', 'payment_attempt_persisted', 'payment_attempt_answered'])(
    'killed at %s: the retry resumes at attempt 2 at Adyen, one authorisation in all',
    async (crashAfter) => {
      const order = await call(survivor.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: crypto.randomUUID(), body: orderBody({ amount: 2500 }) });
      expect(order.status, order.text).toBe(201);
      const idempotencyKey = `cascade-crash-${crashAfter}-${order.body.id}`;
      const body = { payment_order: order.body.id, payment_method: cardMethod(STRIPE_CARDS.velocity) };
      const child = h.track(await startChild({ ...env(), CRASH_AFTER: crashAfter }));
      const died = await call(child.url, 'POST', '/v1/payments', { key: tenant.testKey, idempotencyKey, body }).catch((err: Error) => err);
      expect(died).toBeInstanceOf(Error);
      expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
      const [left] = await h.query(sql`SELECT id, status, connector, attempt_number FROM payments WHERE payment_order_id = ${parseId('ord', order.body.id)!}`);
      expect(left).toMatchObject({ status: 'pending', connector: null, attempt_number: crashAfter === 'payment_connector_answered' ? 1 : 2 });

      const res = await sendWhileLocked(() => call(survivor.url, 'POST', '/v1/payments', { key: tenant.testKey, idempotencyKey, body }));
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ status: 'succeeded', connector: atAdyen.connector });
      const id = res.body.id as string;
      expect(parseId('pay', id)).toBe(String(left!.id));
      const [after] = await h.query(sql`SELECT attempt_number FROM payments WHERE id = ${left!.id}`);
      expect(after!.attempt_number).toBe(2);
      // The fakes' own books: Stripe's declined attempt 1, Adyen's one authorisation of attempt 2.
      expect(await stripe.books!.chargesHeld(id)).toBe(1);
      expect(await stripe.books!.chargesHeld(`${id}_2`)).toBe(0);
      expect(await adyen.books!.chargesHeld(id)).toBe(0);
      expect(await adyen.books!.chargesHeld(`${id}_2`)).toBe(1);
      const [paid] = await h.query(sql`SELECT status, amount_paid FROM payment_orders WHERE id = ${parseId('ord', order.body.id)!}`);
      expect(paid).toEqual({ status: 'paid', amount_paid: 2500 });
      const entries = await h.query(sql`SELECT type FROM journal_entries WHERE source_id = ${left!.id}`);
      expect(entries).toEqual([{ type: 'payment' }]);
    },
    120_000,
  );
});
