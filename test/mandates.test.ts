// Mandates: validation of each scheme, every test-mode scenario of the simulated bank (API.md §6),
// retrieve and list, the transition table, bank revocation, idempotent retries and resumption.
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../src/kernel/errors.js';
import { mandateStates, MANDATE_STATUSES } from '../src/domain/mandates/state.js';
import { runWorkerOnce } from '../src/worker/worker.js';
import { client, createTenant, createTestDatabase, type TestDatabase } from './helpers.js';
import { eventTypesOf, eventually, query, startPaymentsService, type Api, type PaymentsTestService } from './payments.helpers.js';
import { accountFor, ENDINGS, mandateBody, newMandate } from './mandates.helpers.js';

let testDb: TestDatabase;
/** Pending mandates wait a minute: only the helper or the worker settles them. */
let manual: PaymentsTestService;
/** Pending mandates settle after 200 ms and are reported by webhook. */
let automatic: PaymentsTestService;
let api: Api;
let autoApi: Api;
let liveApi: Api;
const log = pino({ level: 'silent' });

beforeAll(async () => {
  testDb = await createTestDatabase();
  manual = await startPaymentsService(testDb, { settings: { statusCheckIntervalMs: 100 } });
  automatic = await startPaymentsService(testDb, { settings: { simulator: { pendingDelayMs: 200 } } });
  const tenant = await createTenant(testDb.database);
  api = client(manual.url, tenant.testKey);
  autoApi = client(automatic.url, tenant.testKey);
  liveApi = client(manual.url, tenant.liveKey);
});
afterAll(async () => {
  await automatic?.close();
  await manual?.close();
  await testDb?.drop();
});

async function expectError(res: { status: number; body: any; text: string }, status: number, code: string, param?: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error.code, res.text).toBe(code);
  if (param !== undefined) expect(res.body.error.param, res.text).toBe(param);
}

