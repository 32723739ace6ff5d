// Beneficiaries over HTTP: every bank account rule (valid and invalid samples per country format,
// the bad field named), create/retrieve/list/update/delete, fingerprints and duplicates, and the
// secret part kept out of answers, events, the database (encrypted at rest) and the logs.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { LogCapture } from '../support/helpers.js';
import { bankAccount, newBeneficiary } from '../support/payouts.js';
import { ibanWithCheckDigits } from '../../src/domain/bank-accounts/rules.js';
import { createEncryptor } from '../../src/kernel/encryption.js';
import { useService } from '../support/fixtures.js';

const logs = new LogCapture();
const h = useService({ logs });
const { api } = h;
/** Every IBAN and account number sent, valid or not: none may be stored or logged in clear. */
const secretsSent = new Set<string>();

const create = (bank_account: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  for (const field of ['iban', 'account_number'] as const) {
    const value = bank_account[field];
    if (typeof value === 'string' && value.replace(/\s/g, '').length >= 8) secretsSent.add(value.replace(/\s/g, '').toUpperCase());
  }
  return api.post('/v1/beneficiaries', { name: 'Grace Hopper', type: 'individual', bank_account, ...extra });
};

describe('bank account validation', () => {
  it.each([
    ['DE IBAN', { country: 'DE', currency: 'EUR', iban: 'DE89 3704 0044 0532 0130 00' }, '3000'],
    ['DE IBAN with BIC, lower case', { country: 'DE', currency: 'EUR', iban: 'de89370400440532013000', bic: 'cobadeffxxx' }, '3000'],
    ['FR IBAN', { country: 'FR', currency: 'EUR', iban: 'FR1420041010050500013M02606' }, '2606'],
    ['GB IBAN', { country: 'GB', currency: 'GBP', iban: 'GB29NWBK60161331926819' }, '6819'],
    ['GB sort code + account', { country: 'GB', currency: 'GBP', sort_code: '20-00-00', account_number: '55779911' }, '9911'],
    ['US routing + account', { country: 'US', currency: 'USD', routing_number: '110000000', account_number: '000123456789' }, '6789'],
    ['IN IFSC + account', { country: 'IN', currency: 'INR', ifsc: 'HDFC0000001', account_number: '123456789012' }, '9012'],
    ['EUR account in a non-euro SEPA country', { country: 'PL', currency: 'EUR', iban: 'PL61109010140000071219812874' }, '2874'],
  ])('accepts a %s', async (_name, account, last4) => {
    const res = await create(account);
    expect(res.status, res.text).toBe(201);
    expect(res.body.bank_account).toMatchObject({ country: account.country, currency: account.currency, last4 });
    expect(res.body.bank_account.fingerprint).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const given = account as { iban?: string; account_number?: string };
    expect(JSON.stringify(res.body)).not.toContain(String(given.iban ?? given.account_number).replace(/\s/g, '').slice(0, -4));
  });

  it.each([
    ['bad IBAN check digits', { country: 'DE', currency: 'EUR', iban: 'DE88370400440532013000' }, 'parameter_invalid', 'bank_account.iban'],
    ['IBAN of the wrong length', { country: 'DE', currency: 'EUR', iban: 'DE8937040044053201300' }, 'parameter_invalid', 'bank_account.iban'],
    ['IBAN of another country', { country: 'FR', currency: 'EUR', iban: 'DE89370400440532013000' }, 'parameter_invalid', 'bank_account.iban'],
    ['malformed BIC', { country: 'DE', currency: 'EUR', iban: 'DE89370400440532013000', bic: 'CO1ADEFF' }, 'parameter_invalid', 'bank_account.bic'],
    ['BIC of another country', { country: 'DE', currency: 'EUR', iban: 'DE89370400440532013000', bic: 'BNPAFRPPXXX' }, 'parameter_invalid', 'bank_account.bic'],
    ['IBAN missing', { country: 'DE', currency: 'EUR' }, 'parameter_missing', 'bank_account.iban'],
    ['account number for an IBAN country', { country: 'DE', currency: 'EUR', account_number: '12345678' }, 'parameter_invalid', 'bank_account.account_number'],
    ['GB sort code of 5 digits', { country: 'GB', currency: 'GBP', sort_code: '20000', account_number: '55779911' }, 'parameter_invalid', 'bank_account.sort_code'],
    ['GB account of 7 digits', { country: 'GB', currency: 'GBP', sort_code: '200000', account_number: '5577991' }, 'parameter_invalid', 'bank_account.account_number'],
    ['GB account without sort code', { country: 'GB', currency: 'GBP', account_number: '55779911' }, 'parameter_missing', 'bank_account.sort_code'],
    ['US routing checksum', { country: 'US', currency: 'USD', routing_number: '110000001', account_number: '000123456789' }, 'parameter_invalid', 'bank_account.routing_number'],
    ['US routing of 8 digits', { country: 'US', currency: 'USD', routing_number: '11000000', account_number: '000123456789' }, 'parameter_invalid', 'bank_account.routing_number'],
    ['US account of 18 digits', { country: 'US', currency: 'USD', routing_number: '110000000', account_number: '123456789012345678' }, 'parameter_invalid', 'bank_account.account_number'],
    ['US without routing number', { country: 'US', currency: 'USD', account_number: '000123456789' }, 'parameter_missing', 'bank_account.routing_number'],
    ['IN IFSC without the zero', { country: 'IN', currency: 'INR', ifsc: 'HDFC1000001', account_number: '123456789012' }, 'parameter_invalid', 'bank_account.ifsc'],
    ['IN account of 8 digits', { country: 'IN', currency: 'INR', ifsc: 'HDFC0000001', account_number: '12345678' }, 'parameter_invalid', 'bank_account.account_number'],
    ['currency that does not fit the country', { country: 'US', currency: 'EUR', routing_number: '110000000', account_number: '000123456789' }, 'parameter_invalid', 'bank_account.currency'],
    ['unsupported country', { country: 'ZZ', currency: 'USD', account_number: '000123456789' }, 'parameter_invalid', 'bank_account.country'],
    ['lower-case country', { country: 'de', currency: 'EUR', iban: 'DE89370400440532013000' }, 'parameter_invalid', 'bank_account.country'],
    ['unknown field', { country: 'DE', currency: 'EUR', iban: 'DE89370400440532013000', swift: 'X' }, 'parameter_unknown', 'bank_account.swift'],
    ['missing currency', { country: 'DE', iban: 'DE89370400440532013000' }, 'parameter_missing', 'bank_account.currency'],
  ])('refuses %s, naming the field', async (_name, account, code, param) => {
    const res = await create(account);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'validation', code, param });
  });

  it('checks the beneficiary fields too', async () => {
    const good = bankAccount();
    expect((await create(good, { type: 'robot' })).body.error).toMatchObject({ code: 'parameter_invalid', param: 'type' });
    expect((await create(good, { email: 'not-an-email' })).body.error).toMatchObject({ code: 'parameter_invalid', param: 'email' });
    expect((await create(good, { name: '' })).body.error).toMatchObject({ code: 'parameter_invalid', param: 'name' });
    const missing = await api.post('/v1/beneficiaries', { name: 'X', type: 'business' });
    expect(missing.body.error).toMatchObject({ code: 'parameter_missing', param: 'bank_account' });
  });
});

