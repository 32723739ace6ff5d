// Saved cards and cards in flight leave no card number in clear and no CVC at all: after payments
// that save a card (succeeded, declined, pending), a payment with a saved card and its CVC, a detach
// and a customer's deletion, then — on a second account routed through the fake Adyen, whose card
// payments keep their card in the vault while in flight — payments killed between their phases and
// replayed by the worker, and one left pending with its card still sealed, every text, json and
// bytea column of every table and the service's captured log lines are searched.
import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { LogCapture } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';
import { newCustomer } from '../support/customers.js';
import { createConnectorAccount } from '../support/connectors.js';
import { FakeAdyen } from '../support/fakes/adyen.js';
import { CARDS, cardMethod, newOrder } from '../support/payments.js';
import { everyStoredText } from '../support/stored-text.js';

const CVC = '7391';
const logs = new LogCapture();
const adyen = new FakeAdyen();
// Time for the fake Adyen on a busy machine; and Adyen's status checks, which cannot tell, count as
// failures: the worker's batch of them must not open its circuit here.
const h = useService({ logs, late: async () => ({ settings: { adyenCheckoutBaseUrl: (await adyen.start()).url, connectorTimeoutMs: 3000, circuitBreaker: { failureThreshold: 100, openMs: 30_000 } } }) });
const { api } = h;
afterAll(() => adyen.close());
// Four digits turn up by chance inside random ids: the CVC is looked for as a value of its own.
const standalone = (digits: string) => new RegExp(`(?<![0-9A-Za-z_.-])${digits}(?![0-9A-Za-z_-])`);

describe('card data of saved cards', () => {
  it('is never in clear in any column of any table nor in the logs, and the CVC is nowhere', async () => {
    const [keep, detach, gone] = [await newCustomer(api), await newCustomer(api), await newCustomer(api)];
    const save = async (number: string, customer: string, usage = 'off_session') => {
      const order = await newOrder(api);
      const res = await api.post('/v1/payments', { payment_order: order.id, payment_method: cardMethod(number, { cvc: CVC }), customer, setup_future_usage: usage });
      expect(res.status, res.text).toBe(201);
      return res.body;
    };
    const saved = [await save(CARDS.success, keep.id), await save(CARDS.success, detach.id, 'on_session'), await save(CARDS.success, gone.id)];
    for (const p of saved) expect(p.payment_method_saved).toMatch(/^pm_/);
    expect((await save(CARDS.declined, keep.id)).status).toBe('failed');
    expect((await save(CARDS.pending, keep.id)).status).toBe('pending');
    // Paying with a saved card, the CVC given again, with an Idempotency-Key (its record and fingerprint stored).
    const again = await api.post('/v1/payments', { payment_order: (await newOrder(api)).id, payment_method: { type: 'saved_card', saved_card: { id: saved[0].payment_method_saved, cvc: CVC } } }, { idempotencyKey: 'saved-cvc-1' });
    expect(again.body.status, again.text).toBe('succeeded');
    expect((await api.post(`/v1/payment-methods/${saved[1].payment_method_saved}/detach`)).status).toBe(200);
    expect((await api.request('DELETE', `/v1/customers/${gone.id}`)).status).toBe(200);

    await inFlightThroughAdyen();

    const stored = await everyStoredText((q) => h.query(q), { bytea: true });
    expect(stored).toContain('4242'); // last4 is kept
    for (const number of [CARDS.success, CARDS.declined, CARDS.pending]) {
      expect(stored).not.toContain(number);
      expect(stored).not.toContain(number.slice(0, 12));
    }
    expect(stored).not.toMatch(standalone(CVC));

    await expect.poll(() => logs.lines.filter((l) => JSON.parse(l).msg === 'request').length).toBeGreaterThanOrEqual(10);
    for (const number of [CARDS.success, CARDS.declined, CARDS.pending]) expect(logs.text).not.toContain(number);
    expect(logs.text).not.toMatch(standalone(CVC));
    expect(logs.text).not.toMatch(/"cvc"/);
  });
});

/** Payments of a second account through Adyen: killed at each crash point and replayed by the worker, saving, saved and typed cards; one left pending. */
async function inFlightThroughAdyen() {
  const other = await h.newTenant('Adyen in flight');
  const account = await createConnectorAccount(other.api, 'adyen', 'secrets-adyen', { api_key: `AQE_secrets_${'k'.repeat(16)}`, merchant_account: 'SecretsECOM', hmac_key: '5a'.repeat(32) });
  expect((await other.api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: account.name }] }] } })).status).toBe(200);
  const customer = await newCustomer(other.api);
  const pay = async (method: unknown, extra: Record<string, unknown> = {}) =>
    other.api.post('/v1/payments', { payment_order: (await newOrder(other.api)).id, payment_method: method, ...extra }, { idempotencyKey: `inflight-${crypto.randomUUID()}` });
  const saving = await pay(cardMethod(CARDS.success, { cvc: CVC }), { customer: customer.id, setup_future_usage: 'off_session' });
  const pm = saving.body.payment_method_saved as string;
  expect(saving.body, saving.text).toMatchObject({ status: 'succeeded', payment_method_saved: expect.stringMatching(/^pm_/) });
  for (const point of ['payment_created', 'payment_connector_answered'] as const) {
    const crashed = [
      await h.service.crashingAt(point, () => pay(cardMethod(CARDS.success, { cvc: CVC }))),
      await h.service.crashingAt(point, () => pay(cardMethod(CARDS.success, { cvc: CVC }), { customer: customer.id, setup_future_usage: 'on_session' })),
      await h.service.crashingAt(point, () => pay({ type: 'saved_card', saved_card: { id: pm } }, { off_session: true })),
    ];
    for (const res of crashed) expect(res.status, res.text).toBe(500);
  }
  expect((await pay(cardMethod(CARDS.pending, { cvc: CVC }))).body.status).toBe('pending');
  // Past the retry window: the worker replays each crashed payment to Adyen from the vault.
  h.service.clock.advance(10 * 60_000);
  await h.service.runWorker();
  h.service.clock.reset();
  const listed = (await other.api.get('/v1/payments?limit=100')).body.data as { status: string }[];
  expect(listed.map((p) => p.status).sort()).toEqual(['pending', ...Array(7).fill('succeeded')]);
  // Kept cards: erased once final, the pending one still sealed (its ciphertext searched below).
  const kept = await h.query(sql`SELECT sealed_card IS NULL AS erased FROM vault_records WHERE purpose = 'payment'`);
  expect(kept.map((r) => r.erased).sort()).toEqual([false, true, true]);
  expect(adyen.requests.some((r) => r.body.paymentMethod?.cvc === undefined && r.body.shopperInteraction === 'Ecommerce')).toBe(true);
}
