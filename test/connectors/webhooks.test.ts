// Inbound processor webhooks, POST /v1/connectors/{name}/webhooks: a verified event settles the
// payment (with our own events), a redelivered event id is a no-op, and bad or stale signatures,
// unknown connectors and malformed payloads are refused with typed errors, changing nothing; the
// applied event ids are forgotten past INBOUND_EVENT_RETENTION_DAYS.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { DEVELOPMENT_SIMULATOR_SECRET } from '../../src/config.js';
import { processorSecret, signPayload } from '../../src/connectors/simulator/signing.js';
import { chargeEvent } from '../support/connectors.js';
import { CARDS, eventTypesOf, orderAndPay, sendProcessorEvent } from '../support/payments.js';
import { useService } from '../support/fixtures.js';

const h = useService();
const { api } = h;

const send = (connector: string, body: string, opts: Parameters<typeof sendProcessorEvent>[3] = {}) => sendProcessorEvent(h.url, connector, body, opts);

describe('inbound processor webhooks', () => {
  it('a verified event settles the pending payment and emits our events; its redelivery is a no-op', async () => {
    const { order, payment } = await orderAndPay(api, CARDS.pending);
    const body = chargeEvent(payment, 'REFUSED');
    const first = await send('simulator_a', body);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ received: true, duplicate: false, applied: true });
    const after = (await api.get(`/v1/payments/${payment.id}`)).body;
    expect(after).toMatchObject({ status: 'failed', failure_code: 'insufficient_funds', version: 3 });
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');

    const again = await send('simulator_a', body);
    expect(again.body).toEqual({ received: true, duplicate: true, applied: false });
    // A later, contradicting event cannot undo a final state.
    expect((await send('simulator_a', chargeEvent(payment, 'CAPTURED'))).status).toBe(200);
    expect((await api.get(`/v1/payments/${payment.id}`)).body).toEqual(after);
    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.failed']);
  });

  it('forgets applied event ids past the retention, a batch per worker pass; the payment stays as it was', async () => {
    const { payment } = await orderAndPay(api, CARDS.pending);
    const eventId = `evt_${crypto.randomUUID()}`;
    const body = chargeEvent(payment, 'REFUSED', eventId);
    expect((await send('simulator_a', body)).body).toMatchObject({ applied: true });
    const after = (await api.get(`/v1/payments/${payment.id}`)).body;
    const held = async () => Number((await h.query(sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE event_id = ${eventId}`))[0]!.n);
    const total = Number((await h.query(sql`SELECT count(*)::int AS n FROM connector_webhook_events`))[0]!.n);
    const DAY = 86_400_000;

    const early = await h.service.runWorker(Date.now() + 89 * DAY, { inboundEventRetentionDays: 90 });
    expect(early.sweptInboundEvents).toBe(0);
    expect(await held()).toBe(1);

    const late = await h.service.runWorker(Date.now() + 91 * DAY, { inboundEventRetentionDays: 90 });
    expect(late.sweptInboundEvents).toBe(total);
    expect(await held()).toBe(0);
    // Redelivered after that, it is received as new, and the failed payment cannot move again.
    expect((await send('simulator_a', body)).body).toMatchObject({ duplicate: false });
    expect((await api.get(`/v1/payments/${payment.id}`)).body).toEqual(after);
    expect(await eventTypesOf(api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.failed']);
  });

  it('needs no API key and ignores one', async () => {
    const { payment } = await orderAndPay(api, CARDS.pending);
    const res = await send('simulator_a', chargeEvent(payment, 'CAPTURED'), { authorization: 'Bearer sk_test_nonsense' });
    expect(res.status, res.text).toBe(200);
    expect((await api.get(`/v1/payments/${payment.id}`)).body.status).toBe('succeeded');
  });

  it.each([
    ['signed with another connector’s secret', { secretOf: 'simulator_b' }, 'connector_webhook_signature_invalid'],
    ['without a signature', { header: null }, 'connector_webhook_signature_invalid'],
    ['with a malformed signature header', { header: 't=abc,v1=zz' }, 'connector_webhook_signature_invalid'],
    ['signed 10 minutes ago', { timestampS: Math.floor(Date.now() / 1000) - 600 }, 'connector_webhook_timestamp_stale'],
    ['signed 10 minutes ahead', { timestampS: Math.floor(Date.now() / 1000) + 600 }, 'connector_webhook_timestamp_stale'],
  ])('refuses an event %s with 401, changing nothing', async (_what, opts, code) => {
    const { payment } = await orderAndPay(api, CARDS.pending);
    const res = await send('simulator_a', chargeEvent(payment, 'CAPTURED'), opts);
    expect(res.status, res.text).toBe(401);
    expect(res.body.error).toMatchObject({ type: 'authentication', code, request_id: res.headers.get('request-id') });
    expect((await api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'pending', version: 2 });
  });

  it('refuses a body altered after signing', async () => {
    const { payment } = await orderAndPay(api, CARDS.pending);
    const body = chargeEvent(payment, 'REFUSED');
    const header = signPayload(processorSecret(DEVELOPMENT_SIMULATOR_SECRET, 'simulator_a'), Math.floor(Date.now() / 1000), body);
    const res = await send('simulator_a', body.replace('REFUSED', 'CAPTURED'), { header });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('connector_webhook_signature_invalid');
    expect((await api.get(`/v1/payments/${payment.id}`)).body.status).toBe('pending');
  });

  it('answers 404 for an unknown connector, 400 for a payload that is no event, 200 for an object that is not ours', async () => {
    const unknown = await send('stripe', '{}', { secretOf: 'stripe' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'resource_missing', param: 'name' });
    const junk = await send('simulator_a', '{"hello":"world"}');
    expect(junk.status).toBe(400);
    expect(junk.body.error.code).toBe('parameter_invalid');
    const notJson = await send('simulator_a', 'not json');
    expect(notJson.status).toBe(400);
    const foreign = await send('simulator_a', chargeEvent({ id: 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa', amount: 1, currency: 'EUR' }, 'CAPTURED'));
    expect(foreign.body).toEqual({ received: true, duplicate: false, applied: false });
  });

  it('refuses a well-signed but malformed event (numeric reference, unknown refusal) with a typed 400', async () => {
    const numeric = JSON.parse(chargeEvent({ id: 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa', amount: 1, currency: 'EUR' }, 'CAPTURED'));
    numeric.charge.merchant_reference = 12345;
    const refusedNumeric = await send('simulator_a', JSON.stringify(numeric));
    expect(refusedNumeric.status, refusedNumeric.text).toBe(400);
    expect(refusedNumeric.body.error.code).toBe('parameter_invalid');
    const bogus = JSON.parse(chargeEvent({ id: 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa', amount: 1, currency: 'EUR' }, 'REFUSED'));
    bogus.charge.refusal = 'BOGUS';
    const refusedBogus = await send('simulator_a', JSON.stringify(bogus));
    expect(refusedBogus.status, refusedBogus.text).toBe(400);
  });

  it("one connector's event does not settle a payment held by another", async () => {
    const { payment } = await orderAndPay(api, CARDS.pending); // at simulator_a
    const res = await send('simulator_b', chargeEvent(payment, 'CAPTURED'));
    expect(res.body).toEqual({ received: true, duplicate: false, applied: false });
    expect((await api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'pending', connector: 'simulator_a' });
  });
});