describe('validation per scheme', () => {
  it.each([
    ['sepa_core', accountFor('sepa_core'), 'EUR'],
    ['sepa_core (a GB IBAN in EUR)', { country: 'GB', currency: 'EUR', iban: 'GB29NWBK60161331926819' }, 'EUR'],
    ['sepa_core (an FR IBAN, spaces and lower case)', { country: 'FR', currency: 'EUR', iban: 'fr14 2004 1010 0505 0001 3m02 606' }, 'EUR'],
    ['bacs (sort code)', accountFor('bacs'), 'GBP'],
    ['bacs (a GB IBAN)', { country: 'GB', currency: 'GBP', iban: 'GB29NWBK60161331926819' }, 'GBP'],
    ['ach', accountFor('ach'), 'USD'],
  ])('%s is accepted', async (name, bank_account, currency) => {
    const scheme = name.split(' ')[0]!;
    const res = await api.post('/v1/mandates', { ...mandateBody(), scheme, currency, bank_account });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ object: 'mandate', scheme, currency, livemode: false, status: 'active' });
    expect(res.body.bank_account).toMatchObject({ country: bank_account.country, currency: bank_account.currency });
    expect(res.body.bank_account.last4).toMatch(/^[0-9A-Z]{4}$/);
    expect(res.body.bank_account.fingerprint).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.stringify(res.body)).not.toContain(String((bank_account as any).iban ?? (bank_account as any).account_number).replace(/\s/g, '').toUpperCase());
  });

  it.each([
    // scheme ↔ country
    ['sepa_core, a US account', { scheme: 'sepa_core', currency: 'USD', bank_account: accountFor('ach') }, 'parameter_invalid', 'bank_account.country'],
    ['sepa_core, a TR IBAN (not SEPA)', { scheme: 'sepa_core', currency: 'TRY', bank_account: { country: 'TR', currency: 'TRY', iban: 'TR330006100519786457841326' } }, 'parameter_invalid', 'bank_account.country'],
    ['bacs, a DE account', { scheme: 'bacs', currency: 'EUR', bank_account: accountFor('sepa_core') }, 'parameter_invalid', 'bank_account.country'],
    ['bacs, a US account', { scheme: 'bacs', currency: 'USD', bank_account: accountFor('ach') }, 'parameter_invalid', 'bank_account.country'],
    ['ach, a GB account', { scheme: 'ach', currency: 'GBP', bank_account: accountFor('bacs') }, 'parameter_invalid', 'bank_account.country'],
    ['ach, a DE account', { scheme: 'ach', currency: 'EUR', bank_account: accountFor('sepa_core') }, 'parameter_invalid', 'bank_account.country'],
    // scheme ↔ account currency
    ['sepa_core, a CH account in CHF', { scheme: 'sepa_core', currency: 'CHF', bank_account: { country: 'CH', currency: 'CHF', iban: 'CH9300762011623852957' } }, 'parameter_invalid', 'bank_account.currency'],
    ['sepa_core, a GB account in GBP', { scheme: 'sepa_core', currency: 'GBP', bank_account: { country: 'GB', currency: 'GBP', iban: 'GB29NWBK60161331926819' } }, 'parameter_invalid', 'bank_account.currency'],
    ['bacs, a GB account in EUR', { scheme: 'bacs', currency: 'EUR', bank_account: { country: 'GB', currency: 'EUR', iban: 'GB29NWBK60161331926819' } }, 'parameter_invalid', 'bank_account.currency'],
    // scheme ↔ account format
    ['sepa_core, a GB sort code account in EUR', { scheme: 'sepa_core', currency: 'EUR', bank_account: { country: 'GB', currency: 'EUR', sort_code: '200000', account_number: '55770000' } }, 'parameter_invalid', 'bank_account.iban'],
    // mandate currency ↔ account currency
    ['sepa_core, currency USD', { scheme: 'sepa_core', currency: 'USD' }, 'parameter_invalid', 'currency'],
    ['bacs, currency EUR', { scheme: 'bacs', currency: 'EUR', bank_account: accountFor('bacs') }, 'parameter_invalid', 'currency'],
    ['ach, currency EUR', { scheme: 'ach', currency: 'EUR', bank_account: accountFor('ach') }, 'parameter_invalid', 'currency'],
    // the account itself
    ['an IBAN with wrong check digits', { bank_account: { country: 'DE', currency: 'EUR', iban: 'DE00370400440532013000' } }, 'parameter_invalid', 'bank_account.iban'],
    ['a US routing number with a bad checksum', { scheme: 'ach', currency: 'USD', bank_account: { ...accountFor('ach'), routing_number: '110000001' } }, 'parameter_invalid', 'bank_account.routing_number'],
    ['a GB account without sort code', { scheme: 'bacs', currency: 'GBP', bank_account: { country: 'GB', currency: 'GBP', account_number: '55770000' } }, 'parameter_missing', 'bank_account.sort_code'],
    ['an unknown bank_account field', { bank_account: { ...accountFor('sepa_core'), holder: 'x' } }, 'parameter_unknown', 'bank_account.holder'],
    // the request's own fields
    ['no scheme', { scheme: undefined }, 'parameter_missing', 'scheme'],
    ['an unknown scheme', { scheme: 'bacs_plus' }, 'parameter_invalid', 'scheme'],
    ['no bank_account', { bank_account: undefined }, 'parameter_missing', 'bank_account'],
    ['no customer name', { customer: { email: 'payer@example.com' } }, 'parameter_missing', 'customer.name'],
    ['a bad customer email', { customer: { email: 'nope', name: 'x' } }, 'parameter_invalid', 'customer.email'],
    ['no reference', { reference: undefined }, 'parameter_missing', 'reference'],
    ['max_amount 0', { max_amount: 0 }, 'parameter_invalid', 'max_amount'],
    ['an unknown field', { interval: 'monthly' }, 'parameter_unknown', 'interval'],
  ])('%s → %s on %s', async (_name, overrides, code, param) => {
    const body = { ...mandateBody(), ...overrides } as Record<string, unknown>;
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    const res = await api.post('/v1/mandates', body);
    await expectError(res, 400, code, param);
    expect(res.body.error.type).toBe('validation');
  });

  it('needs an Idempotency-Key (it calls the scheme)', async () => {
    await expectError(await api.post('/v1/mandates', mandateBody(), { idempotencyKey: undefined }), 400, 'idempotency_key_missing');
  });

  it('live mode has no connector taking mandates yet: routing_no_match, nothing created', async () => {
    const res = await liveApi.post('/v1/mandates', mandateBody());
    await expectError(res, 422, 'routing_no_match');
    expect((await liveApi.get('/v1/mandates')).body.data).toEqual([]);
  });
});

