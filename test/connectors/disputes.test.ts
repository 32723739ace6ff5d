// Disputes from the processors' own webhooks: Stripe's charge.dispute.* events (its published
// dispute object, signed by its SDK) end to end through a connector account, in any order and
// repeated; Adyen's dispute notifications (its published examples, signed with its HMAC) read
// into our words; each processor's reason codes onto ours.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdyenConnector } from '../../src/connectors/adyen/connector.js';
import { disputeReasonOf } from '../../src/connectors/adyen/disputes.js';
import { createHttpClient } from '../../src/connectors/http.js';
import { checkLedger } from '../../src/ledger/check.js';
import { parseId } from '../../src/kernel/ids.js';
import { setDisputeFee } from '../../src/domain/terms/service.js';
import { payments, unmatchedDisputeReports } from '../../src/storage/schema.js';
import { client, createTenant, createTestDatabase, startTestService, type TestDatabase, type TestService } from '../support/helpers.js';
import { balanceOf, orderAndPay } from '../support/payments.js';
import { createConnectorAccount, newTenantClients } from '../support/connectors.js';
import { FakeStripe, STRIPE_CARDS } from '../support/fakes/stripe.js';
import { FakeAdyen } from '../support/fakes/adyen.js';

const SIGNING_SECRET = 'whsec_dispute_endpoint_secret_01';
const HMAC = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';
const MERCHANT = 'PaymentOrchestratorECOM';
let testDb: TestDatabase;
let service: TestService;
let stripe: FakeStripe;
let adyen: FakeAdyen;
const http = createHttpClient();

beforeAll(async () => {
  stripe = await new FakeStripe().start();
  adyen = await new FakeAdyen().start();
  testDb = await createTestDatabase();
  service = await startTestService(testDb, { settings: { stripeApiBaseUrl: stripe.url, connectorTimeoutMs: 5000 } });
});
afterAll(async () => {
  http.close();
  await service?.close();
  await testDb?.drop();
  await stripe?.close();
  await adyen?.close();
});

async function post(url: string, body: string, signature: string) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body });
  return { status: res.status, body: await res.json() };
}

