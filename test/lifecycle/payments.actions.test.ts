// Customer actions on the simulated processors (card 4000000000003220, 3-D Secure): the payment
// waits in requires_action with next_action; the customer answers the challenge page served by the
// service and comes back through our return endpoint, which asks the processor (never the
// request) and sends them on to the merchant's return_url. Without a return_url the payment fails
// authentication_required. Over HTTP (the simulator as its own server) the same.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { parseId } from '../../src/kernel/ids.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/connectors/simulator/server.js';
import { eventually, expectError, type Api } from '../support/helpers.js';
import { useDatabase, useService } from '../support/fixtures.js';
import { cardMethod, eventTypesOf, LIVE_CARD, newOrder, pay } from '../support/payments.js';
import { answerChallenge, browse, CHALLENGE_CARD, MERCHANT_RETURN, payWithChallenge } from '../support/payments.actions.js';

const h = useDatabase();
const s = useService({ on: h });

const webhooksAbout = async (id: string) =>
  Number((await h.query(sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${id}`))[0]!.n);

/** The whole way: challenge page, answer, our return endpoint, the merchant's page. */
async function completeAs(api: Api, outcome: 'completed' | 'failed') {
  const { order, payment } = await payWithChallenge(api);
  const back = await answerChallenge(payment.next_action.url, outcome);
  expect(back).toMatch(new RegExp(`^${s.url}/v1/payments/${payment.id}/return/`));
  const landed = await browse(back);
  expect(landed.status).toBe(303);
  const merchant = new URL(landed.location!);
  expect(`${merchant.origin}${merchant.pathname}`).toBe('https://shop.example.com/checkout/done');
  expect(Object.fromEntries(merchant.searchParams)).toEqual({ cart: '42', payment: payment.id });
  return { order, payment, after: (await api.get(`/v1/payments/${payment.id}`)).body };
}

describe('3-D Secure on the simulator, in process', () => {
  it('answers requires_action with next_action; the order stays processing; the challenge page is plain HTML', async () => {
    const { order, payment } = await payWithChallenge(s.api);
    expect(payment).toMatchObject({
      status: 'requires_action',
      connector: 'simulator_a',
      return_url: MERCHANT_RETURN,
      failure_code: null,
      next_action: { type: 'redirect_to_url', return_url: MERCHANT_RETURN },
      attempts: [expect.objectContaining({ connector: 'simulator_a', outcome: 'requires_action' })],
    });
    expect(payment.next_action.url).toMatch(new RegExp(`^${s.url}/v1/connectors/simulator_a/challenges/${payment.id}/[0-9a-f]{32}$`));
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('processing');
    expect(await eventTypesOf(s.api, payment.id)).toEqual(['payment.created', 'payment.requires_action']);
    const event = (await s.api.get('/v1/events?type=payment.requires_action')).body.data.find((e: any) => e.data.object.id === payment.id);
    expect(event.data.object.next_action).toEqual(payment.next_action);

    const page = await browse(payment.next_action.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.text).toContain('value="completed"');
    expect(page.text).toContain('value="failed"');
    expect(page.text).not.toMatch(/<script|https?:\/\/(?!127)/);
  });

  it('completed: succeeded, the order paid, events in order; the webhook arriving too changes nothing', async () => {
    const { order, payment, after } = await completeAs(s.api, 'completed');
    expect(after).toMatchObject({ status: 'succeeded', next_action: null, failure_code: null, connector_reference: payment.connector_reference });
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body).toMatchObject({ status: 'paid', amount_paid: order.amount });
    await eventually(() => webhooksAbout(payment.id), (n) => n >= 1);
    expect(await eventTypesOf(s.api, payment.id)).toEqual(['payment.created', 'payment.requires_action', 'payment.succeeded']);
    expect((await s.api.get(`/v1/payments/${payment.id}`)).body.version).toBe(after.version);
  });

  it('failed: failed authentication_failed, the order open again', async () => {
    const { order, after } = await completeAs(s.api, 'failed');
    expect(after).toMatchObject({ status: 'failed', failure_code: 'authentication_failed', next_action: null });
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
    expect(await eventTypesOf(s.api, after.id)).toEqual(['payment.created', 'payment.requires_action', 'payment.failed']);
  });

  it('without return_url: failed authentication_required at once, the order open again', async () => {
    const order = await newOrder(s.api);
    const res = await pay(s.api, order.id, CHALLENGE_CARD);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'authentication_required', next_action: null, return_url: null });
    // The simulators' own words for this card, as integrators have seen them.
    expect(res.body.failure_message).toBe('The card issuer requires 3-D Secure, and the payment has no return_url.');
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
  });

  it('an idempotent replay answers the same requires_action body', async () => {
    const order = await newOrder(s.api);
    const body = { payment_order: order.id, payment_method: cardMethod(CHALLENGE_CARD), return_url: MERCHANT_RETURN };
    const first = await s.api.post('/v1/payments', body, { idempotencyKey: `actions-replay-${order.id}` });
    const again = await s.api.post('/v1/payments', body, { idempotencyKey: `actions-replay-${order.id}` });
    expect(first.body.status).toBe('requires_action');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(s.service.simulator().chargeRequests.get(first.body.id)).toBe(1);
  });

  it('the return endpoint takes no outcome from the request, and needs the payment token', async () => {
    const { order, payment } = await payWithChallenge(s.api);
    const [row] = await h.query(sql`SELECT action_token FROM payments WHERE id = ${parseId('pay', payment.id)}`);
    const back = `${s.url}/v1/payments/${payment.id}/return/${row!.action_token}`;
    // Anything a processor or a forger could append: only the processor's answer counts.
    const forged = await browse(`${back}?status=succeeded&redirect_status=succeeded&outcome=completed`, { status: 'succeeded', outcome: 'completed' });
    expect(forged.status).toBe(303);
    expect((await s.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'requires_action', version: payment.version });
    // A wrong token, another payment's id, a wrong challenge: 404, nothing changes.
    expect((await browse(`${s.url}/v1/payments/${payment.id}/return/${'x'.repeat(32)}`)).status).toBe(404);
    expect((await browse(`${s.url}/v1/payments/pay_01jd8x3v0pe7wbz0m4k6f2n9qa/return/${row!.action_token}`)).status).toBe(404);
    const challenge = payment.next_action.url.replace(/[0-9a-f]{32}$/, '0'.repeat(32));
    expect((await browse(challenge, { outcome: 'completed' })).status).toBe(404);
    expect((await s.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'requires_action', version: payment.version });
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('processing');
    // The challenge answered for real, the same URL now brings the outcome.
    await answerChallenge(payment.next_action.url, 'completed');
    expect((await browse(back)).status).toBe(303);
    expect((await s.api.get(`/v1/payments/${payment.id}`)).body.status).toBe('succeeded');
  });

  it('the outcome comes by the processor webhook when the customer never comes back', async () => {
    const { order, payment } = await payWithChallenge(s.api);
    await answerChallenge(payment.next_action.url, 'completed'); // the 303 to our return endpoint is not followed
    const settled = await eventually(() => s.api.get(`/v1/payments/${payment.id}`), (res) => res.body.status !== 'requires_action');
    expect(settled.body).toMatchObject({ status: 'succeeded' });
    expect(await webhooksAbout(payment.id)).toBe(1);
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
  });

  it('the test helper settles a challenged payment as well', async () => {
    const { order, payment } = await payWithChallenge(s.api);
    const resolved = await s.api.post(`/v1/test-helpers/payments/${payment.id}/resolve`, { outcome: 'failed' });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.body).toMatchObject({ status: 'failed', failure_code: 'authentication_failed', next_action: null });
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
  });

  it('refuses a return_url that is not an absolute http(s) URL, and http in live mode', async () => {
    const order = await newOrder(s.api);
    for (const bad of ['not a url', 'ftp://shop.example.com/', 'javascript:alert(1)', 'https://user:pw@shop.example.com/']) {
      expectError(await pay(s.api, order.id, CHALLENGE_CARD, { return_url: bad }), 400, 'parameter_invalid', { param: 'return_url' });
    }
    const liveOrder = await newOrder(s.live);
    expectError(await pay(s.live, liveOrder.id, LIVE_CARD, { return_url: 'http://shop.example.com/done' }), 400, 'parameter_invalid', { param: 'return_url' });
    expect((await s.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
  });
});

describe('3-D Secure on the simulator over HTTP (npm run simulator)', () => {
  let server: SimulatorServer;
  beforeAll(async () => {
    server = h.track(await startSimulatorServer({ familySecret: loadConfig({}).payments.simulator.webhookSecret, pendingDelayMs: 60_000 }));
  });
  const overHttp = useService({ on: h, late: () => ({ settings: { connectorTimeoutMs: 2000, simulator: { url: server.url } } }) });
  beforeAll(() => server.host.setWebhookBaseUrl(overHttp.url));

  it('the challenge page is served by the service and answered at the simulator; completed → succeeded', async () => {
    const { payment } = await payWithChallenge(overHttp.api);
    expect(payment.next_action.url.startsWith(`${overHttp.url}/v1/connectors/simulator_a/challenges/`)).toBe(true);
    const back = await answerChallenge(payment.next_action.url, 'completed');
    expect((await browse(back)).status).toBe(303);
    expect((await overHttp.api.get(`/v1/payments/${payment.id}`)).body.status).toBe('succeeded');
  });
});
