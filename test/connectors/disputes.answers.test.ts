// Answering disputes at the real processors' fakes, end to end through connector accounts: Stripe's
// dispute update with submit and its close (the fake checks parameters against Stripe's published
// dispute object); Adyen's Disputes API on its own host (ADYEN_DISPUTE_BASE_URL), every request
// checked against the published v30 document, the evidence a well-formed PDF. Opened → evidence
// submitted → won; lost; accepted; duplicate and out-of-order dispute webhooks around the answer;
// the processor's refusal a typed 422 with the dispute unchanged.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createConnectorAccount } from '../support/connectors.js';
import { FakeAdyen } from '../support/fakes/adyen.js';
import { FakeAdyenDisputes } from '../support/fakes/adyen-disputes.js';
import { FakeStripe, STRIPE_CARDS } from '../support/fakes/stripe.js';
import { useService } from '../support/fixtures.js';
import { balanceOf, newOrder, pay } from '../support/payments.js';
import { checkLedger } from '../../src/ledger/check.js';
import { wellFormedPdf } from '../support/fakes/adyen-disputes.js';

const stripe = new FakeStripe();
const adyen = new FakeAdyen();
const adyenDisputes = new FakeAdyenDisputes();
beforeAll(() => Promise.all([stripe.start(), adyen.start(), adyenDisputes.start()]));
afterEach(() => {
  expect(adyen.invalid).toEqual([]);
  expect(adyenDisputes.invalid).toEqual([]);
});
afterAll(() => Promise.all([stripe.close(), adyen.close(), adyenDisputes.close()]));

const h = useService({
  late: () => ({ settings: { stripeApiBaseUrl: stripe.url, adyenCheckoutBaseUrl: adyen.url, adyenDisputeBaseUrl: adyenDisputes.url, connectorTimeoutMs: 5000 } }),
});
const SIGNING_SECRET = 'whsec_dispute_answers_secret_01';
const HMAC_KEY = '5e'.repeat(32);
const MERCHANT = 'AnswersECOM';
let stripeAccount: { id: string; name: string; webhook_url: string };
let adyenAccount: { id: string; name: string; webhook_url: string };

beforeAll(async () => {
  stripeAccount = await createConnectorAccount(h.api, 'stripe', 'stripe-answers', { secret_key: `sk_test_${'a'.repeat(24)}`, webhook_secret: SIGNING_SECRET });
  adyenAccount = await createConnectorAccount(h.api, 'adyen', 'adyen-answers', { api_key: `AQE_answers_${'k'.repeat(16)}`, merchant_account: MERCHANT, hmac_key: HMAC_KEY });
});

const route = (name: string) => h.api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name }] }] } });
const post = async (url: string, body: string, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  expect(res.status).toBe(200);
};
const disputeOf = async (payment: string) => (await h.api.get(`/v1/disputes?payment=${payment}`)).body.data[0];

describe('Stripe: dispute update with submit, and close', () => {
  async function opened(amount: number, dp: string) {
    await route(stripeAccount.name);
    const order = await newOrder(h.api, { amount, currency: 'EUR' });
    const payment = (await pay(h.api, order.id, STRIPE_CARDS.success)).body;
    const intent = payment.connector_reference as string;
    const send = async (type: string, status: string, funds: { withdrawn: boolean; reinstated: boolean }) => {
      const e = stripe.event(type, stripe.dispute(intent, dp, status, funds), SIGNING_SECRET);
      await post(stripeAccount.webhook_url, e.body, { 'stripe-signature': e.signature });
      return e;
    };
    await send('charge.dispute.created', 'needs_response', { withdrawn: false, reinstated: false });
    const withdrawn = await send('charge.dispute.funds_withdrawn', 'needs_response', { withdrawn: true, reinstated: false });
    return { payment, send, withdrawn, dispute: await disputeOf(payment.id) };
  }

  it('opened → evidence submitted → won; a duplicate and a late webhook change nothing', async () => {
    const before = await balanceOf(h.api);
    const { payment, send, withdrawn, dispute } = await opened(3100, 'dp_answers_won_0001');
    expect(dispute).toMatchObject({ status: 'needs_response', funds_withdrawn: true });
    const res = await h.api.post(`/v1/disputes/${dispute.id}/evidence`, { evidence: { product_description: 'Tea', shipping_tracking_number: '1Z999' }, submit: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('under_review');
    expect(stripe.disputes.get('dp_answers_won_0001')).toMatchObject({ status: 'under_review', evidence: { product_description: 'Tea', shipping_tracking_number: '1Z999' }, evidence_details: { submission_count: 1 } });
    // The funds_withdrawn event again (a duplicate), and an earlier-stage one late: nothing moves back.
    await post(stripeAccount.webhook_url, withdrawn.body, { 'stripe-signature': withdrawn.signature });
    await send('charge.dispute.updated', 'needs_response', { withdrawn: true, reinstated: false });
    expect((await disputeOf(payment.id)).status).toBe('under_review');
    await send('charge.dispute.funds_reinstated', 'won', { withdrawn: true, reinstated: true });
    await send('charge.dispute.closed', 'won', { withdrawn: true, reinstated: true });
    expect(await disputeOf(payment.id)).toMatchObject({ status: 'won', funds_withdrawn: false });
    expect((await balanceOf(h.api)).available).toBe(before.available + 3100);
  });

  it('opened → evidence submitted → lost: the funds stay out', async () => {
    const { payment, send, dispute } = await opened(1900, 'dp_answers_lost_0001');
    expect((await h.api.post(`/v1/disputes/${dispute.id}/evidence`, { evidence: { uncategorized_text: 'nothing much' }, submit: true })).status).toBe(200);
    await send('charge.dispute.closed', 'lost', { withdrawn: true, reinstated: false });
    expect(await disputeOf(payment.id)).toMatchObject({ status: 'lost', funds_withdrawn: true });
  });

  it('accepted: the dispute closed at Stripe; a refusal there is a typed 422, the dispute unchanged', async () => {
    const { dispute } = await opened(800, 'dp_answers_accept_0001');
    const res = await h.api.post(`/v1/disputes/${dispute.id}/accept`, undefined);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'accepted' });
    expect(stripe.disputes.get('dp_answers_accept_0001')!.status).toBe('lost');

    const other = await opened(700, 'dp_answers_refused_0001');
    // Decided at Stripe before the merchant's answer reached it (no webhook yet).
    stripe.disputes.get('dp_answers_refused_0001')!.status = 'lost';
    const refused = await h.api.post(`/v1/disputes/${other.dispute.id}/evidence`, { evidence: { uncategorized_text: 'x' }, submit: true });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'dispute_response_refused', message: expect.stringContaining('Stripe refused the answer') });
    expect((await disputeOf(other.payment.id)).status).toBe('needs_response');
  });
});