describe('scenarios of the simulated bank', () => {
  it('0000: active at once', async () => {
    const mandate = await newMandate(api, 'sepa_core', ENDINGS.success, { max_amount: 5000, metadata: { plan: 'gold' } });
    expect(mandate).toMatchObject({
      status: 'active',
      connector: 'simulator_a',
      max_amount: 5000,
      metadata: { plan: 'gold' },
      failure_code: null,
      revoked_by: null,
      last_debit_at: null,
      version: 2,
    });
    expect(mandate.connector_reference).toMatch(/^simulator_a_md_/);
    expect(mandate.activated_at).not.toBeNull();
    expect(mandate.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'succeeded' })]);
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.active']);
    expect((await api.get(`/v1/mandates/${mandate.id}`)).body).toEqual(mandate);
  });

  it.each(['sepa_core', 'bacs', 'ach'] as const)('0002 (%s): failed, account_closed', async (scheme) => {
    const mandate = await newMandate(api, scheme, ENDINGS.closed);
    expect(mandate).toMatchObject({ status: 'failed', failure_code: 'account_closed', connector: 'simulator_a', activated_at: null });
    expect(mandate.failure_message).toMatch(/closed/);
    expect(mandate.attempts).toEqual([expect.objectContaining({ outcome: 'declined', error_code: 'account_closed' })]);
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.failed']);
  });

  it('0003: pending; the test helper activates it, once', async () => {
    const mandate = await newMandate(api, 'bacs', ENDINGS.pending);
    expect(mandate).toMatchObject({ status: 'pending', connector: 'simulator_a', version: 2 });
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.pending']);
    const resolved = await api.post(`/v1/test-helpers/mandates/${mandate.id}/resolve`, { outcome: 'active' });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.body).toMatchObject({ status: 'active', version: 3 });
    // The processor's webhook arrives as well, and changes nothing more.
    await eventually(
      () => query(testDb, sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${mandate.id}`),
      (rows) => Number(rows[0]!.n) >= 1,
    );
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.pending', 'mandate.active']);
    expect((await api.get(`/v1/mandates/${mandate.id}`)).body.version).toBe(3);
  });

  it('0003: the test helper can make it fail', async () => {
    const mandate = await newMandate(api, 'ach', ENDINGS.pending);
    const resolved = await api.post(`/v1/test-helpers/mandates/${mandate.id}/resolve`, { outcome: 'failed' });
    expect(resolved.body).toMatchObject({ status: 'failed', failure_code: 'mandate_declined' });
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.pending', 'mandate.failed']);
  });

  it('0003: activates by itself after the configured delay, through the inbound webhook', async () => {
    const mandate = await newMandate(autoApi, 'sepa_core', ENDINGS.pending);
    expect(mandate.status).toBe('pending');
    const settled = await eventually(
      () => autoApi.get(`/v1/mandates/${mandate.id}`),
      (res) => res.body.status !== 'pending',
    );
    expect(settled.body).toMatchObject({ status: 'active', version: 3 });
    const events = (await autoApi.get('/v1/events?type=mandate.active')).body.data.filter((e: any) => e.data.object.id === mandate.id);
    expect(events).toHaveLength(1);
    expect(events[0].request).toEqual({ id: null, idempotency_key: null });
  });

  it('0004: times out and stays pending with no fallback; the worker learns it is active', async () => {
    const mandate = await newMandate(api, 'sepa_core', ENDINGS.timeout);
    expect(mandate).toMatchObject({ status: 'pending', connector: 'simulator_a', connector_reference: null });
    expect(mandate.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'timeout', error_code: 'timeout' })]);
    expect(manual.payments.connectors.simulator!.processors.get('simulator_b')!.mandates.setupRequests.has(mandate.id)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const pass = await runWorkerOnce({ db: testDb.database.db, log, payments: manual.payments });
    expect(pass.mandates!.checked).toBeGreaterThanOrEqual(1);
    const after = (await api.get(`/v1/mandates/${mandate.id}`)).body;
    expect(after).toMatchObject({ status: 'active', connector: 'simulator_a' });
    expect(after.connector_reference).toMatch(/^simulator_a_md_/);
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.pending', 'mandate.active']);
    const [row] = await query(testDb, sql`SELECT next_status_check_at FROM mandates WHERE connector_reference = ${after.connector_reference}`);
    expect(row!.next_status_check_at).toBeNull();
  });

  it("0004: the processor's webhook reports the outcome", async () => {
    const mandate = await newMandate(autoApi, 'bacs', ENDINGS.timeout);
    // The webhook (after 200 ms) may even beat our own timeout (300 ms): then the answer is active already.
    expect(['pending', 'active']).toContain(mandate.status);
    expect(mandate.attempts).toEqual([expect.objectContaining({ outcome: 'timeout' })]);
    const settled = await eventually(
      () => autoApi.get(`/v1/mandates/${mandate.id}`),
      (res) => res.body.status !== 'pending',
    );
    expect(settled.body.status).toBe('active');
  });

  it('0004: the test helper cannot change the outcome the processor already holds', async () => {
    const mandate = await newMandate(api, 'ach', ENDINGS.timeout);
    // Pending on our side without a reference; the processor has it active already.
    const resolved = await api.post(`/v1/test-helpers/mandates/${mandate.id}/resolve`, { outcome: 'failed' });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.body.status).toBe('active');
  });

  it('0005: simulator_a fails with a processor error; the router falls back to simulator_b', async () => {
    const mandate = await newMandate(api, 'sepa_core', ENDINGS.processorError);
    expect(mandate).toMatchObject({ status: 'active', connector: 'simulator_b' });
    expect(mandate.attempts).toEqual([
      expect.objectContaining({ connector: 'simulator_a', outcome: 'error', error_code: 'processor_error' }),
      expect.objectContaining({ connector: 'simulator_b', outcome: 'succeeded' }),
    ]);
  });

  it('the bank revokes an active mandate: reported through the inbound webhook, mandate.revoked', async () => {
    const mandate = await newMandate(autoApi, 'bacs');
    const revoked = await autoApi.post(`/v1/test-helpers/mandates/${mandate.id}/resolve`, { outcome: 'revoked' });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({ status: 'revoked', revoked_by: 'bank', version: mandate.version + 1 });
    await eventually(
      () => query(testDb, sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${mandate.id}`),
      (rows) => Number(rows[0]!.n) >= 1,
    );
    expect(await eventTypesOf(autoApi, mandate.id)).toEqual(['mandate.created', 'mandate.active', 'mandate.revoked']);
  });

  it('the simulated bank alone revoking (no helper answer applied) still reaches us by webhook', async () => {
    const mandate = await newMandate(autoApi, 'sepa_core');
    const sim = automatic.payments.connectors.simulator!.processors.get('simulator_a')!;
    sim.mandates.settle(mandate.id, 'REVOKED_BY_PAYER');
    const after = await eventually(
      () => autoApi.get(`/v1/mandates/${mandate.id}`),
      (res) => res.body.status === 'revoked',
    );
    expect(after.body).toMatchObject({ status: 'revoked', revoked_by: 'bank' });
  });
});

