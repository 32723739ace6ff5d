// The dashboard's customer pages over plain HTTP: the list, a customer with its saved cards
// (brand, last 4, expiry, usage), detaching one through the API's service function under the
// form's idempotency key, escaping, and 404s for another account's or the other mode's customer.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { Visitor } from '../support/dashboard.js';
import { newCustomer, savedCard } from '../support/customers.js';

const h = useService();
const year = new Date().getUTCFullYear() + 2;

const signedIn = (key = h.tenant.testKey) => Visitor.signedIn(h.url, key);

describe('dashboard customer pages', () => {
  it('lists a customer’s saved cards and detaches one, once, through the form', async () => {
    const owner = { accountId: h.tenant.accountId, livemode: false };
    const customer = await newCustomer(h.api, { name: '<b>Ada</b>', reference: 'dash-1' });
    const visa = await savedCard(h.db, owner, customer.id, { usage: 'off_session', card: { brand: 'visa', last4: '4242', exp_month: 4, exp_year: year, fingerprint: 'f1' } });
    const master = await savedCard(h.db, owner, customer.id, { usage: 'on_session', card: { brand: 'mastercard', last4: '4444', exp_month: 11, exp_year: year, fingerprint: 'f2' } });
    const visitor = await signedIn();

    const list = await visitor.get('/dashboard/customers?reference=dash-1');
    expect(list.status).toBe(200);
    expect(list.text).toContain(customer.id);
    expect(list.text).toContain('&lt;b&gt;Ada&lt;/b&gt;');
    expect((await visitor.get(`/dashboard/search?q=${customer.id}`)).location).toBe(`/dashboard/customers/${customer.id}`);

    const page = await visitor.get(`/dashboard/customers/${customer.id}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<b>Ada</b>');
    for (const text of ['visa', '4242', `04/${year}`, 'off_session', 'mastercard', '4444', `11/${year}`, 'on_session']) expect(page.text).toContain(text);
    expect(page.text).toContain(`action="/dashboard/payment-methods/${visa.id}/detach"`);
    expect(page.text).toContain(`action="/dashboard/payment-methods/${master.id}/detach"`);

    // The detach form of the Mastercard, as the page rendered it: its CSRF token and its own idempotency key.
    const form = new RegExp(`${master.id}/detach"[^>]*><input type="hidden" name="csrf" value="([^"]*)"><input type="hidden" name="idem" value="([^"]*)"`).exec(page.text)!;
    const fields = { csrf: form[1]!, idem: form[2]! };
    const done = await visitor.send('POST', `/dashboard/payment-methods/${master.id}/detach`, fields);
    expect(done.status, done.text).toBe(303);
    expect(done.location).toBe(`/dashboard/customers/${customer.id}?notice=detached`);
    // The same form sent again replays its answer: nothing is detached twice.
    const again = await visitor.send('POST', `/dashboard/payment-methods/${master.id}/detach`, fields);
    expect(again.location).toBe(done.location);
    expect((await h.api.get(`/v1/payment-methods/${master.id}`)).body).toMatchObject({ status: 'detached', version: 2 });
    expect((await h.api.get(`/v1/payment-methods/${visa.id}`)).body).toMatchObject({ status: 'active', version: 1 });
    const events = await h.query(sql`SELECT type FROM events WHERE object_id = ${master.id} AND type = 'payment_method.detached'`);
    expect(events).toHaveLength(1);

    const after = await visitor.get(done.location!);
    expect(after.text).toContain('The card is detached');
    expect(after.text).not.toContain(`action="/dashboard/payment-methods/${master.id}/detach"`);
    expect(after.text).toContain(`action="/dashboard/payment-methods/${visa.id}/detach"`);
  });

  it("answers 404 for another account's or the other mode's customer and card, and detaches nothing", async () => {
    const owner = await h.newTenant();
    const customer = await newCustomer(owner.api);
    const card = await savedCard(h.db, { accountId: owner.accountId, livemode: false }, customer.id);
    const stranger = await h.newTenant();
    for (const visitor of [await signedIn(owner.liveKey), await signedIn(stranger.testKey)]) {
      expect((await visitor.get(`/dashboard/customers/${customer.id}`)).status).toBe(404);
      await visitor.get('/dashboard/webhook-endpoints'); // a page with a form: its CSRF token and a fresh idempotency key
      expect((await visitor.post(`/dashboard/payment-methods/${card.id}/detach`)).status).toBe(404);
    }
    expect((await owner.api.get(`/v1/payment-methods/${card.id}`)).body).toMatchObject({ status: 'active', version: 1 });
  });
});