describe("Adyen: the Disputes API on its own host", () => {
  let n = 0;
  async function opened(amount: number) {
    await route(adyenAccount.name);
    const order = await newOrder(h.api, { amount, currency: 'EUR' });
    const payment = (await pay(h.api, order.id, '4111111145551142')).body;
    const psp = `DISPUTEANSWER${String(++n).padStart(3, '0')}`;
    adyenDisputes.open(psp, MERCHANT);
    const notify = (code: Parameters<FakeAdyen['notification']>[0], extra: Record<string, unknown> = {}) =>
      post(adyenAccount.webhook_url, adyen.notification(code, { pspReference: psp, originalReference: payment.connector_reference, merchantReference: payment.id, merchantAccountCode: MERCHANT, amount: { currency: 'EUR', value: amount }, ...extra }, HMAC_KEY));
    // Adyen's example chargeback's defense period ended in 2021: this one's ends in a week.
    const week = new Date(Date.now() + 7 * 86_400_000).toISOString().replace(/\.\d+Z$/, '+00:00');
    await notify('CHARGEBACK', { additionalData: { chargebackReasonCode: '4853', chargebackSchemeCode: 'mc', defensePeriodEndsAt: week } });
    return { payment, psp, notify, dispute: await disputeOf(payment.id) };
  }

  it('opened → evidence as a PDF, the first applicable reason → defended; CHARGEBACK_REVERSED wins it; out-of-order reports change nothing', async () => {
    const { payment, psp, notify, dispute } = await opened(2200);
    expect(dispute).toMatchObject({ status: 'needs_response', funds_withdrawn: true });
    const res = await h.api.post(`/v1/disputes/${dispute.id}/evidence`, { evidence: { product_description: 'Pottery (hand-made) — café', uncategorized_text: 'Delivered' }, submit: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('under_review');
    const held = adyenDisputes.disputes.get(psp)!;
    expect(held).toMatchObject({ state: 'defended', defenseReasonCode: 'GoodsNotReturned' });
    expect(held.documents).toEqual([expect.objectContaining({ contentType: 'application/pdf', defenseDocumentTypeCode: 'GoodsNotReturned' })]);
    const pdf = Buffer.from(held.documents[0]!.content, 'base64');
    expect(wellFormedPdf(pdf)).toBe(true);
    expect(pdf.toString('latin1')).toContain('(Delivered)');
    expect(adyenDisputes.calls('defendDispute')).toHaveLength(1);
    // NOTIFICATION_OF_CHARGEBACK (an earlier stage) late, then the outcome, twice.
    await notify('NOTIFICATION_OF_CHARGEBACK');
    expect((await disputeOf(payment.id)).status).toBe('under_review');
    await notify('CHARGEBACK_REVERSED');
    await notify('CHARGEBACK_REVERSED');
    expect(await disputeOf(payment.id)).toMatchObject({ status: 'won', funds_withdrawn: false });
    expect(await checkLedger(h.db)).toMatchObject({ ok: true });
  });

  it("the merchant's defense_reason is used; one that does not apply is refused, the dispute unchanged", async () => {
    const first = await opened(1300);
    const refused = await h.api.post(`/v1/disputes/${first.dispute.id}/evidence`, { evidence: { uncategorized_text: 'x' }, defense_reason: 'NoSuchReason', submit: true });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'dispute_response_refused', message: expect.stringContaining('NoSuchReason') });
    expect(await disputeOf(first.payment.id)).toMatchObject({ status: 'needs_response', defense_reason: 'NoSuchReason' });
    // Another key, another reason: two documents required, the one PDF supplied as both.
    const res = await h.api.post(`/v1/disputes/${first.dispute.id}/evidence`, { defense_reason: 'GoodsWereAsDescribed', submit: true });
    expect(res.status, res.text).toBe(200);
    expect(adyenDisputes.disputes.get(first.psp)).toMatchObject({ state: 'defended', defenseReasonCode: 'GoodsWereAsDescribed' });
    await first.notify('DISPUTE_DEFENSE_PERIOD_ENDED');
    expect((await disputeOf(first.payment.id)).status).toBe('lost');
  });

  it('accepted with acceptDispute', async () => {
    const { payment, psp, dispute } = await opened(500);
    const res = await h.api.post(`/v1/disputes/${dispute.id}/accept`, undefined);
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('accepted');
    expect(adyenDisputes.disputes.get(psp)!.state).toBe('accepted');
    expect(adyenDisputes.calls('acceptDispute')).toEqual([{ disputePspReference: psp, merchantAccountCode: MERCHANT }]);
    expect((await disputeOf(payment.id)).status).toBe('accepted');
  });
});
