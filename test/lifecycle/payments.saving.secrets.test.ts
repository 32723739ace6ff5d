// Saved cards leave no card number in clear and no CVC at all: after payments that save a card
// (succeeded, declined, pending), a payment with a saved card and its CVC, a detach and a customer's deletion, every text, json and bytea
// column of every table and the service's captured log lines are searched.
import { describe, expect, it } from 'vitest';
import { LogCapture } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';
import { newCustomer } from '../support/customers.js';
import { CARDS, cardMethod, newOrder } from '../support/payments.js';
import { everyStoredText } from '../support/stored-text.js';

const CVC = '7391';
const logs = new LogCapture();
const h = useService({ logs });
const { api } = h;
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
