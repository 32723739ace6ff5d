// A saved card is ours, not a processor's: saved by a payment at Stripe it is charged off session
// by Adyen, and the other way round, each citing the network transaction id the other processor
// answered (the fakes refuse a merchant-initiated payment without it); verified without paying at
// Adyen it is charged off session by Stripe, while one verified at Stripe has no such id to cite.
// A verification whose answer was lost is located, never sent again: at Stripe by the worker (its
// SetupIntent among the newest), at Adyen (no lookup) by its AUTHORISATION notification.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { created, testClock } from '../support/helpers.js';
import { newOrder, pay } from '../support/payments.js';
import { parseId } from '../../src/kernel/ids.js';
import { postWebhook, type Connected } from './contract/harness.js';
import { useStripeAndAdyen } from './contract/stripe-and-adyen.js';

const both = useStripeAndAdyen();
const { stripe, adyen } = both;
/** The service's clock, moved on for the worker's check of a verification whose answer was lost. */
const clock = testClock();
const h = useService({ clock, late: () => ({ settings: both.settings() }) });

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

const offSession = async (pm: string) =>
  h.api.post('/v1/payments', { payment_order: (await newOrder(h.api)).id, payment_method: { type: 'saved_card', saved_card: { id: pm } }, off_session: true });

async function chargeOffSessionAt(processor: Connected, pm: string) {
  await routeTo(processor);
  const res = await offSession(pm);
  expect(res.body, res.text).toMatchObject({ status: 'succeeded', connector: processor.connector });
  return res.body;
}

/** A card verified without paying at `processor` alone: the method as answered, and the id it keeps. */
async function verifyAt(processor: Connected) {
  await routeTo(processor);
  const c = await created(h.api, '/v1/customers', { email: 'ada@example.com' });
  const card = { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 1, cvc: '123' };
  const res = await h.api.post('/v1/payment-methods', { customer: c.id, card, usage: 'off_session' }, { idempotencyKey: `v-${c.id}` });
  expect(res.status, res.text).toBe(201);
  return { pm: res.body, row: (await h.query(sql`SELECT * FROM payment_methods WHERE id = ${parseId('pm', res.body.id)}`))[0]! };
}

/** The network transaction id the payment's request cited (what the fake then checked was there). */
async function citedBy(paymentId: string) {
  const [row] = await h.query(sql`SELECT payment_method->'saved_card'->>'network_transaction_id' AS ntid FROM payments WHERE id = ${parseId('pay', paymentId)}`);
  return row!.ntid;
}

/** A verification the processor acted on and answered 500: pending, then the method after the worker's check of it, hours later. */
async function lostThenChecked(harness: typeof stripe, processor: Connected) {
  harness.faults!.serverErrorAfterNext();
  const { pm } = await verifyAt(processor);
  expect(pm.status).toBe('pending');
  clock.advance(2 * 3600_000);
  await h.service.runWorker().finally(() => clock.reset());
  return (await h.api.get(`/v1/payment-methods/${pm.id}`)).body;
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

  it('a card verified without paying at Adyen is charged off session by Stripe, citing the verification’s networkTxReference', async () => {
    const { pm, row } = await verifyAt(atAdyen);
    expect(row).toMatchObject({ status: 'active', connector: atAdyen.connector, network_transaction_id: expect.stringMatching(/^\d{13,15}$/) });
    const payment = await chargeOffSessionAt(atStripe, pm.id);
    expect(await citedBy(payment.id)).toBe(row.network_transaction_id);
  });

  it('a card verified at Stripe keeps no network transaction id (a SetupIntent gives none): off session, Adyen refuses it before acting', async () => {
    const { pm, row } = await verifyAt(atStripe);
    expect(row).toMatchObject({ status: 'active', connector: atStripe.connector, network_transaction_id: null });
    await routeTo(atAdyen);
    const res = await offSession(pm.id);
    expect(res.body, res.text).toMatchObject({ status: 'failed', connector: atAdyen.connector, attempts: [{ connector: atAdyen.connector }] });
    expect(await adyen.books!.chargesHeld(res.body.id)).toBe(0);
  });

  it('with both on the route, a verification goes to Adyen, which answers a network transaction id, before Stripe', async () => {
    const res = await h.api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [atStripe.route, atAdyen.route] }] } });
    expect(res.status).toBe(200);
    const c = await created(h.api, '/v1/customers', { email: 'ada@example.com' });
    const card = { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 1, cvc: '123' };
    const pm = (await h.api.post('/v1/payment-methods', { customer: c.id, card, usage: 'off_session' }, { idempotencyKey: `both-${c.id}` })).body;
    const [row] = await h.query(sql`SELECT connector, network_transaction_id FROM payment_methods WHERE id = ${parseId('pm', pm.id)}`);
    expect(row).toMatchObject({ connector: atAdyen.connector, network_transaction_id: expect.stringMatching(/^\d{13,15}$/) });
  });

  it('a verification whose answer Stripe lost stays pending; the worker finds its SetupIntent and never sends it again', async () => {
    const pm = await lostThenChecked(stripe, atStripe);
    expect(pm.status).toBe('active');
    expect(await stripe.books!.chargeRequests(pm.id)).toBe(1);
  });

  it('a verification whose answer Adyen lost stays pending until its AUTHORISATION notification, never sent again', async () => {
    const pm = await lostThenChecked(adyen, atAdyen);
    expect(pm.status).toBe('pending');
    const webhook = adyen.webhook!(atAdyen, { id: pm.id, amount: 0, currency: 'USD', connector_reference: null }, 'succeeded')!;
    expect((await postWebhook(atAdyen.webhookUrl, webhook)).text).toBe('[accepted]');
    expect((await h.api.get(`/v1/payment-methods/${pm.id}`)).body).toMatchObject({ status: 'active' });
    expect(await adyen.books!.chargeRequests(pm.id)).toBe(1);
  });
});
