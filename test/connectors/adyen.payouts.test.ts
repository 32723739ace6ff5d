// Adyen payouts end to end through a connector account's payout credentials, with
// ADYEN_PAYOUT_BASE_URL pointing at a fake Adyen Transfers API that validates every request against
// Adyen's published TransferService-v4 document, and its balance platform webhooks signed with the
// SDK's HMAC: a live account takes a card payment at Adyen and pays a beneficiary from it (paid by
// the `booked` webhook, returned later); failed and returned outcomes release the reservation; a
// failure reported after `booked` is a return; duplicate and out-of-order webhooks; a lost answer
// found by reference instead of sent again; 429 → the next connector; foreign signatures refused;
// and accounts without payout credentials leave payouts to the simulated banks.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setPayoutSettings } from '../../src/domain/accounts/service.js';
import { createConnectorAccount as account } from '../support/connectors.js';
import { FakeAdyen } from '../support/fakes/adyen.js';
import { FakeAdyenTransfers, type FakeTransfer } from '../support/fakes/adyen-transfers.js';
import { useService } from '../support/fixtures.js';
import type { Api } from '../support/helpers.js';
import { balanceOf, eventTypesOf, orderAndPay } from '../support/payments.js';
import { bankAccount, expectLedgerClean, fund, newBeneficiary, payout } from '../support/payouts.js';

const checkout = new FakeAdyen();
const transfers = new FakeAdyenTransfers();
beforeAll(async () => {
  await checkout.start();
  await transfers.start();
});
afterEach(() => {
  expect(transfers.invalid).toEqual([]);
  expect(checkout.invalid).toEqual([]);
});
afterAll(async () => {
  await checkout.close();
  await transfers.close();
});

const h = useService({
  submitOnCreate: false,
  late: () => ({ settings: { adyenCheckoutBaseUrl: checkout.url, adyenPayoutBaseUrl: transfers.url, connectorTimeoutMs: 2000 } }),
});

const HMAC = '3c'.repeat(32);
const PAYOUT_HMAC = '4d'.repeat(32);
const BALANCE_ACCOUNT = 'BA3227C223222B5FG88S28BGN';
const payoutCredentials = { payout_api_key: `AQEpayout${'p'.repeat(20)}`, balance_account_id: BALANCE_ACCOUNT, payout_hmac_key: PAYOUT_HMAC };
const cardCredentials = (mode: 'test' | 'live') => ({
  api_key: `AQE${mode}${'k'.repeat(20)}`,
  merchant_account: 'PayoutsECOM',
  hmac_key: HMAC,
  ...(mode === 'live' ? { live_url_prefix: '1797a841fbb37ca7-OrchestratorDemo' } : {}),
});

const get = async (api: Api, id: string) => (await api.get(`/v1/payouts/${id}`)).body;
const atAdyen = (payoutId: string): FakeTransfer => {
  const held = transfers.held(payoutId);
  expect(held).toHaveLength(1);
  return held[0]!;
};

async function deliver(url: string, transfer: FakeTransfer, key = PAYOUT_HMAC, live = false) {
  const { body, headers } = transfers.webhook(transfer, key, live);
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, text: await res.text() };
}
const accepted = { status: 200, text: '[accepted]' };

/** A test-mode tenant with an Adyen account that can pay out, funded, and a beneficiary of `ending`. */
async function adyenTenant(ending: '0000' | '0002' = '0000', format: 'iban' | 'gb' | 'us' = 'iban') {
  const t = await h.newTenant();
  const adyen = await account(t.api, 'adyen', 'adyen', { ...cardCredentials('test'), ...payoutCredentials });
  const currency = { iban: 'EUR', gb: 'GBP', us: 'USD' }[format];
  await fund(t.api, 50_000, currency);
  const ben = await newBeneficiary(t.api, ending, format);
  return { ...t, adyen, ben, currency };
}

/** A payout created and submitted by the worker's pass: processing at Adyen, its transfer `received`. */
async function submitted(api: Api, beneficiary: string, amount: number, currency = 'EUR') {
  const res = await payout(api, beneficiary, amount, currency);
  expect(res.status, res.text).toBe(201);
  await h.service.runPayouts();
  return { payout: await get(api, res.body.id), transfer: atAdyen(res.body.id) };
}

