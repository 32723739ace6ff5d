// Live mode end to end through a GoCardless connector account, with GOCARDLESS_API_BASE_URL
// pointing at a fake GoCardless: the account routes by default, a mandate is created (customer,
// bank account, mandate at GoCardless under our ids), activated by GoCardless's signed webhook,
// debited, the debit confirmed, then charged back (the booking reversed, the ledger consistent);
// the merchant's revocation cancels the mandate at GoCardless. GoCardless's behaviour across
// scenarios is the contract suite's (test/connectors/contract.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, client, createTestDatabase, startTestService, type TestDatabase, type TestService } from '../support/helpers.js';
import { createConnectorAccount } from '../support/connectors.js';
import { FakeGoCardless, gocardlessWebhook } from '../support/fakes/gocardless.js';
import { mandateBody } from '../support/mandates.js';
import { balanceOf, eventTypesOf, newOrder } from '../support/payments.js';
import { expectLedgerClean } from '../support/payouts.js';

let testDb: TestDatabase;
let service: TestService;
let fake: FakeGoCardless;
const SECRET = 'gc-live-webhook-secret-abcdef';

beforeAll(async () => {
  fake = await new FakeGoCardless().start();
  testDb = await createTestDatabase();
  service = await startTestService(testDb, { settings: { gocardlessApiBaseUrl: fake.url, connectorTimeoutMs: 5000 } });
});
afterAll(async () => {
  await service?.close();
  await testDb?.drop();
  await fake?.close();
});

async function deliver(url: string, ...events: Parameters<typeof gocardlessWebhook>[0]) {
  const { body, headers } = gocardlessWebhook(events, SECRET);
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, body: await res.json() };
}

describe('GoCardless in live mode, end to end', () => {
  it('a live GoCardless account creates a mandate, debits it, and books a charge-back', async () => {
    const tenant = await createTenant(testDb.database);
    const live = client(service.url, tenant.liveKey);
    const gc = await createConnectorAccount(live, 'gocardless', 'gocardless-live', { access_token: `live_${'t'.repeat(40)}`, webhook_secret: SECRET });
    expect(gc.webhook_url).toBe(`${service.url}/v1/connector-accounts/${gc.id}/webhooks`);
    // The credentials are never shown again.
    expect(JSON.stringify((await live.get(`/v1/connector-accounts/${gc.id}`)).body)).not.toContain('t'.repeat(40));

    const created = await live.post('/v1/mandates', mandateBody('bacs', '0000', { customer: { email: 'payer@example.co.uk', name: 'Jane Q Public' } }));
    expect(created.status, created.text).toBe(201);
    const mandate = created.body;
    expect(mandate).toMatchObject({ livemode: true, status: 'pending', connector: gc.id, connector_reference: expect.stringMatching(/^MD/) });
    const atGc = fake.mandateOf(mandate.id)!;
    expect(atGc).toMatchObject({ id: mandate.connector_reference, scheme: 'bacs', status: 'pending_submission', metadata: { mandate_id: mandate.id } });
    // The customer and their bank account, under our mandate id; the account number only at GoCardless.
    const customer = [...fake.objects.customers.values()].find((c) => c.metadata?.mandate_id === mandate.id) as { given_name: string; family_name: string };
    expect(customer).toMatchObject({ given_name: 'Jane Q', family_name: 'Public' });
    expect(fake.requests.get(mandate.id)).toBe(1);

    expect(await deliver(gc.webhook_url, fake.setMandate(atGc.id!, 'active'))).toEqual({ status: 200, body: { received: true, duplicate: false, applied: true } });
    expect((await live.get(`/v1/mandates/${mandate.id}`)).body.status).toBe('active');

    const order = await newOrder(live, { amount: 4200, currency: 'GBP' });
    const debit = await live.post('/v1/payments', { payment_order: order.id, payment_method: { type: 'mandate', mandate: mandate.id } });
    expect(debit.status, debit.text).toBe(201);
    expect(debit.body).toMatchObject({ livemode: true, status: 'pending', connector: gc.id, connector_reference: expect.stringMatching(/^PM/) });
    expect(fake.paymentOf(debit.body.id)).toMatchObject({ amount: 4200, currency: 'GBP', links: { mandate: atGc.id } });

    const pm = fake.paymentOf(debit.body.id)!.id!;
    expect((await deliver(gc.webhook_url, fake.setPayment(pm, 'confirmed'))).status).toBe(200);
    expect((await live.get(`/v1/payments/${debit.body.id}`)).body.status).toBe('succeeded');
    expect((await live.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
    expect((await balanceOf(live, 'GBP')).available).toBe(4200);

    expect((await deliver(gc.webhook_url, fake.setPayment(pm, 'charged_back', { origin: 'bank', cause: 'authorisation_disputed' }))).status).toBe(200);
    expect((await live.get(`/v1/payments/${debit.body.id}`)).body).toMatchObject({ status: 'failed', failure_code: 'charged_back' });
    expect((await balanceOf(live, 'GBP')).available).toBe(0);
    expect(await eventTypesOf(live, debit.body.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded', 'payment.failed']);
    await expectLedgerClean(testDb.database.db, tenant.accountId);

    const revoked = await live.post(`/v1/mandates/${mandate.id}/revoke`, {});
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({ status: 'revoked', revoked_by: 'merchant' });
    expect(fake.objects.mandates.get(atGc.id!)).toMatchObject({ status: 'cancelled' });
  });

  it('a webhook signed with another secret is refused and changes nothing', async () => {
    const tenant = await createTenant(testDb.database);
    const live = client(service.url, tenant.liveKey);
    const gc = await createConnectorAccount(live, 'gocardless', 'gc', { access_token: `live_${'u'.repeat(40)}`, webhook_secret: SECRET });
    const mandate = (await live.post('/v1/mandates', mandateBody('sepa_core'))).body;
    const event = fake.setMandate(fake.mandateOf(mandate.id)!.id!, 'active');
    const { body, headers } = gocardlessWebhook([event], 'not-the-secret');
    const res = await fetch(gc.webhook_url, { method: 'POST', headers, body });
    expect(res.status).toBe(401);
    expect((await res.json()).error.code).toBe('connector_webhook_signature_invalid');
    expect((await live.get(`/v1/mandates/${mandate.id}`)).body.status).toBe('pending');
  });
});
