// `vault rotate` and `vault audit`: arguments checked before any database is opened; then run as
// the service's admin socket runs them (on its open database, with its configuration), and on
// PostgreSQL as a separate CLI process would, with VAULT_KEYS from the environment.
import { spawn } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { runCli } from '../../src/cli/commands.js';
import { createVault } from '../../src/vault/vault.js';
import { baseEnv, runCliHere, type CliResult } from '../support/cli.js';
import { useDatabase } from '../support/fixtures.js';
import { isPostgres, TEST_PREPARED_STATEMENTS } from '../support/helpers.js';
import { ROOT } from '../support/processes.js';
import { asSetting, CARD, kek, storedRecord, tenancy } from '../support/vault.js';

describe('vault commands: argument checks', () => {
  const env = { DATA_DIR: '/nonexistent/never-created' };
  it.each([
    [['vault'], 'vault needs a subcommand'],
    [['vault', 'rotate', '--batch-size', '0'], '--batch-size must be between 1 and 10000, got 0'],
    [['vault', 'rotate', '--max-batches', 'x'], '--max-batches must be a whole number, got "x"'],
    [['vault', 'audit', '--record', 'pay_01h455vb4pex5vsknk084sn02q'], '--record must be a vault record id'],
    [['vault', 'audit', '--limit', '100001'], '--limit must be between 1 and 10000'],
    [['vault', 'audit', 'extra'], 'unexpected argument "extra"'],
  ])('%j → %s', async (args, message) => {
    const res = await runCliHere(args as string[], env);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(message);
  });

  it('is listed in --help', async () => {
    const res = await runCliHere(['--help'], env);
    expect(res.stdout).toContain('vault rotate [--batch-size N] [--max-batches N]');
    expect(res.stdout).toContain('vault audit [--record VR_ID] [--limit N]');
  });
});

