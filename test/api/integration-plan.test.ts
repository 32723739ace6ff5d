// The implementation plan (GET /v1/account/integration, docs/test-mode.md) moves item by item as a new
// account does each step through the public API in test mode, and live activation follows it.
import { describe, expect, it } from 'vitest';
import { activateLive, createAccount, getAccount, issueKey, setPayoutSettings } from '../../src/domain/accounts/service.js';
import { client, created, eventually, orderBody, type Api } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';
import { CARDS, orderAndPay } from '../support/payments.js';
import { verifies, type Receiver } from '../support/webhooks.js';

// With the worker: the plan's delivery item needs a real delivery acknowledged.
const h = useService({ overrides: { roles: ['api', 'worker'], workerIntervalMs: 50 } });

async function newcomer() {
  const account = await createAccount(h.db, 'Newcomer');
  const key = await issueKey(h.db, account.id, { livemode: false });
  return { account, api: client(() => h.url, key.secret) };
}

async function planOf(api: Api) {
  const res = await api.get('/v1/account/integration');
  expect(res.status, res.text).toBe(200);
  return res.body as { object: string; account: string; complete: boolean; items: { id: string; required: boolean; status: string; evidence: string | null }[] };
}

async function itemOf(api: Api, id: string) {
  const item = (await planOf(api)).items.find((i) => i.id === id);
  expect(item, id).toBeDefined();
  return item!;
}

/** Waits until the item is done (some evidence is recorded after the answer is sent) and returns its evidence. */
async function done(api: Api, id: string): Promise<string | null> {
  const item = await eventually(() => itemOf(api, id), (i) => i.status === 'done');
  return item.evidence;
}

/** A receiver that verifies like a correct integration: 2xx for a valid, fresh signature, 400 otherwise. */
function verifying(receiver: Receiver, secret: string) {
  receiver.answer = (req) => ({ status: verifies(secret, req) ? 200 : 400 });
}

const send = (api: Api, endpoint: string, scenario: string) => api.post(`/v1/test-helpers/webhook-endpoints/${endpoint}/send`, { scenario });

describe('implementation plan', () => {
  it('starts open, names its required items, and each step through the API closes one with its evidence', async () => {
    const { account, api } = await newcomer();
    const start = await planOf(api);
    expect(start).toMatchObject({ object: 'integration_plan', account: account.id, complete: false });
    expect(start.items.every((i) => i.status === 'open' && i.evidence === null)).toBe(true);
    const required = start.items.filter((i) => i.required).map((i) => i.id);
    expect(required).toEqual(expect.arrayContaining(['webhook_endpoint', 'webhook_scenario_invalid_signature', 'card_decline', 'refund', 'idempotent_replay']));
    // Payouts are required only of accounts onboarding enabled for them; mandates never.
    expect(required).not.toContain('payout');
    expect(required).not.toContain('mandate');

    const receiver = await h.receiver();
    const endpoint = (await created(api, '/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['*'] })) as { id: string; secret: string };
    expect(await done(api, 'webhook_endpoint')).toBe(endpoint.id);

    // A receiver that takes everything has not shown it verifies signatures.
    receiver.answer = () => ({ status: 200 });
    expect((await send(api, endpoint.id, 'invalid_signature')).body.passed).toBe(false);
    expect((await itemOf(api, 'webhook_scenario_invalid_signature')).status).toBe('open');
    verifying(receiver, endpoint.secret);
    for (const scenario of ['deliver', 'invalid_signature', 'stale_timestamp', 'duplicate', 'out_of_order']) {
      expect((await send(api, endpoint.id, scenario)).body.answers_as_expected, scenario).toBe(true);
      expect(await itemOf(api, `webhook_scenario_${scenario}`)).toMatchObject({ status: 'done', evidence: endpoint.id });
    }

    const { payment } = await orderAndPay(api, CARDS.success);
    expect(await done(api, 'card_success')).toBe(payment.id);
    // The worker delivers the payment's events to the endpoint, which acknowledges them.
    expect(await done(api, 'webhook_delivery_acknowledged')).toMatch(/^evt_/);
    const scenarios: [string, string][] = [
      ['card_decline', CARDS.declined],
      ['card_pending', CARDS.pending],
      ['card_timeout', CARDS.timeout],
      ['card_processor_error', CARDS.processorError],
    ];
    for (const [item, card] of scenarios) {
      const paid = await orderAndPay(api, card);
      expect(await itemOf(api, item)).toMatchObject({ status: 'done', evidence: paid.payment.id });
    }

    const refund = await created(api, '/v1/refunds', { payment: payment.id, amount: 100 });
    expect(await done(api, 'refund')).toBe(refund.id);

    expect((await planOf(api)).complete).toBe(false);
    const body = orderBody();
    const first = await api.post('/v1/payment-orders', body, { idempotencyKey: 'plan-replay-1' });
    const again = await api.post('/v1/payment-orders', body, { idempotencyKey: 'plan-replay-1' });
    expect(first.status, first.text).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(await done(api, 'idempotent_replay')).toBe(again.headers.get('request-id'));

    const finished = await planOf(api);
    expect(finished.complete).toBe(true);
    // Later occurrences keep the first evidence.
    await send(api, endpoint.id, 'deliver');
    expect(await planOf(api)).toEqual(finished);

    // Everything required is done: live activation needs no --force, and none is recorded.
    expect(await activateLive(h.db, account.id)).toMatchObject({ live_enabled: true, live_forced_at: null });
  }, 120_000);

  it('is the account’s own: another account and live-mode objects do not count for it', async () => {
    const first = await newcomer();
    const other = await newcomer();
    await created(other.api, '/v1/webhook-endpoints', { url: 'https://example.com/hooks', enabled_events: ['*'] });
    await orderAndPay(other.api, CARDS.success);
    expect((await itemOf(first.api, 'webhook_endpoint')).status).toBe('open');
    expect((await itemOf(first.api, 'card_success')).status).toBe('open');
    // The tenant's live key reads the same (test-mode) plan; its live objects are no evidence.
    await created(h.live, '/v1/webhook-endpoints', { url: 'https://example.com/live-hooks', enabled_events: ['*'] });
    const live = await h.live.get('/v1/account/integration');
    expect(live.status).toBe(200);
    expect(live.body.account).toBe(h.tenant.accountId);
    expect(live.body.items.find((i: { id: string }) => i.id === 'webhook_endpoint').status).toBe('open');
  });

  it('requires a paid payout of an account enabled for payouts, and live activation names what is open', async () => {
    const { account, api } = await newcomer();
    await setPayoutSettings(h.db, account.id, { liveEnabled: true });
    expect(await itemOf(api, 'payout')).toMatchObject({ required: true, status: 'open' });
    await expect(activateLive(h.db, account.id)).rejects.toThrow(/open required items in its implementation plan: .*payout/);
    expect((await getAccount(h.db, account.id)).live_enabled).toBe(false);
    const forced = await activateLive(h.db, account.id, { force: true });
    expect(forced.live_enabled).toBe(true);
    expect(Date.parse(forced.live_forced_at!)).not.toBeNaN();
  });
});