describe('retrieve, list, revoke', () => {
  it('lists newest first, filtered by status and customer email, scoped to the mode', async () => {
    const email = `list-${Date.now()}@example.com`;
    const a = await newMandate(api, 'sepa_core', ENDINGS.success, { customer: { email, name: 'A' } });
    const b = await newMandate(api, 'sepa_core', ENDINGS.closed, { customer: { email, name: 'B' } });
    const c = await newMandate(api, 'ach', ENDINGS.success, { customer: { email, name: 'C' } });
    const mine = await api.get(`/v1/mandates?customer_email=${encodeURIComponent(email)}`);
    expect(mine.body.data.map((m: any) => m.id)).toEqual([c.id, b.id, a.id]);
    const active = await api.get(`/v1/mandates?customer_email=${encodeURIComponent(email)}&status=active&limit=1`);
    expect(active.body).toMatchObject({ object: 'list', has_more: true });
    expect(active.body.data.map((m: any) => m.id)).toEqual([c.id]);
    const next = await api.get(`/v1/mandates?customer_email=${encodeURIComponent(email)}&status=active&starting_after=${c.id}`);
    expect(next.body.data.map((m: any) => m.id)).toEqual([a.id]);
    await expectError(await api.get('/v1/mandates?status=paused'), 400, 'parameter_invalid', 'status');
    await expectError(await api.get('/v1/mandates?starting_after=pay_01jd8x3v0pe7wbz0m4k6f2n9qa'), 400, 'parameter_invalid', 'starting_after');
    expect((await liveApi.get(`/v1/mandates?customer_email=${encodeURIComponent(email)}`)).body.data).toEqual([]);
  });

  it('a malformed, unknown or other-mode id is 404 resource_missing', async () => {
    const mandate = await newMandate(api);
    await expectError(await api.get('/v1/mandates/mdt_nope'), 404, 'resource_missing');
    await expectError(await api.get('/v1/mandates/pay_01jd8x3v0pe7wbz0m4k6f2n9qa'), 404, 'resource_missing');
    const other = await liveApi.get(`/v1/mandates/${mandate.id}`);
    await expectError(other, 404, 'resource_missing');
    expect(other.body.error.message).toMatch(/test mode/);
  });

  it('the merchant revokes an active mandate: revoked_by merchant, mandate.revoked, the processor cancels it', async () => {
    const mandate = await newMandate(api, 'ach');
    const res = await api.post(`/v1/mandates/${mandate.id}/revoke`, undefined, { idempotencyKey: undefined });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'revoked', revoked_by: 'merchant', version: mandate.version + 1 });
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.active', 'mandate.revoked']);
    const sim = manual.payments.connectors.simulator!.processors.get('simulator_a')!;
    expect((await sim.mandates.get(mandate.id))!.state).toBe('CANCELLED');
  });

  it('a retried revoke with the same Idempotency-Key replays the answer', async () => {
    const mandate = await newMandate(api);
    const first = await api.post(`/v1/mandates/${mandate.id}/revoke`, undefined, { idempotencyKey: `revoke-${mandate.id}` });
    const again = await api.post(`/v1/mandates/${mandate.id}/revoke`, undefined, { idempotencyKey: `revoke-${mandate.id}` });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
  });
});