describe('vault commands on the service\'s database', () => {
  const h = useDatabase();
  const [k1, k2] = [kek('k1'), kek('k2')];

  /** As the admin socket runs a command: on the service's open database, with its configuration. */
  async function inService(args: string[], keys: string): Promise<CliResult> {
    let stdout = '';
    let stderr = '';
    const config = loadConfig({ VAULT_KEYS: keys });
    const code = await runCli(args, { env: {}, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), service: { database: h.database, config } });
    return { code, stdout, stderr, json: stdout ? JSON.parse(stdout) : undefined };
  }

  it('rotate moves data keys in batches, resumes where it stopped, then has nothing to do', async () => {
    const ctx = await tenancy(h);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await createVault([k1]).seal(h.db, ctx, CARD, 'payment_method'));

    const part = await inService(['vault', 'rotate', '--batch-size', '2', '--max-batches', '1'], asSetting([k2, k1]));
    expect(part.code, part.stderr).toBe(0);
    expect(part.json).toEqual({ active_key: 'k2', rewrapped: 2, batches: 1, remaining: 3, complete: false });
    expect(part.stderr).toContain('3 data keys are still under an older key: run npm run cli -- vault rotate again');

    const rest = await inService(['vault', 'rotate', '--batch-size', '2'], asSetting([k2, k1]));
    expect(rest.json).toEqual({ active_key: 'k2', rewrapped: 3, batches: 2, remaining: 0, complete: true });
    expect(rest.stderr).toContain('every data key is under k2');
    for (const id of ids) {
      expect((await storedRecord(h, id)).key_id).toBe('k2');
      expect(await createVault([k2]).unseal(h.db, ctx, id, { type: 'payment', id: 'pay_1' })).toMatchObject({ number: CARD.number });
    }
    const again = await inService(['vault', 'rotate'], asSetting([k2, k1]));
    expect(again.json).toMatchObject({ rewrapped: 0, complete: true });

    // The old key dropped too early: the error names the key to keep, exit code 1.
    await createVault([k1]).seal(h.db, ctx, CARD, 'payment');
    const early = await inService(['vault', 'rotate'], asSetting([k2]));
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/under key k1\) cannot be re-wrapped.*keep that key in VAULT_KEYS/);
    expect(early.stdout).toBe('');
  });

  it('audit lists unsealings newest first, by record and limited, without card data', async () => {
    const ctx = await tenancy(h);
    const vault = createVault([k2, k1]);
    const id = await vault.seal(h.db, ctx, CARD, 'payment_method');
    const other = await vault.seal(h.db, ctx, CARD, 'payment');
    await vault.unseal(h.db, ctx, id, { type: 'payment', id: 'pay_first' });
    await vault.unseal(h.db, ctx, other, { type: 'payment', id: 'pay_other' });
    await vault.unseal(h.db, ctx, id, { type: 'payment', id: 'pay_second' });

    const res = await inService(['vault', 'audit', '--record', id], asSetting([k2, k1]));
    expect(res.code, res.stderr).toBe(0);
    expect(res.json.map((r: any) => r.movement.id)).toEqual(['pay_second', 'pay_first']);
    expect(res.json[0]).toMatchObject({ record: id, livemode: false, movement: { type: 'payment' } });
    expect(Date.parse(res.json[0].unsealed_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(res.stdout).not.toContain(CARD.number);

    const latest = await inService(['vault', 'audit', '--limit', '1'], asSetting([k2, k1]));
    expect(latest.json).toHaveLength(1);
    expect(latest.json[0].movement.id).toBe('pay_second');
    const all = await inService(['vault', 'audit'], asSetting([k2, k1]));
    expect(all.json.map((r: any) => r.movement.id)).toEqual(expect.arrayContaining(['pay_first', 'pay_other', 'pay_second']));
  });

  const k3Shared = kek('k3');
  it.runIf(isPostgres)('run as a separate process on PostgreSQL, with VAULT_KEYS from its environment', async () => {
    const ctx = await tenancy(h);
    const k3 = k3Shared;
    const id = await createVault([k2]).seal(h.db, ctx, CARD, 'payment_method');
    const env = { DATABASE_URL: h.databaseUrl!, DATABASE_PREPARED_STATEMENTS: TEST_PREPARED_STATEMENTS, VAULT_KEYS: asSetting([k3, k2, k1]) };
    const res = await runCliHere(['vault', 'rotate'], env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json).toMatchObject({ active_key: 'k3', complete: true });
    expect((await storedRecord(h, id)).key_id).toBe('k3');
  });

  it.runIf(isPostgres)('killed (SIGKILL) between batches, then run again: every record under the new key', async () => {
    const ctx = await tenancy(h);
    const [k4, k5] = [kek('k4'), kek('k5')];
    const old = createVault([k4]);
    const ids = await h.db.transaction(async (tx) => {
      const sealed: string[] = [];
      for (let i = 0; i < 1500; i++) sealed.push(await old.seal(tx, ctx, CARD, 'payment'));
      return sealed;
    });
    // Every earlier record of this file's database is listed too, so nothing else blocks the run.
    const keys = asSetting([k5, k4, k3Shared, k2, k1]);
    const env = baseEnv({ DATABASE_URL: h.databaseUrl!, DATABASE_PREPARED_STATEMENTS: TEST_PREPARED_STATEMENTS, VAULT_KEYS: keys });
    const underNew = async () => Number((await h.query(sql`SELECT count(*)::int AS n FROM vault_records WHERE key_id = 'k5'`))[0]!.n);

    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'vault', 'rotate', '--batch-size', '1'], { cwd: ROOT, env, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await expect.poll(underNew, { timeout: 60_000, interval: 20 }).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await exited;
    const moved = await underNew();
    expect(moved).toBeLessThan(ids.length);

    const resumed = await runCliHere(['vault', 'rotate', '--batch-size', '500'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.json).toMatchObject({ active_key: 'k5', remaining: 0, complete: true });
    expect(resumed.json.rewrapped).toBeGreaterThanOrEqual(ids.length - moved);
    const onlyNew = createVault([k5]);
    for (const id of [ids[0]!, ids[749]!, ids.at(-1)!]) {
      expect(await onlyNew.unseal(h.db, ctx, id, { type: 'payment', id: 'pay_after_kill' })).toMatchObject({ number: CARD.number });
    }
    expect(await h.query(sql`SELECT 1 FROM vault_records WHERE wrapped_key IS NOT NULL AND key_id <> 'k5'`)).toEqual([]);
  }, 120_000);
});