describe('beneficiary lifecycle', () => {
  it('creates, retrieves, lists, updates and disables (kept), with events', async () => {
    const created = await newBeneficiary(api, '0000', 'us', { email: 'ada@example.com', metadata: { vendor: '42' }, type: 'business' });
    expect(created).toMatchObject({
      object: 'beneficiary',
      livemode: false,
      status: 'active',
      type: 'business',
      email: 'ada@example.com',
      bank_account: { country: 'US', currency: 'USD', last4: '0000', routing_number: '110000000', bic: null, sort_code: null, ifsc: null },
      metadata: { vendor: '42' },
      version: 1,
    });
    expect(created.id).toMatch(/^ben_[0-9a-z]{26}$/);
    expect((await api.get(`/v1/beneficiaries/${created.id}`)).body).toEqual(created);

    const patched = await api.request('PATCH', `/v1/beneficiaries/${created.id}`, { body: { name: 'Ada King', email: null, metadata: { vendor: '43' } } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Ada King', email: null, metadata: { vendor: '43' }, version: 2, bank_account: created.bank_account });
    const refused = await api.request('PATCH', `/v1/beneficiaries/${created.id}`, { body: { bank_account: bankAccount() } });
    expect(refused.body.error).toMatchObject({ code: 'parameter_unknown', param: 'bank_account' });

    const deleted = await api.request('DELETE', `/v1/beneficiaries/${created.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toMatchObject({ id: created.id, status: 'disabled', version: 3 });
    const again = await api.request('DELETE', `/v1/beneficiaries/${created.id}`);
    expect(again.body).toMatchObject({ status: 'disabled', version: 3 });
    expect((await api.get(`/v1/beneficiaries/${created.id}`)).body.status).toBe('disabled');

    const list = await api.get('/v1/beneficiaries?status=disabled&limit=100');
    expect(list.body.data.map((b: { id: string }) => b.id)).toContain(created.id);
    expect(list.body.data.every((b: { status: string }) => b.status === 'disabled')).toBe(true);

    const events = await api.get('/v1/events?type=beneficiary.*&limit=100');
    const mine = events.body.data.filter((e: { data: { object: { id: string } } }) => e.data.object.id === created.id).map((e: { type: string }) => e.type);
    expect(mine.reverse()).toEqual(['beneficiary.created', 'beneficiary.updated', 'beneficiary.disabled']);

    expect((await api.get('/v1/beneficiaries/ben_01h455vb4pex5vsknk084sn02q')).status).toBe(404);
    expect((await api.get('/v1/beneficiaries/po_01h455vb4pex5vsknk084sn02q')).body.error.code).toBe('resource_missing');
  });

  it('gives the same account the same fingerprint however it is written, and finds duplicates by it', async () => {
    const spaced = await create({ country: 'DE', currency: 'EUR', iban: 'de89 3704 0044 0532 0130 00' });
    const compact = await create({ country: 'DE', currency: 'EUR', iban: 'DE89370400440532013000' });
    expect(spaced.status).toBe(201);
    expect(compact.status).toBe(201); // duplicates are allowed, as Stripe allows them
    expect(spaced.body.bank_account.fingerprint).toBe(compact.body.bank_account.fingerprint);
    // A GB account by IBAN and by sort code + account number is one account.
    const gbIban = await create({ country: 'GB', currency: 'GBP', iban: ibanWithCheckDigits('GB', 'NWBK60161331926819') });
    const gbLocal = await create({ country: 'GB', currency: 'GBP', sort_code: '601613', account_number: '31926819' });
    expect(gbIban.body.bank_account.fingerprint).toBe(gbLocal.body.bank_account.fingerprint);
    const other = await create({ country: 'FR', currency: 'EUR', iban: 'FR1420041010050500013M02606' });
    expect(other.body.bank_account.fingerprint).not.toBe(spaced.body.bank_account.fingerprint);

    const found = await api.get(`/v1/beneficiaries?fingerprint=${encodeURIComponent(spaced.body.bank_account.fingerprint)}&limit=100`);
    expect(found.body.data.map((b: { id: string }) => b.id).sort()).toEqual(expect.arrayContaining([spaced.body.id, compact.body.id]));
    expect(found.body.data.every((b: { bank_account: { fingerprint: string } }) => b.bank_account.fingerprint === spaced.body.bank_account.fingerprint)).toBe(true);

    // Keyed per merchant account: another merchant's beneficiary of the same account has another fingerprint.
    const otherMerchant = (await h.newTenant()).api;
    const theirs = await otherMerchant.post('/v1/beneficiaries', { name: 'G', type: 'individual', bank_account: { country: 'DE', currency: 'EUR', iban: 'DE89370400440532013000' } });
    expect(theirs.body.bank_account.fingerprint).not.toBe(spaced.body.bank_account.fingerprint);
  });

  it('stores the account number sealed with the configured key, bound to its beneficiary', async () => {
    const created = await newBeneficiary(api, '0000', 'in');
    const [row] = await h.query(sql`SELECT bank_secret_encrypted FROM beneficiaries WHERE bank_last4 = '0000' AND bank_country = 'IN'`);
    const sealed = String(row!.bank_secret_encrypted);
    expect(sealed).toMatch(/^v1\.dev\./); // key id inside, so keys can rotate
    const encryptor = createEncryptor(h.service.config.encryptionKeys);
    expect(encryptor.decrypt(sealed, `bank_account:${created.id}`)).toBe(bankAccount('0000', 'in').account_number);
    expect(() => encryptor.decrypt(sealed, 'bank_account:ben_01h455vb4pex5vsknk084sn02q')).toThrow();
  });

  it('replays a create with the same Idempotency-Key and refuses another body', async () => {
    const body = { name: 'Replay', type: 'individual', bank_account: bankAccount('0000', 'gb') };
    const first = await api.post('/v1/beneficiaries', body, { idempotencyKey: 'ben-replay-1' });
    const second = await api.post('/v1/beneficiaries', body, { idempotencyKey: 'ben-replay-1' });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    const other = await api.post('/v1/beneficiaries', { ...body, bank_account: bankAccount('0002', 'gb') }, { idempotencyKey: 'ben-replay-1' });
    expect(other.body.error.code).toBe('idempotency_key_reused');
  });
});

describe('the secret part never leaves in clear', () => {
  it('is absent from every text column of every table and from the logs', async () => {
    expect(secretsSent.size).toBeGreaterThan(10);
    await expect.poll(() => logs.lines.length).toBeGreaterThan(0);
    // A dump of the database: every row of every table, as text.
    const tables = await h.query(sql`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`);
    let dump = '';
    for (const { tablename } of tables) {
      const rows = await h.query(sql`SELECT to_jsonb(t)::text AS row FROM ${sql.identifier(String(tablename))} t`);
      dump += rows.map((r) => String(r.row)).join('\n');
    }
    expect(dump).toContain('beneficiary.created');
    const text = logs.text.toUpperCase();
    for (const secret of secretsSent) {
      expect(dump.toUpperCase()).not.toContain(secret);
      expect(text).not.toContain(secret);
    }
  });
});
