// Mandates: validation of each scheme, retrieve and list, the merchant's revocation, and the
// transition table (directly and through the API).
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/kernel/errors.js';
import { mandateStates, MANDATE_STATUSES } from '../../src/domain/mandates/state.js';
import { eventTypesOf } from '../support/payments.js';
import { accountFor, ENDINGS, mandateBody, newMandate } from '../support/mandates.js';
import { expectError } from '../support/helpers.js';
import { useService } from '../support/fixtures.js';

const h = useService({ settings: { statusCheckIntervalMs: 100 } });
const { api, live: liveApi } = h;

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
    expectError(res, 400, code, { param });
    expect(res.body.error.type).toBe('validation');
  });

  it('needs an Idempotency-Key (it calls the scheme)', async () => {
    expectError(await api.post('/v1/mandates', mandateBody(), { idempotencyKey: undefined }), 400, 'idempotency_key_missing');
  });

  it('live mode has no connector taking mandates yet: routing_no_match, nothing created', async () => {
    const res = await liveApi.post('/v1/mandates', mandateBody());
    expectError(res, 422, 'routing_no_match');
    expect((await liveApi.get('/v1/mandates')).body.data).toEqual([]);
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
    expectError(await api.get('/v1/mandates?status=paused'), 400, 'parameter_invalid', { param: 'status' });
    expectError(await api.get('/v1/mandates?starting_after=pay_01jd8x3v0pe7wbz0m4k6f2n9qa'), 400, 'parameter_invalid', { param: 'starting_after' });
    expect((await liveApi.get(`/v1/mandates?customer_email=${encodeURIComponent(email)}`)).body.data).toEqual([]);
  });

  it('a malformed, unknown or other-mode id is 404 resource_missing', async () => {
    const mandate = await newMandate(api);
    expectError(await api.get('/v1/mandates/mdt_nope'), 404, 'resource_missing');
    expectError(await api.get('/v1/mandates/pay_01jd8x3v0pe7wbz0m4k6f2n9qa'), 404, 'resource_missing');
    const other = await liveApi.get(`/v1/mandates/${mandate.id}`);
    expectError(other, 404, 'resource_missing');
    expect(other.body.error.message).toMatch(/test mode/);
  });

  it('the merchant revokes an active mandate: revoked_by merchant, mandate.revoked, the processor cancels it', async () => {
    const mandate = await newMandate(api, 'ach');
    const res = await api.post(`/v1/mandates/${mandate.id}/revoke`, undefined, { idempotencyKey: undefined });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'revoked', revoked_by: 'merchant', version: mandate.version + 1 });
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.active', 'mandate.revoked']);
    const sim = h.service.simulator();
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
      expectError(res, 422, 'invalid_state');
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
    expectError(res, 403, 'permission_denied');
  });
});