describe('a live account pays a beneficiary through Adyen', () => {
  it('card payment at Adyen, then a payout from its proceeds: booked → paid, returned later → money back', async () => {
    const t = await h.newTenant();
    await setPayoutSettings(h.db, t.accountId, { liveEnabled: true });
    const adyen = await account(t.live, 'adyen', 'adyen-live', { ...cardCredentials('live'), ...payoutCredentials });
    const { payment } = await orderAndPay(t.live, '4111111145551142', { amount: 2500, currency: 'EUR' });
    expect(payment).toMatchObject({ status: 'succeeded', connector: adyen.id });

    const ben = await t.live.post('/v1/beneficiaries', { name: 'Zoë Ångström-Müller', type: 'individual', bank_account: { country: 'NL', currency: 'EUR', iban: 'NL91ABNA0417164300' } });
    expect(ben.status, ben.text).toBe(201);
    const created = await payout(t.live, ben.body.id, 1000);
    expect(created.status, created.text).toBe(201);
    await h.service.runPayouts();
    const sent = await get(t.live, created.body.id);
    const transfer = atAdyen(created.body.id);
    expect(sent).toMatchObject({ status: 'processing', livemode: true, connector: adyen.id, connector_reference: transfer.id });
    // Our payout id is both the transfer's reference and its Idempotency-Key; the IBAN goes to Adyen only.
    const request = transfers.requests.find((r) => r.method === 'POST' && r.body?.reference === created.body.id)!;
    expect(request.key).toBe(created.body.id);
    expect(request.body).toEqual({
      amount: { currency: 'EUR', value: 1000 },
      balanceAccountId: BALANCE_ACCOUNT,
      category: 'bank',
      counterparty: { bankAccount: { accountHolder: { fullName: 'Zoe Angstrom-Muller', type: 'individual' }, accountIdentification: { type: 'iban', iban: 'NL91ABNA0417164300' } } },
      priority: 'regular',
      reference: created.body.id,
    });
    expect(await balanceOf(t.live)).toEqual({ available: 1500, reserved: 1000, pending: 0 });

    const booked = transfers.settle(transfer.id, 'booked');
    expect(await deliver(adyen.webhook_url, booked, PAYOUT_HMAC, true)).toEqual(accepted);
    expect(await get(t.live, created.body.id)).toMatchObject({ status: 'paid', connector_reference: transfer.id });
    expect(await balanceOf(t.live)).toEqual({ available: 1500, reserved: 0, pending: 0 });

    const returned = transfers.settle(transfer.id, 'returned');
    expect(await deliver(adyen.webhook_url, returned, PAYOUT_HMAC, true)).toEqual(accepted);
    expect(await get(t.live, created.body.id)).toMatchObject({ status: 'returned', failure_code: 'account_closed' });
    expect(await balanceOf(t.live)).toEqual({ available: 2500, reserved: 0, pending: 0 });
    expect(await eventTypesOf(t.live, created.body.id)).toEqual(['payout.created', 'payout.processing', 'payout.paid', 'payout.returned']);
    await expectLedgerClean(h.db, t.accountId);
  });
});

describe('Adyen transfer outcomes and webhooks', () => {
  it('GB and US accounts are identified locally; a status check (GET /transfers/{id}) learns `booked`', async () => {
    for (const [format, identification] of [
      ['gb', { type: 'ukLocal', accountNumber: '55770000', sortCode: '200000' }],
      ['us', { type: 'usLocal', accountNumber: '000123450000', routingNumber: '110000000' }],
    ] as const) {
      const { api, ben, currency } = await adyenTenant('0000', format);
      const { payout: sent, transfer } = await submitted(api, ben.id, 700, currency);
      expect(transfer.counterparty.bankAccount.accountIdentification).toEqual(identification);
      transfers.settle(transfer.id, 'booked');
      h.service.clock.advance(h.service.config.payments.statusCheckIntervalMs + 1);
      await h.service.runPayouts();
      expect(await get(api, sent.id)).toMatchObject({ status: 'paid', connector_reference: transfer.id });
    }
  });

  it('failed at the beneficiary’s bank: failed, money back; a late `booked` webhook and a duplicate change nothing', async () => {
    const { api, adyen, ben, accountId } = await adyenTenant();
    const { payout: sent, transfer } = await submitted(api, ben.id, 4000);
    const received = transfers.webhook(transfer, PAYOUT_HMAC);
    const failed = transfers.settle(transfer.id, 'failed', 'counterpartyAccountClosed');
    expect(await deliver(adyen.webhook_url, failed)).toEqual(accepted);
    expect(await deliver(adyen.webhook_url, failed)).toEqual(accepted);
    const after = await get(api, sent.id);
    expect(after).toMatchObject({ status: 'failed', failure_code: 'account_closed' });
    // The earlier `received` webhook, arriving last, changes nothing.
    expect((await fetch(adyen.webhook_url, { method: 'POST', headers: received.headers, body: received.body })).status).toBe(200);
    expect(await get(api, sent.id)).toEqual(after);
    expect(await eventTypesOf(api, sent.id)).toEqual(['payout.created', 'payout.processing', 'payout.failed']);
    expect(await balanceOf(api)).toEqual({ available: 50_000, reserved: 0, pending: 0 });
    await expectLedgerClean(h.db, accountId);
  });

  it('out of order: `returned` before `booked` is paid then returned; the late `booked` changes nothing', async () => {
    const { api, adyen, ben, accountId } = await adyenTenant();
    const { payout: sent, transfer } = await submitted(api, ben.id, 1200);
    const booked = structuredClone(transfers.settle(transfer.id, 'booked'));
    const returned = transfers.settle(transfer.id, 'returned', 'counterpartyAccountBlocked');
    expect(await deliver(adyen.webhook_url, returned)).toEqual(accepted);
    expect(await deliver(adyen.webhook_url, booked)).toEqual(accepted);
    expect(await get(api, sent.id)).toMatchObject({ status: 'returned', failure_code: 'payout_declined' });
    expect(await eventTypesOf(api, sent.id)).toEqual(['payout.created', 'payout.processing', 'payout.paid', 'payout.returned']);
    expect(await balanceOf(api)).toEqual({ available: 50_000, reserved: 0, pending: 0 });
    await expectLedgerClean(h.db, accountId);
  });

  it('`failed` after `booked`: the bank sent the money back, the paid payout is returned', async () => {
    const { api, adyen, ben, accountId } = await adyenTenant();
    const { payout: sent, transfer } = await submitted(api, ben.id, 900);
    expect(await deliver(adyen.webhook_url, transfers.settle(transfer.id, 'booked'))).toEqual(accepted);
    expect(await deliver(adyen.webhook_url, transfers.settle(transfer.id, 'failed'))).toEqual(accepted);
    expect(await get(api, sent.id)).toMatchObject({ status: 'returned', failure_code: 'payout_declined' });
    expect(await balanceOf(api)).toEqual({ available: 50_000, reserved: 0, pending: 0 });
    await expectLedgerClean(h.db, accountId);
  });

  it('refused by Adyen (transaction rules): failed processing_error, never sent elsewhere', async () => {
    const { api, adyen, ben } = await adyenTenant();
    const { payout: sent, transfer } = await submitted(api, ben.id, 300);
    expect(await deliver(adyen.webhook_url, transfers.settle(transfer.id, 'refused'))).toEqual(accepted);
    expect(await get(api, sent.id)).toMatchObject({ status: 'failed', failure_code: 'processing_error', connector: adyen.id });
  });

  it('webhooks signed with another key, or of the other environment, are refused and change nothing', async () => {
    const { api, adyen, ben } = await adyenTenant();
    const { payout: sent, transfer } = await submitted(api, ben.id, 300);
    const booked = transfers.settle(transfer.id, 'booked');
    for (const [key, live] of [['ab'.repeat(32), false], [HMAC, false], [PAYOUT_HMAC, true]] as const) {
      const res = await deliver(adyen.webhook_url, booked, key, live);
      expect(res.status, res.text).toBe(live ? 400 : 401);
    }
    expect(await get(api, sent.id)).toMatchObject({ status: 'processing', version: sent.version });
  });
});