describe('Stripe disputes, end to end', () => {
  it('one dp_ for charge.dispute.* events in any order and repeated; lost keeps the funds out once', async () => {
    const { test } = await newTenantClients(testDb, service.url);
    const account = await createConnectorAccount(test, 'stripe', 'stripe', { secret_key: `sk_test_${'c'.repeat(24)}`, webhook_secret: SIGNING_SECRET });
    await test.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'stripe' }] }] } });
    const { payment } = await orderAndPay(test, STRIPE_CARDS.success, { amount: 4200, currency: 'EUR' });
    expect(payment).toMatchObject({ status: 'succeeded', connector: account.id });
    const before = await balanceOf(test);
    const intent = payment.connector_reference as string;
    const dp = 'dp_1PgcFakeDispute0001';
    const events = [
      stripe.event('charge.dispute.closed', stripe.dispute(intent, dp, 'lost', { withdrawn: true, reinstated: false }), SIGNING_SECRET),
      stripe.event('charge.dispute.created', stripe.dispute(intent, dp, 'needs_response', { withdrawn: false, reinstated: false }), SIGNING_SECRET),
      stripe.event('charge.dispute.funds_withdrawn', stripe.dispute(intent, dp, 'needs_response', { withdrawn: true, reinstated: false }), SIGNING_SECRET),
      stripe.event('charge.dispute.updated', stripe.dispute(intent, dp, 'under_review', { withdrawn: true, reinstated: false }), SIGNING_SECRET),
    ];
    for (const e of events) expect(await post(account.webhook_url, e.body, e.signature)).toEqual({ status: 200, body: { received: true, duplicate: false, applied: true } });
    expect((await post(account.webhook_url, events[0]!.body, events[0]!.signature)).body).toMatchObject({ duplicate: true });

    const list = (await test.get(`/v1/disputes?payment=${payment.id}`)).body.data;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ status: 'lost', reason: 'fraudulent', processor_reason: 'fraudulent', amount: 4200, currency: 'EUR', funds_withdrawn: true, connector: account.id, connector_reference: dp });
    expect((await balanceOf(test)).available).toBe(before.available - 4200);
    const refund = await test.post('/v1/refunds', { payment: payment.id });
    expect(refund.body.error?.code).toBe('charge_disputed');
    expect(await checkLedger(testDb.database.db)).toMatchObject({ ok: true });
  });

  // Stripe gives its dispute fee back when the merchant wins: the connector account's processor is read in the webhook's transaction.
  it('won after its funds were withdrawn: the amount and the dispute fee come back', async () => {
    const tenant = await createTenant(testDb.database);
    const test = client(service.url, tenant.testKey);
    const account = await createConnectorAccount(test, 'stripe', 'stripe', { secret_key: `sk_test_${'g'.repeat(24)}`, webhook_secret: SIGNING_SECRET });
    await test.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'stripe' }] }] } });
    await setDisputeFee(testDb.database.db, parseId('acct', tenant.accountId)!, { fee: 1500 });
    const { payment } = await orderAndPay(test, STRIPE_CARDS.success, { amount: 3000, currency: 'EUR' });
    const before = await balanceOf(test);
    const intent = payment.connector_reference as string;
    const send = async (type: string, status: string, funds: { withdrawn: boolean; reinstated: boolean }) => {
      const e = stripe.event(type, stripe.dispute(intent, 'dp_won_0001', status, funds), SIGNING_SECRET);
      expect((await post(account.webhook_url, e.body, e.signature)).body).toMatchObject({ applied: true });
    };
    await send('charge.dispute.funds_withdrawn', 'needs_response', { withdrawn: true, reinstated: false });
    expect((await balanceOf(test)).available).toBe(before.available - 3000 - 1500);
    await send('charge.dispute.closed', 'won', { withdrawn: true, reinstated: true });
    expect((await balanceOf(test)).available).toBe(before.available);
    expect(await checkLedger(testDb.database.db)).toMatchObject({ ok: true });
  });

  it('a dispute of a PaymentIntent we do not know is acknowledged, not applied', async () => {
    const { test } = await newTenantClients(testDb, service.url);
    const account = await createConnectorAccount(test, 'stripe', 'stripe', { secret_key: `sk_test_${'d'.repeat(24)}`, webhook_secret: SIGNING_SECRET });
    const { payment } = await (async () => {
      await test.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'stripe' }] }] } });
      return orderAndPay(test, STRIPE_CARDS.success, { amount: 100, currency: 'EUR' });
    })();
    const object = { ...stripe.dispute(payment.connector_reference, 'dp_unknown', 'needs_response', { withdrawn: false, reinstated: false }), payment_intent: 'pi_nobody' };
    const e = stripe.event('charge.dispute.created', object, SIGNING_SECRET);
    expect(await post(account.webhook_url, e.body, e.signature)).toEqual({ status: 200, body: { received: true, duplicate: false, applied: false } });
  });
});

describe('Stripe disputes, one account at a time', () => {
  it("a dispute naming another account's PaymentIntent is recorded unmatched; the same reference in the sender's own account is matched there", async () => {
    const db = testDb.database.db;
    const setUp = async (letter: string) => {
      const { test } = await newTenantClients(testDb, service.url);
      const account = await createConnectorAccount(test, 'stripe', 'stripe', { secret_key: `sk_test_${letter.repeat(24)}`, webhook_secret: SIGNING_SECRET });
      await test.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'stripe' }] }] } });
      const { payment } = await orderAndPay(test, STRIPE_CARDS.success, { amount: 700, currency: 'EUR' });
      return { test, account, payment };
    };
    const theirs = await setUp('e');
    const mine = await setUp('f');
    const intent = theirs.payment.connector_reference as string;
    const disputed = (dp: string, id: string) => stripe.event(id, stripe.dispute(intent, dp, 'needs_response', { withdrawn: false, reinstated: false }), SIGNING_SECRET);

    const foreign = disputed('dp_foreign_0001', 'charge.dispute.created');
    expect(await post(mine.account.webhook_url, foreign.body, foreign.signature)).toEqual({ status: 200, body: { received: true, duplicate: false, applied: false } });
    expect((await theirs.test.get(`/v1/disputes?payment=${theirs.payment.id}`)).body.data).toEqual([]);
    const unmatched = await db.select().from(unmatchedDisputeReports).where(eq(unmatchedDisputeReports.disputeReference, 'dp_foreign_0001'));
    expect(unmatched).toMatchObject([{ connector: mine.account.id, paymentReference: intent, livemode: false }]);

    // A processor's reference is unique only at its own account: my payment may carry the same one.
    await db.update(payments).set({ connectorReference: intent }).where(eq(payments.id, parseId('pay', mine.payment.id)!));
    const own = disputed('dp_own_0001', 'charge.dispute.created');
    expect(await post(mine.account.webhook_url, own.body, own.signature)).toEqual({ status: 200, body: { received: true, duplicate: false, applied: true } });
    expect((await mine.test.get(`/v1/disputes?payment=${mine.payment.id}`)).body.data).toMatchObject([{ connector_reference: 'dp_own_0001' }]);
    expect((await theirs.test.get(`/v1/disputes?payment=${theirs.payment.id}`)).body.data).toEqual([]);
  });
});

