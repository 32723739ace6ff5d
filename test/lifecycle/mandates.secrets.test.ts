// Account numbers of mandates are secrets: sealed at rest (only last4 and a keyed fingerprint in
// clear), never returned, never logged — not on success, not in validation errors, not when a
// request fails with a 500, not in the idempotency records.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createEncryptor } from '../../src/kernel/encryption.js';
import { openBankAccountSecret } from '../../src/domain/bank-accounts/rules.js';
import { parseId } from '../../src/kernel/ids.js';
import { LogCapture } from '../support/helpers.js';
import { newOrder } from '../support/payments.js';
import { accountFor, ENDINGS, mandateBody, mandateMethod } from '../support/mandates.js';
import { useService } from '../support/fixtures.js';
import { everyStoredText } from '../support/stored-text.js';

const logs = new LogCapture();
const h = useService({ logs });
const { api } = h;

describe('bank account secrets', () => {
  it('are sealed at rest, never in any text column of any table, never returned, never logged', async () => {
    const sepa = accountFor('sepa_core', '0000');
    const gb = accountFor('bacs', '0000');
    const us = accountFor('ach', '0000');
    const secrets = [sepa.iban!, sepa.iban!.slice(4), gb.account_number!, us.account_number!];
    const created = [];
    for (const [scheme, ending] of [['sepa_core', ENDINGS.success], ['bacs', ENDINGS.success], ['ach', ENDINGS.success], ['sepa_core', ENDINGS.pending]] as const) {
      const res = await api.post('/v1/mandates', mandateBody(scheme, ending));
      expect(res.status, res.text).toBe(201);
      created.push(res.body);
      for (const secret of secrets) expect(res.text).not.toContain(secret);
    }
    // An IBAN written with spaces, and a refused one: still nowhere.
    const spaced = sepa.iban!.replace(/(.{4})/g, '$1 ').trim();
    expect((await api.post('/v1/mandates', mandateBody('sepa_core', ENDINGS.success, { bank_account: { ...sepa, iban: spaced } }))).status).toBe(201);
    const refused = await api.post('/v1/mandates', mandateBody('sepa_core', ENDINGS.success, { currency: 'USD' }));
    expect(refused.status).toBe(400);
    const badChecksum = await api.post('/v1/mandates', mandateBody('sepa_core', ENDINGS.success, { bank_account: { ...sepa, iban: `DE00${sepa.iban!.slice(4)}` } }));
    expect(badChecksum.status).toBe(400);
    for (const secret of secrets) expect(refused.text + badChecksum.text).not.toContain(secret);
    // A request failing with a 500 after the first phase: its error is logged, not the account.
    expect((await h.service.crashingAt('mandate_created', () => api.post('/v1/mandates', mandateBody('ach')))).status).toBe(500);
    // A debit on a mandate, and its lists.
    const order = await newOrder(api);
    const payment = await api.post('/v1/payments', { payment_order: order.id, payment_method: mandateMethod(created[0].id) });
    expect(payment.status, payment.text).toBe(201);
    for (const path of ['/v1/mandates?limit=100', '/v1/payments?limit=100', '/v1/events?limit=100', `/v1/mandates/${created[0].id}`]) {
      const res = await api.get(path);
      for (const secret of secrets) expect(res.text).not.toContain(secret);
    }

    const stored = await everyStoredText((q) => h.query(q));
    expect(stored).toContain(created[0].bank_account.fingerprint); // the scan does see the mandates
    for (const secret of secrets) expect(stored).not.toContain(secret);
    expect(logs.lines.length).toBeGreaterThan(5);
    expect(logs.text).toContain('simulated crash');
    for (const secret of secrets) expect(logs.text).not.toContain(secret);

    // The sealed column holds the account, bound to its mandate: it opens with the configured keys.
    const encryptor = createEncryptor(h.service.config.encryptionKeys);
    const [row] = await h.query(sql`SELECT id, bank_secret_encrypted FROM mandates WHERE id = ${parseId('mdt', created[0].id)!}`);
    expect(String(row!.bank_secret_encrypted)).toMatch(/^v1\./);
    expect(openBankAccountSecret(encryptor, String(row!.bank_secret_encrypted), String(row!.id))).toBe(sepa.iban);
    const [other] = await h.query(sql`SELECT id FROM mandates WHERE id <> ${row!.id} LIMIT 1`);
    expect(() => openBankAccountSecret(encryptor, String(row!.bank_secret_encrypted), String(other!.id))).toThrow();
  });

  it('the same account gives the same fingerprint, however written; another gives another', async () => {
    const sepa = accountFor('sepa_core', '0000');
    const a = (await api.post('/v1/mandates', mandateBody('sepa_core', ENDINGS.success))).body;
    const b = (await api.post('/v1/mandates', mandateBody('sepa_core', ENDINGS.success, { bank_account: { ...sepa, iban: sepa.iban!.toLowerCase() } }))).body;
    const c = (await api.post('/v1/mandates', mandateBody('sepa_core', ENDINGS.pending))).body;
    expect(b.bank_account.fingerprint).toBe(a.bank_account.fingerprint);
    expect(c.bank_account.fingerprint).not.toBe(a.bank_account.fingerprint);
    expect(a.bank_account.last4).toBe(sepa.iban!.slice(-4));
  });
});