describe('Adyen payouts and the core rules over its faults', () => {
  it('500 after acting: processing with no reference, never sent elsewhere; the check finds the transfer by reference', async () => {
    const { api, ben, adyen } = await adyenTenant();
    await api.request('PUT', '/v1/routing', { body: { rules: [{ payment_method_types: ['payout'], connectors: [{ name: 'adyen' }, { name: 'simulator_b' }] }] } });
    transfers.inject('500_after');
    const { payout: sent, transfer } = await submitted(api, ben.id, 800);
    expect(sent).toMatchObject({ status: 'processing', connector: adyen.id, connector_reference: null });
    expect(sent.attempts.map((a: any) => [a.connector, a.outcome, a.error_code])).toEqual([[adyen.id, 'error', 'invalid_response']]);
    h.service.clock.advance(h.service.config.payments.statusCheckIntervalMs + 1);
    await h.service.runPayouts();
    expect(await get(api, sent.id)).toMatchObject({ status: 'processing', connector: adyen.id, connector_reference: transfer.id });
    expect(transfers.sent(sent.id)).toBe(1);
    expect(transfers.requests.some((r) => r.method === 'GET' && r.path === '/btl/v4/transfers')).toBe(true);
  });

  it('429: Adyen did nothing, the next connector pays', async () => {
    const { api, ben, adyen } = await adyenTenant();
    await api.request('PUT', '/v1/routing', { body: { rules: [{ payment_method_types: ['payout'], connectors: [{ name: 'adyen' }, { name: 'simulator_b' }] }] } });
    transfers.inject('429');
    const res = await payout(api, ben.id, 500);
    await h.service.runPayouts();
    const after = await get(api, res.body.id);
    expect(after).toMatchObject({ status: 'paid', connector: 'simulator_b' });
    expect(after.attempts.map((a: any) => [a.connector, a.outcome, a.error_code])).toEqual([
      [adyen.id, 'error', 'processor_error'],
      ['simulator_b', 'succeeded', null],
    ]);
    expect(transfers.held(res.body.id)).toEqual([]);
  });
});

describe('routing payouts through connector accounts', () => {
  it('the catalogue lists Adyen payouts; an account without payout credentials leaves them to the simulated banks', async () => {
    const catalogue = (await h.api.get('/v1/connectors')).body.data;
    expect(catalogue.find((c: any) => c.name === 'adyen').capabilities.payouts).toBe(true);
    const t = await h.newTenant();
    await account(t.api, 'adyen', 'cards-only', cardCredentials('test'));
    await fund(t.api, 1000);
    const ben = await t.api.post('/v1/beneficiaries', { name: 'Ada', type: 'individual', bank_account: bankAccount('0000') });
    const res = await payout(t.api, ben.body.id, 100);
    await h.service.runPayouts();
    expect(await get(t.api, res.body.id)).toMatchObject({ status: 'paid', connector: 'simulator_a' });
  });
});
