// What a starting process prints (src/main.ts): only the embedded development start creates a
// first account and prints its key with a curl line; a start on PostgreSQL or with
// NODE_ENV=production prints no secret and creates nothing; a worker-only process says it runs and
// prints no curl line for a port it does not serve. The embedded starts run in the pglite project
// and the PostgreSQL ones in the postgres project (each spawns its own processes, once).
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, isPostgres, type TestDatabase } from '../support/helpers.js';
import { ROOT, startChild, stopChild, type Child } from '../support/processes.js';
import { createsFirstAccount } from '../../src/service.js';

const KEY = /sk_(test|live)_[0-9A-Za-z]+/;
// A fresh embedded database takes a while to create on a busy machine.
const EMBEDDED_START_MS = 150_000;
let child: Child | undefined;
const dirs: string[] = [];

afterEach(async () => {
  await stopChild(child);
  child = undefined;
});
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function embedded(env: Record<string, string>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'po-startup-'));
  dirs.push(dir);
  return { DATABASE_URL: '', DATA_DIR: dir, ...env };
}

it('only a development start on the embedded database, serving the API, creates a first account', () => {
  const api = { roles: ['api' as const, 'worker' as const] };
  expect(createsFirstAccount(api, { kind: 'pglite' }, {})).toBe(true);
  expect(createsFirstAccount(api, { kind: 'pglite' }, { NODE_ENV: 'production' })).toBe(false);
  expect(createsFirstAccount(api, { kind: 'postgres' }, {})).toBe(false);
  expect(createsFirstAccount({ roles: ['worker'] }, { kind: 'pglite' }, {})).toBe(false);
});

describe.skipIf(isPostgres)('start-up output on the embedded database', () => {
  it(
    'a development start creates an account and prints its test key with a curl line to try',
    async () => {
      child = await startChild(embedded({ ROLES: 'api,worker' }), EMBEDDED_START_MS);
      expect(child.output()).toMatch(KEY);
      expect(child.output()).toContain(`Try: curl -s ${child.url}/v1/payment-orders`);
      await expect.poll(() => child!.output()).toContain('Worker running (embedded database');
    },
    EMBEDDED_START_MS + 30_000,
  );

  it(
    'a worker-only process prints no key and no curl line: it serves no port',
    async () => {
      child = await startChild(embedded({ ROLES: 'worker' }), EMBEDDED_START_MS);
      const output = child.output();
      expect(output).toContain('Worker running (embedded database');
      expect(output).not.toMatch(KEY);
      expect(output).not.toContain('curl');
      expect(output).not.toContain('Listening on');
    },
    EMBEDDED_START_MS + 30_000,
  );
});

const PRODUCTION_SECRETS = {
  NODE_ENV: 'production',
  VAULT_KEYS: `main:${crypto.randomBytes(32).toString('base64')}`,
  CARD_FINGERPRINT_KEY: crypto.randomBytes(32).toString('base64'),
};

describe.skipIf(!isPostgres)('start-up output on PostgreSQL', () => {
  it('a production start without VAULT_KEYS or CARD_FINGERPRINT_KEY refuses to start, saying which', () => {
    const start = (env: Record<string, string>) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: 'postgres://127.0.0.1:1/never', PORT: '0', METRICS_PORT: '0', ...env }, encoding: 'utf8', timeout: 60_000 });
    const { VAULT_KEYS, CARD_FINGERPRINT_KEY, NODE_ENV } = PRODUCTION_SECRETS;
    const noVault = start({ NODE_ENV, CARD_FINGERPRINT_KEY, VAULT_KEYS: '' });
    expect(noVault.status).toBe(2);
    expect(noVault.stderr).toMatch(/^error: VAULT_KEYS must be set when NODE_ENV=production/);
    const noFingerprint = start({ NODE_ENV, VAULT_KEYS, CARD_FINGERPRINT_KEY: '' });
    expect(noFingerprint.status).toBe(2);
    expect(noFingerprint.stderr).toMatch(/^error: CARD_FINGERPRINT_KEY must be set when NODE_ENV=production/);
  }, 120_000);

  let testDb: TestDatabase;
  afterAll(async () => testDb?.drop());

  it('never creates an account nor prints a key, in production or not, api or worker', async () => {
    testDb = await createTestDatabase();
    const starts: Record<string, string>[] = [{ ROLES: 'api,worker', ...PRODUCTION_SECRETS }, { ROLES: 'api' }, { ROLES: 'worker' }];
    for (const env of starts) {
      child = await startChild({ DATABASE_URL: testDb.url!, ...env });
      expect(child.output()).toContain(env.ROLES === 'worker' ? 'Worker running (PostgreSQL)' : 'Listening on');
      // Outside production the vault runs on its public development key, and says so (a worker's
      // log line may follow its "Worker running").
      if (!env.NODE_ENV) await expect.poll(() => child!.output()).toContain('VAULT_KEYS is not set: the card vault wraps its data keys with the built-in development key');
      await stopChild(child);
      if (env.NODE_ENV) expect(child.output()).not.toContain('VAULT_KEYS is not set');
      expect(child.output()).not.toMatch(KEY);
      expect(child.output()).not.toContain('curl');
    }
    const accounts = await testDb.database.db.execute(sql`SELECT count(*)::int AS n FROM accounts`);
    expect((accounts as unknown as { rows: { n: number }[] }).rows[0]!.n).toBe(0);
  }, 120_000);
});
