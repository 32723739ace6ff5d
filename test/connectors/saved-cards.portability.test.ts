// A saved card is ours, not a processor's: saved by a payment at Stripe it is charged off session
// by Adyen, and the other way round, each citing the network transaction id the other processor
// answered (the fakes refuse a merchant-initiated payment without it).
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { created } from '../support/helpers.js';
import { newOrder, pay } from '../support/payments.js';
import { parseId } from '../../src/kernel/ids.js';
import { stripeHarness } from './contract/stripe.js';
import { adyenHarness } from './contract/adyen.js';
import type { Connected } from './contract/harness.js';

const stripe = stripeHarness();
const adyen = adyenHarness();
beforeAll(async () => {
  await stripe.start();
  await adyen.start();
});
afterAll(async () => {
  await stripe.close();
  await adyen.close();
});
const h = useService({ late: () => ({ settings: { circuitBreaker: { failureThreshold: 1000 }, ...stripe.service().settings, ...adyen.service().settings } }) });

const routeTo = async (processor: Connected) => expect((await h.api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [processor.route] }] } })).status).toBe(200);

async function saveAt(processor: Connected) {
  await routeTo(processor);
  const c = await created(h.api, '/v1/customers', { email: 'ada@example.com' });
  const res = await pay(h.api, (await newOrder(h.api)).id, '4242424242424242', { customer: c.id, setup_future_usage: 'off_session' });
  expect(res.body).toMatchObject({ status: 'succeeded', connector: processor.connector });
  const [row] = await h.query(sql`SELECT network_transaction_id FROM payment_methods WHERE id = ${parseId('pm', res.body.payment_method_saved)}`);
  expect(row!.network_transaction_id).toMatch(/^\d{13,15}$/);
  return { pm: res.body.payment_method_saved as string, ntid: row!.network_transaction_id as string };
}

async function chargeOffSessionAt(processor: Connected, pm: string) {
  await routeTo(processor);
  const res = await h.api.post('/v1/payments', { payment_order: (await newOrder(h.api)).id, payment_method: { type: 'saved_card', saved_card: { id: pm } }, off_session: true });
  expect(res.body, res.text).toMatchObject({ status: 'succeeded', connector: processor.connector });
  return res.body;
}

/** The network transaction id the payment's request cited (what the fake then checked was there). */
async function citedBy(paymentId: string) {
  const [row] = await h.query(sql`SELECT payment_method->'saved_card'->>'network_transaction_id' AS ntid FROM payments WHERE id = ${parseId('pay', paymentId)}`);
  return row!.ntid;
}

describe('saved cards across processors', () => {
  let atStripe: Connected;
  let atAdyen: Connected;
  beforeAll(async () => {
    atStripe = await stripe.connect(h.api, h.url);
    atAdyen = await adyen.connect(h.api, h.url);
  });

  it('a card saved through Stripe is charged off session by Adyen, citing Stripe’s network transaction id', async () => {
    const { pm, ntid } = await saveAt(atStripe);
    const payment = await chargeOffSessionAt(atAdyen, pm);
    expect(payment.attempts).toHaveLength(1);
    expect(await citedBy(payment.id)).toBe(ntid);
  });

  it('a card saved through Adyen is charged off session by Stripe, citing Adyen’s networkTxReference', async () => {
    const { pm, ntid } = await saveAt(atAdyen);
    const payment = await chargeOffSessionAt(atStripe, pm);
    expect(payment.attempts).toHaveLength(1);
    expect(await citedBy(payment.id)).toBe(ntid);
  });
});
