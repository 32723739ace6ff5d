// The dashboard's dispute pages over plain HTTP: the list, a dispute with its deadline and its
// evidence form; evidence saved, then submitted through the form (the simulated processor decides:
// won with winning_evidence), another accepted; another account's dispute is a 404.
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { Visitor } from '../support/dashboard.js';
import { eventually } from '../support/helpers.js';
import { newOrder, pay } from '../support/payments.js';

const h = useService({ settings: { simulator: { pendingDelayMs: 200 } } });
const signedIn = (key = h.tenant.testKey) => Visitor.signedIn(h.url, key);

async function openDispute(amount: number): Promise<{ id: string }> {
  const order = await newOrder(h.api, { amount, currency: 'EUR' });
  const payment = (await pay(h.api, order.id, '4000000000000259')).body as { id: string };
  const [dispute] = await eventually(async () => (await h.api.get(`/v1/disputes?payment=${payment.id}`)).body.data, (list: { id: string; funds_withdrawn: boolean }[]) => list.length === 1 && list[0]!.funds_withdrawn);
  return dispute!;
}

/** The form posting to `action` as the page rendered it: its CSRF token and idempotency key. */
function formFields(page: string, action: string) {
  const form = new RegExp(`action="${action}"[^>]*><input type="hidden" name="csrf" value="([^"]*)"><input type="hidden" name="idem" value="([^"]*)"`).exec(page)!;
  return { csrf: form[1]!, idem: form[2]! };
}

describe('dashboard dispute pages', () => {
  it('lists disputes, saves and submits evidence through the form, accepts another', async () => {
    const dispute = await openDispute(2600);
    const visitor = await signedIn();
    const list = await visitor.get('/dashboard/disputes?status=needs_response');
    expect(list.status).toBe(200);
    expect(list.text).toContain(dispute.id);

    const page = await visitor.get(`/dashboard/disputes/${dispute.id}`);
    expect(page.status).toBe(200);
    for (const text of ['needs_response', 'fraudulent', 'Evidence due', 'product_description', 'Accept the dispute']) expect(page.text).toContain(text);
    const action = `/dashboard/disputes/${dispute.id}/evidence`;
    const saved = await visitor.send('POST', action, { ...formFields(page.text, action), product_description: '<i>Teapot</i>', submit: 'save only' });
    expect(saved.status, saved.text).toBe(303);
    expect((await h.api.get(`/v1/disputes/${dispute.id}`)).body).toMatchObject({ status: 'needs_response', evidence: { product_description: '<i>Teapot</i>' } });
    const again = await visitor.get(`/dashboard/disputes/${dispute.id}?notice=saved`);
    expect(again.text).toContain('&lt;i&gt;Teapot&lt;/i&gt;');
    const submitted = await visitor.send('POST', action, { ...formFields(again.text, action), uncategorized_text: 'winning_evidence', submit: 'submit to the processor' });
    expect(submitted.status, submitted.text).toBe(303);
    await eventually(async () => (await h.api.get(`/v1/disputes/${dispute.id}`)).body.status, (s: string) => s === 'won');

    const other = await openDispute(900);
    const otherPage = await visitor.get(`/dashboard/disputes/${other.id}`);
    const accept = `/dashboard/disputes/${other.id}/accept`;
    expect((await visitor.send('POST', accept, formFields(otherPage.text, accept))).status).toBe(303);
    expect((await h.api.get(`/v1/disputes/${other.id}`)).body.status).toBe('accepted');

    const stranger = await h.newTenant('stranger');
    expect((await (await signedIn(stranger.testKey)).get(`/dashboard/disputes/${dispute.id}`)).status).toBe(404);
  });
});
