// The card vault (src/vault): seal and unseal for a movement, with an audit row per unsealing;
// tenancy; a wrong or missing key-encryption key refused; crypto-shredding by erase; rotation
// interrupted half-way and resumed. The stored rows never hold a card number or CVC in clear.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { parseId } from '../../src/kernel/ids.js';
import { createRuntime } from '../../src/runtime.js';
import { listUnsealings } from '../../src/vault/audit.js';
import { createVault, VaultError, type VaultErrorCode } from '../../src/vault/vault.js';
import { useDatabase } from '../support/fixtures.js';
import { asSetting, CARD, kek, storedRecord, tenancy } from '../support/vault.js';

const payment = (id: string) => ({ type: 'payment', id });

async function refused(work: Promise<unknown>, code: VaultErrorCode): Promise<VaultError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VaultError);
  expect((err as VaultError).code).toBe(code);
  return err as VaultError;
}

describe('seal, unseal, erase', () => {
  const h = useDatabase();
  const k1 = kek('k1');
  const vault = createVault([k1]);

  it('seals the number and expiry, never the CVC, and unseals them for a movement', async () => {
    const ctx = await tenancy(h);
    const id = await vault.seal(h.db, ctx, CARD, 'payment_method');
    expect(id).toMatch(/^vr_/);
    const card = await vault.unseal(h.db, ctx, id, payment('pay_01'));
    expect(card).toEqual({ number: CARD.number, expMonth: 12, expYear: 2034 });
    expect(card).not.toHaveProperty('cvc');

    const row = await storedRecord(h, id);
    expect(row.key_id).toBe('k1');
    expect(row.purpose).toBe('payment_method');
    expect(row.everything).not.toContain(CARD.number);
    expect(row.everything).not.toContain(CARD.number.slice(0, 12));
    // The data key is stored only wrapped: its plaintext never appears beside the card.
    expect(row.wrapped_key).toMatch(/^v1\.k1\./);
    expect(row.sealed_card).toMatch(/^v1\.dek\./);
  });

  it('writes an audit row for every unsealing, with its movement', async () => {
    const ctx = await tenancy(h);
    const id = await vault.seal(h.db, ctx, CARD, 'payment');
    await vault.unseal(h.db, ctx, id, payment('pay_a'));
    await h.db.transaction(async (tx) => {
      await vault.unseal(tx, ctx, id, { type: 'payment', id: 'pay_b1' });
      await vault.unseal(tx, ctx, id, { type: 'payment_method_verification', id: 'pm_b' });
    });
    const rows = await listUnsealings(h.db, { recordUuid: parseId('vr', id) });
    expect(rows.map((r) => r.movement)).toEqual([
      { type: 'payment_method_verification', id: 'pm_b' },
      { type: 'payment', id: 'pay_b1' },
      { type: 'payment', id: 'pay_a' },
    ]);
    expect(rows[0]).toMatchObject({ record: id, livemode: false });
    expect(rows[0]!.account).toMatch(/^acct_/);
    // A rolled-back unsealing leaves no row, and no card either: the caller's transaction owns both.
    await expect(
      h.db.transaction(async (tx) => {
        await vault.unseal(tx, ctx, id, payment('pay_rolled_back'));
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    expect(await listUnsealings(h.db, { recordUuid: parseId('vr', id) })).toHaveLength(3);
  });

  it('unseals only for a movement', async () => {
    const ctx = await tenancy(h);
    const id = await vault.seal(h.db, ctx, CARD, 'payment');
    for (const movement of [undefined, { type: '', id: 'pay_1' }, { type: 'payment', id: '' }, { type: 'Payment!', id: 'x' }]) {
      await refused(vault.unseal(h.db, ctx, id, movement as never), 'input_invalid');
    }
    expect(await listUnsealings(h.db, { recordUuid: parseId('vr', id) })).toEqual([]);
  });

  it('refuses what is not a card number and expiry', async () => {
    const ctx = await tenancy(h);
    for (const card of [{ ...CARD, number: '4242' }, { ...CARD, number: '4242-4242-4242-4242' }, { ...CARD, expMonth: 13 }, { ...CARD, expYear: 34 }]) {
      await refused(vault.seal(h.db, ctx, card, 'payment'), 'input_invalid');
    }
    await refused(vault.seal(h.db, ctx, CARD, 'other' as never), 'input_invalid');
  });

  it('keeps each record to its account and mode', async () => {
    const ctx = await tenancy(h);
    const other = await tenancy(h);
    const id = await vault.seal(h.db, ctx, CARD, 'payment_method');
    await refused(vault.unseal(h.db, other, id, payment('pay_x')), 'record_missing');
    await refused(vault.unseal(h.db, { ...ctx, livemode: true }, id, payment('pay_x')), 'record_missing');
    await refused(vault.erase(h.db, other, id), 'record_missing');
    await refused(vault.unseal(h.db, ctx, 'pay_01h455vb4pex5vsknk084sn02q', payment('pay_x')), 'record_missing');
    expect(await vault.unseal(h.db, ctx, id, payment('pay_x'))).toMatchObject({ number: CARD.number });
  });

  it('refuses a wrong key-encryption key: another key under the same id, or its id not configured', async () => {
    const ctx = await tenancy(h);
    const id = await vault.seal(h.db, ctx, CARD, 'payment_method');
    const err = await refused(createVault([kek('k1')]).unseal(h.db, ctx, id, payment('pay_x')), 'key_mismatch');
    expect(err.message).not.toContain(CARD.number);
    // The sealed card was read for pay_x and did not open: the append-only log keeps that attempt.
    expect((await listUnsealings(h.db, { recordUuid: parseId('vr', id) })).map((u) => u.movement)).toEqual([{ type: 'payment', id: 'pay_x' }]);
    const missing = await refused(createVault([kek('k2')]).unseal(h.db, ctx, id, payment('pay_y')), 'key_unavailable');
    expect(missing.message).toContain('VAULT_KEYS');
    // A key this process does not hold opens nothing, so nothing is read and no row is written.
    expect(await listUnsealings(h.db, { recordUuid: parseId('vr', id) })).toHaveLength(1);
  });

  it('refuses a wrapped key or a ciphertext moved onto another record', async () => {
    const ctx = await tenancy(h);
    const a = await vault.seal(h.db, ctx, CARD, 'payment_method');
    const b = await vault.seal(h.db, ctx, { ...CARD, number: '5555555555554444' }, 'payment_method');
    await h.query(sql`UPDATE vault_records SET wrapped_key = (SELECT wrapped_key FROM vault_records WHERE id = ${parseId('vr', a)!}) WHERE id = ${parseId('vr', b)!}`);
    await refused(vault.unseal(h.db, ctx, b, payment('pay_x')), 'key_mismatch');
  });

  it('erases a record by destroying its data key: unsealing it fails from then on', async () => {
    const ctx = await tenancy(h);
    const id = await vault.seal(h.db, ctx, CARD, 'payment');
    expect(await vault.erase(h.db, ctx, id)).toBe(true);
    await refused(vault.unseal(h.db, ctx, id, payment('pay_x')), 'record_erased');
    const row = await storedRecord(h, id);
    expect(row).toMatchObject({ key_id: null, wrapped_key: null, sealed_card: null });
    expect(row.erased_at).not.toBeNull();
    expect(await vault.erase(h.db, ctx, id)).toBe(false);
    await refused(vault.erase(h.db, ctx, 'vr_01h455vb4pex5vsknk084sn02q'), 'record_missing');
  });

  it('is the runtime\'s vault: wraps with the first VAULT_KEYS key, opens with every one; the development key otherwise', async () => {
    const ctx = await tenancy(h);
    const earlier = await vault.seal(h.db, ctx, CARD, 'payment_method');
    const rt = createRuntime(loadConfig({ VAULT_KEYS: asSetting([kek('k9'), k1]) }));
    try {
      expect(rt.vault.activeKeyId).toBe('k9');
      const id = await rt.vault.seal(h.db, ctx, CARD, 'payment_method');
      expect((await storedRecord(h, id)).key_id).toBe('k9');
      expect(await rt.vault.unseal(h.db, ctx, earlier, payment('pay_rt'))).toMatchObject({ number: CARD.number });
    } finally {
      rt.close();
    }
    const dev = createRuntime(loadConfig({}));
    expect(dev.vault.activeKeyId).toBe('dev-vault');
    dev.close();
  });

  it('holds no card number or CVC in clear anywhere in its tables', async () => {
    const dump = await h.query(sql`SELECT (SELECT coalesce(string_agg(row_to_json(v)::text, ''), '') FROM vault_records v) || (SELECT coalesce(string_agg(row_to_json(u)::text, ''), '') FROM vault_unsealings u) AS all_rows`);
    const text = String(dump[0]!.all_rows);
    expect(text.length).toBeGreaterThan(100);
    expect(text).not.toContain(CARD.number);
    expect(text).not.toContain('5555555555554444');
    expect(text).not.toContain(`"${CARD.cvc}"`);
  });
});

describe('rotation', () => {
  // Its own database: rotation covers every record, whichever account sealed it.
  const h = useDatabase();
  const [k1, k2] = [kek('k1'), kek('k2')];

  it('interrupted half-way then resumed: every record under the new key, its card data untouched', async () => {
    const ctx = await tenancy(h);
    const live = { ...ctx, livemode: true };
    const old = createVault([k1]);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await old.seal(h.db, i % 2 ? live : ctx, CARD, 'payment_method'));
    const erased = await old.seal(h.db, ctx, CARD, 'payment');
    await old.erase(h.db, ctx, erased);
    const before = new Map(await Promise.all(ids.map(async (id) => [id, (await storedRecord(h, id)).sealed_card] as const)));
    const ctxOf = (id: string) => (ids.indexOf(id) % 2 ? live : ctx);

    const rotating = createVault([k2, k1]);
    const first = await rotating.rotate(h.db, { batchSize: 3, maxBatches: 1 });
    expect(first).toEqual({ active_key: 'k2', rewrapped: 3, batches: 1, remaining: 4, complete: false });

    // Half-way: each record opens under the keys that now wrap it, and through the rotating set.
    const onlyNew = createVault([k2]);
    const onlyOld = createVault([k1]);
    const keyOf = async (id: string) => (await storedRecord(h, id)).key_id;
    for (const id of ids) {
      expect(await rotating.unseal(h.db, ctxOf(id), id, payment('pay_mid'))).toMatchObject({ number: CARD.number });
      const under = await keyOf(id);
      await expect(onlyNew.unseal(h.db, ctxOf(id), id, payment('pay_mid')).then(() => 'k2', (e: VaultError) => e.code)).resolves.toBe(under === 'k2' ? 'k2' : 'key_unavailable');
      await expect(onlyOld.unseal(h.db, ctxOf(id), id, payment('pay_mid')).then(() => 'k1', (e: VaultError) => e.code)).resolves.toBe(under === 'k1' ? 'k1' : 'key_unavailable');
    }

    const rest = await rotating.rotate(h.db, { batchSize: 3 });
    expect(rest).toEqual({ active_key: 'k2', rewrapped: 4, batches: 2, remaining: 0, complete: true });
    for (const id of ids) {
      const row = await storedRecord(h, id);
      expect(row.key_id).toBe('k2');
      expect(row.rewrapped_at).not.toBeNull();
      expect(row.sealed_card).toBe(before.get(id));
      // The old key may go: the new one alone opens everything, the old one alone nothing.
      expect(await onlyNew.unseal(h.db, ctxOf(id), id, payment('pay_after'))).toMatchObject({ number: CARD.number, expYear: 2034 });
      await refused(onlyOld.unseal(h.db, ctxOf(id), id, payment('pay_after')), 'key_unavailable');
    }
    // Idempotent: nothing left to move, erased records included.
    expect(await rotating.rotate(h.db)).toEqual({ active_key: 'k2', rewrapped: 0, batches: 0, remaining: 0, complete: true });
    expect(await storedRecord(h, erased)).toMatchObject({ key_id: null, wrapped_key: null });
  });

  it('stops with a clear error naming the record when its key is no longer configured', async () => {
    const ctx = await tenancy(h);
    const id = await createVault([kek('gone')]).seal(h.db, ctx, CARD, 'payment_method');
    const err = await refused(createVault([kek('k3'), k2]).rotate(h.db, { batchSize: 100 }), 'key_unavailable');
    expect(err.message).toContain(id);
    expect(err.message).toContain('keep that key in VAULT_KEYS');
  });
});