describe('the transition table', () => {
  it('allows exactly pending → active | failed, active → revoked | expired', () => {
    const allowed = new Set(['pending>active', 'pending>failed', 'active>revoked', 'active>expired']);
    for (const from of MANDATE_STATUSES) {
      for (const to of MANDATE_STATUSES) {
        expect(mandateStates.can(from, to), `${from} → ${to}`).toBe(allowed.has(`${from}>${to}`));
        if (allowed.has(`${from}>${to}`)) continue;
        let thrown: unknown;
        try {
          mandateStates.assert(from, to, 'move');
        } catch (err) {
          thrown = err;
        }
        expect(thrown).toBeInstanceOf(ApiError);
        expect((thrown as ApiError).code).toBe('invalid_state');
        expect((thrown as ApiError).message).toContain(`status is ${from}`);
        const sources = mandateStates.sourcesOf(to);
        expect((thrown as ApiError).message).toContain(`allowed from: ${sources.length ? sources.join(', ') : 'none'}`);
      }
    }
  });

  it('every invalid transition through the API is 422 invalid_state naming the current and allowed statuses', async () => {
    const pending = await newMandate(api, 'sepa_core', ENDINGS.pending);
    const failed = await newMandate(api, 'sepa_core', ENDINGS.closed);
    const active = await newMandate(api, 'sepa_core');
    const revoked = await newMandate(api, 'sepa_core');
    await api.post(`/v1/mandates/${revoked.id}/revoke`);
    const cases: [string, string, unknown, string, string][] = [
      [pending.id, 'revoke', undefined, 'pending', 'active'],
      [failed.id, 'revoke', undefined, 'failed', 'active'],
      [revoked.id, 'revoke', undefined, 'revoked', 'active'],
      [active.id, 'resolve', { outcome: 'active' }, 'active', 'pending'],
      [active.id, 'resolve', { outcome: 'failed' }, 'active', 'pending'],
      [pending.id, 'resolve', { outcome: 'revoked' }, 'pending', 'active'],
      [failed.id, 'resolve', { outcome: 'active' }, 'failed', 'pending'],
      [revoked.id, 'resolve', { outcome: 'revoked' }, 'revoked', 'active'],
    ];
    for (const [id, action, body, current, allowed] of cases) {
      const path = action === 'revoke' ? `/v1/mandates/${id}/revoke` : `/v1/test-helpers/mandates/${id}/resolve`;
      const res = await api.post(path, body);
      await expectError(res, 422, 'invalid_state');
      expect(res.body.error.message).toContain(`status is ${current}`);
      expect(res.body.error.message).toContain(`allowed from: ${allowed}`);
    }
    // Nothing moved.
    for (const [m, status] of [[pending, 'pending'], [failed, 'failed'], [active, 'active']] as const) {
      expect((await api.get(`/v1/mandates/${m.id}`)).body).toMatchObject({ status, version: m.version });
    }
  });

  it('the test helper is refused to live keys', async () => {
    const res = await liveApi.post('/v1/test-helpers/mandates/mdt_01jd8x3v0pe7wbz0m4k6f2n9qa/resolve', { outcome: 'active' });
    await expectError(res, 403, 'permission_denied');
  });
});

