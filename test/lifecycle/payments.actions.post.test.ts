// A processor whose customer action is a form to post (as Adyen's 3-D Secure 1 or a bank
// redirect): next_action.url is our page that posts it, and the customer comes back to our return
// endpoint, whose query and form fields go to the connector's completeAction — the processor, not
// the request, decides. A lab connector stands in for that processor, in front of simulator_b.
import { afterAll, describe, expect, it } from 'vitest';
import type { ChargeState, Connector } from '../../src/connectors/types.js';
import { useService } from '../support/fixtures.js';
import { CARDS, eventTypesOf, inProcessSimulators, newOrder, pay } from '../support/payments.js';
import { browse, MERCHANT_RETURN } from '../support/payments.actions.js';

const ACS = 'https://acs.bank.example/challenge';
/** What the lab processor holds per payment, and the parameters each completion was given. */
const states = new Map<string, ChargeState>();
const completions: Record<string, string>[] = [];

const lab: Connector = {
  name: 'simulator_a',
  modes: ['test'],
  paymentMethodTypes: ['card'],
  async charge(r) {
    const state: ChargeState = r.returnUrl
      ? { kind: 'requires_action', connectorReference: `lab_${r.reference}`, action: { url: ACS, method: 'POST', data: { PaReq: 'abc<&>"', TermUrl: r.returnUrl, MD: r.reference } } }
      : { kind: 'declined', connectorReference: null, failureCode: 'authentication_required', declineType: 'authentication_required', message: 'no return URL' };
    states.set(r.reference, state);
    return state;
  },
  chargeStatus: async (r) => states.get(r.reference) ?? { kind: 'not_found' },
  async completeAction(r) {
    completions.push(r.params);
    // The processor verifies what the bank posted back; here, a PaRes of "ok" authenticates.
    const state: ChargeState = r.params.PaRes === 'ok' ? { kind: 'succeeded', connectorReference: `lab_${r.reference}` } : states.get(r.reference)!;
    states.set(r.reference, state);
    return state;
  },
  refund: async () => ({ kind: 'error', code: 'request_rejected', message: 'no refunds' }),
  refundStatus: async () => ({ kind: 'not_found' }),
  parseWebhook: () => {
    throw new Error('no webhooks');
  },
};

const sims = inProcessSimulators();
afterAll(() => sims.close());
const s = useService({ runtime: { connectors: [lab, sims.b] } });

describe('a POST customer action', () => {
  it("next_action.url is our page posting the processor's form; back with its fields, completeAction decides", async () => {
    const order = await newOrder(s.api);
    const res = await pay(s.api, order.id, CARDS.success, { return_url: MERCHANT_RETURN });
    expect(res.status, res.text).toBe(201);
    const payment = res.body;
    expect(payment).toMatchObject({ status: 'requires_action', next_action: { type: 'redirect_to_url', return_url: MERCHANT_RETURN } });
    expect(payment.next_action.url).toMatch(new RegExp(`^${s.url}/v1/payments/${payment.id}/action/[A-Za-z0-9_-]{32}$`));

    const page = await browse(payment.next_action.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.text).toContain(`<form method="post" action="${ACS}">`);
    expect(page.text).toContain('<input type="hidden" name="PaReq" value="abc&lt;&amp;&gt;&quot;">');
    const termUrl = (states.get(payment.id) as any).action.data.TermUrl as string;
    expect(termUrl).toMatch(new RegExp(`^${s.url}/v1/payments/${payment.id}/return/`));
    expect(page.text).toContain(`value="${termUrl}"`);

    // The bank posts back what it posts back: a failed answer leaves the payment waiting.
    expect((await browse(termUrl, { PaRes: 'forged', MD: payment.id, status: 'succeeded' })).status).toBe(303);
    expect(completions.at(-1)).toEqual({ PaRes: 'forged', MD: payment.id, status: 'succeeded' });
    expect((await s.api.get(`/v1/payments/${payment.id}`)).body.status).toBe('requires_action');

    const landed = await browse(`${termUrl}?from=bank`, { PaRes: 'ok', MD: payment.id });
    expect(landed.status).toBe(303);
    expect(landed.location).toBe(`${MERCHANT_RETURN}&payment=${payment.id}`);
    expect(completions.at(-1)).toEqual({ from: 'bank', PaRes: 'ok', MD: payment.id });
    expect((await s.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'succeeded', next_action: null });
    expect(await eventTypesOf(s.api, payment.id)).toEqual(['payment.created', 'payment.requires_action', 'payment.succeeded']);

    // Once settled, the page has nothing to post and the return endpoint just sends the customer on.
    expect((await browse(payment.next_action.url)).text).toContain('no longer waits');
    expect((await browse(termUrl)).location).toBe(`${MERCHANT_RETURN}&payment=${payment.id}`);
    expect(completions).toHaveLength(2);
  });
});