describe('Adyen dispute notifications', () => {
  const connector = () => createAdyenConnector({ apiKey: 'k', merchantAccount: MERCHANT, hmacKeys: [HMAC], livemode: false, liveUrlPrefix: undefined, checkoutBaseUrl: adyen.url, publicUrl: () => 'http://x', http });
  const item = { pspReference: 'DISPUTEPSP000001', originalReference: 'PAYMENTPSP000001', merchantReference: 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa', merchantAccountCode: MERCHANT, amount: { currency: 'EUR', value: 1000 } };

  it('reads each dispute event code into our status, stage and funds', () => {
    const read = (code: Parameters<FakeAdyen['notification']>[0], extra: Record<string, unknown> = {}) =>
      connector().parseWebhook({ headers: {}, rawBody: adyen.notification(code, { ...item, ...extra }, HMAC), now: new Date() });
    expect(read('CHARGEBACK')).toMatchObject({
      eventId: 'DISPUTEPSP000001:CHARGEBACK:true',
      object: 'dispute',
      reference: item.merchantReference,
      state: { connectorReference: 'DISPUTEPSP000001', paymentConnectorReference: 'PAYMENTPSP000001', amount: 1000, currency: 'EUR', reason: 'product_unacceptable', processorReason: '4853', status: 'needs_response', withdrawals: 1, reinstatements: 0 },
    });
    expect((read('CHARGEBACK') as { state: object }).state).toMatchObject({ evidenceDueBy: new Date('2021-07-31T03:03:07+02:00') });
    expect(read('NOTIFICATION_OF_CHARGEBACK')).toMatchObject({ state: { status: 'needs_response', withdrawals: 0 } });
    expect(read('REQUEST_FOR_INFORMATION')).toMatchObject({ state: { status: 'warning_needs_response' } });
    expect(read('INFORMATION_SUPPLIED')).toMatchObject({ state: { status: 'under_review' } });
    expect(read('DISPUTE_DEFENSE_PERIOD_ENDED')).toMatchObject({ state: { status: 'lost' } });
    expect(read('CHARGEBACK_REVERSED')).toMatchObject({ state: { status: 'won', withdrawals: 1, reinstatements: 1 } });
    expect(read('SECOND_CHARGEBACK')).toMatchObject({ state: { status: 'lost', withdrawals: 2, reinstatements: 1 } });
    expect(read('PREARBITRATION_WON')).toMatchObject({ state: { status: 'won', withdrawals: 2, reinstatements: 2 } });
    // Adyen's own example of PREARBITRATION_LOST carries metadata its schema does not allow: replaced.
    expect(read('PREARBITRATION_LOST', { additionalData: { arn: 'ACQUIRER_REFERENCE_NUMBER' } })).toMatchObject({ state: { status: 'lost', withdrawals: 2, reinstatements: 1 } });
    // Another merchant account's dispute names nothing of ours.
    expect(read('CHARGEBACK', { merchantAccountCode: 'SomeoneElse' })).toMatchObject({ reference: '', object: 'payment' });
  });

  it("maps the schemes' reason codes onto ours", () => {
    expect(disputeReasonOf('visa', '10.4')).toBe('fraudulent');
    expect(disputeReasonOf('visa', '12.6.1')).toBe('duplicate');
    expect(disputeReasonOf('visa', '13.1')).toBe('product_not_received');
    expect(disputeReasonOf('visa', '13.2')).toBe('subscription_canceled');
    expect(disputeReasonOf('visa', '11.3')).toBe('processing_error');
    expect(disputeReasonOf('mc', ' 4837')).toBe('fraudulent');
    expect(disputeReasonOf('mc', '4860')).toBe('credit_not_processed');
    expect(disputeReasonOf('amex', 'C08')).toBe('product_not_received');
    expect(disputeReasonOf('amex', 'F29')).toBe('fraudulent');
    expect(disputeReasonOf('discover', 'UA01')).toBe('general');
    expect(disputeReasonOf(undefined, undefined)).toBe('general');
  });
});