describe('idempotency and crash safety', () => {
  it('the same key and body replays the mandate; another body with it is 422; the bank saw one request', async () => {
    const key = `mdt-${Date.now()}`;
    const body = mandateBody('sepa_core');
    const [a, b] = await Promise.all([api.post('/v1/mandates', body, { idempotencyKey: key }), api.post('/v1/mandates', body, { idempotencyKey: key })]);
    // Concurrent: one creates, the other is told to wait (409) or, if later, replays.
    expect([a.status, b.status]).toContain(201);
    expect([201, 409]).toContain(a.status === 201 ? b.status : a.status);
    const created = a.status === 201 ? a : b;
    const replay = await api.post('/v1/mandates', body, { idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(created.text);
    await expectError(await api.post('/v1/mandates', { ...body, reference: 'other' }, { idempotencyKey: key }), 422, 'idempotency_key_reused');
    const sim = manual.payments.connectors.simulator!.processors.get('simulator_a')!;
    expect(sim.mandates.setupRequests.get(created.body.id)).toBe(1);
    const rows = await query(testDb, sql`SELECT count(*)::int AS n FROM mandates WHERE reference = ${body.reference}`);
    expect(rows[0]!.n).toBe(1);
  });

  it('a request that dies after the first phase is resumed by its retry: one mandate, registered once', async () => {
    const key = `crash-${Date.now()}`;
    const body = mandateBody('bacs');
    const original = manual.payments.crashPoint;
    manual.payments.crashPoint = (point) => {
      if (point === 'mandate_created') throw new Error('simulated crash after the first phase');
    };
    let crashed;
    try {
      crashed = await api.post('/v1/mandates', body, { idempotencyKey: key });
    } finally {
      manual.payments.crashPoint = original;
    }
    expect(crashed.status).toBe(500);
    const [row] = await query(testDb, sql`SELECT id, status, connector FROM mandates WHERE reference = ${body.reference}`);
    expect(row).toMatchObject({ status: 'pending', connector: null });

    const retried = await api.post('/v1/mandates', body, { idempotencyKey: key });
    expect(retried.status, retried.text).toBe(201);
    expect(retried.body).toMatchObject({ status: 'active', connector: 'simulator_a', version: 2 });
    expect(await eventTypesOf(api, retried.body.id)).toEqual(['mandate.created', 'mandate.active']);
    const rows = await query(testDb, sql`SELECT count(*)::int AS n FROM mandates WHERE reference = ${body.reference}`);
    expect(rows[0]!.n).toBe(1);
    const sim = manual.payments.connectors.simulator!.processors.get('simulator_a')!;
    expect(sim.mandates.setupRequests.get(retried.body.id)).toBe(1);
    // A later retry replays.
    const replay = await api.post('/v1/mandates', body, { idempotencyKey: key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(retried.text);
  });

  it('a retry after the processor registered the mandate but the answer was lost adopts it, without registering again', async () => {
    const key = `lost-${Date.now()}`;
    const body = mandateBody('ach');
    const original = manual.payments.crashPoint;
    // Register at the processor, then die before recording the answer.
    manual.payments.crashPoint = (point) => {
      if (point !== 'mandate_created') return;
      throw new Error('simulated crash');
    };
    try {
      expect((await api.post('/v1/mandates', body, { idempotencyKey: key })).status).toBe(500);
    } finally {
      manual.payments.crashPoint = original;
    }
    const [row] = await query(testDb, sql`SELECT id FROM mandates WHERE reference = ${body.reference}`);
    const { toPublicId } = await import('../src/kernel/ids.js');
    const id = toPublicId('mdt', String(row!.id));
    const sim = manual.payments.connectors.simulator!.processors.get('simulator_a')!;
    sim.mandates.create({
      merchant_reference: id,
      scheme: 'ACH',
      currency: 'USD',
      account: { country: 'US', number: body.bank_account.account_number, bank_code: '110000000' },
      payer: { email: 'payer@example.com', name: null },
    });
    const retried = await api.post('/v1/mandates', body, { idempotencyKey: key });
    expect(retried.body).toMatchObject({ id, status: 'active', connector: 'simulator_a' });
    expect(retried.body.attempts).toHaveLength(1);
    expect(sim.mandates.setupRequests.get(id)).toBe(1);
  });
});
