// The operator CLI, run as a real child process (`node --import tsx src/cli/main.ts ...`) against
// this file's own database, with the keys it issues checked against a real running service.
// The database-backed part needs PostgreSQL: an in-memory PGlite cannot be shared with a child
// process. Argument checking never opens a database and runs everywhere; so does a run against an
// embedded database in a temporary DATA_DIR.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli as runCliInProcess } from '../src/cli/commands.js';
import { activateLive, createAccount, getAccount, issueKey, listKeys } from '../src/domain/accounts/service.js';
import { client, createTestDatabase, isPostgres, startTestService, type TestDatabase, type TestService } from './helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, when it is JSON. */
  json: any;
}

/** Environment of the child: the parent's, minus anything that would pick another database. */
function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  return { ...env, ...extra };
}

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: unknown;
      try {
        json = stdout ? JSON.parse(stdout) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'po-cli-'));
}

describe('cli: arguments are checked before any database is opened', () => {
  // DATA_DIR points at a directory that does not exist yet: opening the embedded database would
  // create it, so its absence afterwards shows that nothing was opened.
  let dataDir: string;
  const cli = (...args: string[]) => runCli(args, baseEnv({ DATA_DIR: dataDir }));
  /** The same command line run in this process (fast), for the many argument checks. */
  const inProcess = async (args: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCliInProcess(args, {
      env: baseEnv({ DATA_DIR: dataDir }),
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
    });
    return { code, stdout, stderr };
  };
  beforeAll(() => {
    dataDir = path.join(tempDir(), 'data');
  });
  afterAll(() => {
    expect(fs.existsSync(dataDir)).toBe(false);
  });

  it('--help lists every command and exits 0', async () => {
    const res = await cli('--help');
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    for (const command of [
      'migrate',
      'accounts create --name NAME',
      'accounts list',
      'accounts show ACCT_ID',
      'accounts activate-live ACCT_ID',
      'accounts suspend ACCT_ID',
      'accounts reinstate ACCT_ID',
      'accounts set-rate-limit ACCT_ID',
      'keys create ACCT_ID --mode test|live',
      'keys list ACCT_ID',
      'keys revoke KEY_ID',
      'keys roll KEY_ID',
    ]) {
      expect(res.stdout).toContain(command);
    }
    const one = await inProcess(['keys', 'roll', '--help']);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('--expires-in SECONDS');
    expect(one.stdout).toContain('24 hours');
  });

  it('a usage error exits 2 with "error: ..." and the usage on stderr, nothing on stdout', async () => {
    const unknown = await cli('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^error: unknown command "frobnicate"\nUsage: npm run cli -- <command>/);
    const badMode = await cli('keys', 'create', 'acct_01h455vb4pex5vsknk084sn02q', '--mode', 'prod');
    expect(badMode.code).toBe(2);
    expect(badMode.stdout).toBe('');
    expect(badMode.stderr).toBe(
      'error: --mode must be test or live, got "prod"\n' +
        'usage: npm run cli -- keys create ACCT_ID --mode test|live [--name NAME] [--expires-at RFC3339]\n',
    );
  });

  it.each([
    [[], 'no command given'],
    [['accounts'], 'accounts needs a subcommand'],
    [['accounts', 'delete', 'acct_01h455vb4pex5vsknk084sn02q'], 'unknown accounts subcommand "delete"'],
    [['accounts', 'create'], '--name is required'],
    [['accounts', 'create', '--name', '   '], '--name must not be empty'],
    [['accounts', 'create', '--name'], "Option '--name <value>' argument missing"],
    [['accounts', 'create', '--name', 'A', '--name', 'B'], '--name is given more than once'],
    [['accounts', 'list', '--verbose'], "Unknown option '--verbose'"],
    [['accounts', 'list', 'extra'], 'unexpected argument "extra"'],
    [['accounts', 'show'], 'missing ACCT_ID'],
    [['accounts', 'show', 'key_01h455vb4pex5vsknk084sn02q'], 'ACCT_ID must be an account id'],
    [['accounts', 'show', 'acct_nope'], 'ACCT_ID must be an account id'],
    [['accounts', 'set-rate-limit', 'acct_01h455vb4pex5vsknk084sn02q', '--per-second', '5'], '--per-second and --burst are both required'],
    [['accounts', 'set-rate-limit', 'acct_01h455vb4pex5vsknk084sn02q', '--per-second', '5', '--burst', 'ten'], '--burst must be a whole number'],
    [['accounts', 'set-rate-limit', 'acct_01h455vb4pex5vsknk084sn02q', '--per-second', '0', '--burst', '10'], '--per-second must be between 1 and'],
    [['accounts', 'set-rate-limit', 'acct_01h455vb4pex5vsknk084sn02q', '--default', '--burst', '10'], '--default cannot be combined'],
    [['keys', 'create', 'acct_01h455vb4pex5vsknk084sn02q'], '--mode is required'],
    [['keys', 'create', 'acct_01h455vb4pex5vsknk084sn02q', '--mode', 'test', '--expires-at', 'tomorrow'], '--expires-at must be an RFC 3339 timestamp'],
    [['keys', 'create', 'acct_01h455vb4pex5vsknk084sn02q', '--mode', 'test', '--expires-at', '2030-02-30T00:00:00Z'], '--expires-at must be an RFC 3339 timestamp'],
    [['keys', 'create', 'acct_01h455vb4pex5vsknk084sn02q', '--mode', 'test', '--expires-at', '2030-01-01T00:00:00'], '--expires-at must be an RFC 3339 timestamp'],
    [['keys', 'create', 'acct_01h455vb4pex5vsknk084sn02q', '--mode', 'test', '--expires-at', '2001-01-01T00:00:00Z'], '--expires-at must be in the future'],
    [['keys', 'create', 'acct_01h455vb4pex5vsknk084sn02q', '--mode', 'test', '--name', ''], '--name must not be empty'],
    [['keys', 'revoke', 'acct_01h455vb4pex5vsknk084sn02q'], 'KEY_ID must be a key id'],
    [['keys', 'roll', 'key_01h455vb4pex5vsknk084sn02q', '--expires-in', '5', '--expires-at', '2030-01-01T00:00:00Z'], 'not both'],
    [['keys', 'roll', 'key_01h455vb4pex5vsknk084sn02q', '--expires-in=-5'], '--expires-in must be a whole number'],
    [['keys', 'roll', 'key_01h455vb4pex5vsknk084sn02q', '--expires-in', '999999999'], '--expires-in must be between 0 and'],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const res = await inProcess(args as string[]);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr.split('\n')[0]).toMatch(/^error: /);
    expect(res.stderr).toContain(message);
    // and says how the command is used
    expect(res.stderr).toMatch(/usage: npm run cli --/i);
  });
});

describe('cli: embedded database', () => {
  it('says clearly that the data directory is in use while the service holds it (exit 2)', async () => {
    const dataDir = tempDir();
    // This test process is alive, so its pid in the lock file is a lock held by a running service.
    fs.writeFileSync(path.join(dataDir, 'service.lock'), String(process.pid));
    const res = await runCli(['accounts', 'list'], baseEnv({ DATA_DIR: dataDir }));
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(
      `error: the embedded database in ${dataDir} is in use by process ${process.pid}; stop it, or set DATA_DIR to another directory (or DATABASE_URL to use PostgreSQL)\n`,
    );
    // The lock belongs to the other process: the CLI must not have removed it.
    expect(fs.readFileSync(path.join(dataDir, 'service.lock'), 'utf8')).toBe(String(process.pid));
  });

  // Independent of TEST_DB, so it runs once (in the pglite project).
  it.skipIf(isPostgres)('migrates and keeps data between runs in DATA_DIR, releasing its lock', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const env = baseEnv({ DATA_DIR: dataDir });
    const migrated = await runCli(['migrate'], env);
    expect(migrated.code).toBe(0);
    expect(migrated.json).toEqual({ migrated: true });
    const created = await runCli(['accounts', 'create', '--name', 'Embedded'], env);
    expect(created.code).toBe(0);
    const listed = await runCli(['accounts', 'list'], env);
    expect(listed.code).toBe(0);
    expect(listed.json).toEqual([created.json]);
    expect(fs.existsSync(path.join(dataDir, 'service.lock'))).toBe(false);
  }, 120_000); // three PGlite start-ups, the first one creating the cluster
});

describe.skipIf(!isPostgres)('cli: accounts and keys against PostgreSQL', () => {
  let testDb: TestDatabase;
  let service: TestService;
  const cli = (...args: string[]) => runCli(args, baseEnv({ DATABASE_URL: testDb.url!, DATA_DIR: path.join(tempDir(), 'unused') }));
  /** Runs a command that must succeed and answers its JSON. */
  const ok = async (...args: string[]) => {
    const res = await cli(...args);
    expect(res.stderr.split('\n').filter((l) => l.startsWith('error:'))).toEqual([]);
    expect(res.code).toBe(0);
    return res.json;
  };
  const listOrders = (key: string) => client(service.url, key).get('/v1/payment-orders');
  // Set-up goes through the domain functions directly (fast); the command under test is a child process.
  const db = () => testDb.database.db;
  const account = async (name: string, live = false) => {
    const created = await createAccount(db(), name);
    if (live) await activateLive(db(), created.id);
    return created;
  };

  beforeAll(async () => {
    testDb = await createTestDatabase();
    // No key cache: what the CLI changes is visible to the very next request.
    service = await startTestService(testDb, { apiKeyCacheTtlMs: 0 });
  });
  afterAll(async () => {
    await service?.close();
    await testDb?.drop();
  });

  it('migrate is idempotent on a migrated database', async () => {
    expect(await ok('migrate')).toEqual({ migrated: true });
  });

  it('creates, shows and lists accounts', async () => {
    const created = await ok('accounts', 'create', '--name', '  Acme Books  ');
    expect(created).toEqual({
      id: expect.stringMatching(/^acct_[0-9a-z]{26}$/),
      name: 'Acme Books',
      status: 'active',
      live_enabled: false,
      rate_limit: null,
      payouts: { live_enabled: false, max_amount: null },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(await getAccount(db(), created.id)).toEqual(created);
    expect(await ok('accounts', 'show', created.id)).toEqual(created);
    const other = await account('Other');
    const list = await ok('accounts', 'list');
    expect(list).toEqual(expect.arrayContaining([created, other]));
    // newest first
    expect(list.findIndex((a: any) => a.id === other.id)).toBeLessThan(list.findIndex((a: any) => a.id === created.id));
  });

  it('an unknown account or key is an onboarding error (exit 2)', async () => {
    const res = await cli('accounts', 'show', 'acct_01h455vb4pex5vsknk084sn02q');
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe('error: no account acct_01h455vb4pex5vsknk084sn02q\n');
    const key = await cli('keys', 'revoke', 'key_01h455vb4pex5vsknk084sn02q');
    expect(key.code).toBe(2);
    expect(key.stderr).toBe('error: no key key_01h455vb4pex5vsknk084sn02q\n');
  });

  it('refuses a live key until the account is activated for live use', async () => {
    const acct = await account('Onboarding');
    const refused = await cli('keys', 'create', acct.id, '--mode', 'live');
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(`error: live mode is not enabled for ${acct.id}; activate it first (accounts activate-live)\n`);
    expect(await listKeys(db(), acct.id)).toEqual([]);

    const activated = await ok('accounts', 'activate-live', acct.id);
    expect(activated).toEqual({ ...acct, live_enabled: true });
    const live = await ok('keys', 'create', acct.id, '--mode', 'live', '--name', 'production');
    expect(live).toMatchObject({ account: acct.id, livemode: true, name: 'production', expires_at: null, revoked_at: null });
    expect(live.secret).toMatch(/^sk_live_[0-9A-Za-z]{32,}$/);
    const answer = await listOrders(live.secret);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ object: 'list', data: [], has_more: false });
  });

  it('issues a key whose secret is shown once and works; the list never shows secrets', async () => {
    const acct = await account('Keys');
    const created = await cli('keys', 'create', acct.id, '--mode', 'test', '--name', 'ci', '--expires-at', '2099-01-01T12:00:00+02:00');
    expect(created.code).toBe(0);
    expect(created.stderr).toMatch(/^note: the secret is shown only this once/);
    const key = created.json;
    expect(key).toEqual({
      id: expect.stringMatching(/^key_[0-9a-z]{26}$/),
      account: acct.id,
      livemode: false,
      redacted: `${key.secret.slice(0, 8)}…${key.secret.slice(-4)}`,
      name: 'ci',
      expires_at: '2099-01-01T10:00:00.000Z',
      revoked_at: null,
      created_at: expect.any(String),
      secret: expect.stringMatching(/^sk_test_[0-9A-Za-z]{32,}$/),
    });
    expect((await listOrders(key.secret)).status).toBe(200);

    const other = await issueKey(db(), acct.id, { livemode: false });
    const listed = await cli('keys', 'list', acct.id);
    expect(listed.code).toBe(0);
    for (const secret of [key.secret, other.secret]) {
      expect(listed.stdout).not.toContain(secret);
      expect(listed.stdout).not.toContain(secret.slice(8, 36));
    }
    expect(listed.stdout).not.toContain('secret');
    const { secret: _secret, ...withoutSecret } = key;
    const { secret: _other, ...otherWithoutSecret } = other;
    expect(listed.json).toEqual([otherWithoutSecret, withoutSecret]);
  });

  it('revokes a key: the service refuses it at once, and it cannot be rolled', async () => {
    const acct = await account('Revoke');
    const key = await issueKey(db(), acct.id, { livemode: false });
    expect((await listOrders(key.secret)).status).toBe(200);
    const revoked = await cli('keys', 'revoke', key.id);
    expect(revoked.code).toBe(0);
    expect(revoked.json).toMatchObject({ id: key.id, revoked_at: expect.any(String) });
    expect(revoked.json).not.toHaveProperty('secret');
    expect(revoked.stderr).toContain('API_KEY_CACHE_TTL_MS');
    const refused = await listOrders(key.secret);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('api_key_invalid');
    const roll = await cli('keys', 'roll', key.id);
    expect(roll.code).toBe(2);
    expect(roll.stdout).toBe('');
    expect(roll.stderr).toBe(`error: ${key.id} is revoked; issue a new key instead\n`);
  });

  it('rolls a key: a new key at once, the old one until the chosen time', async () => {
    const acct = await account('Roll', true);
    const old = await issueKey(db(), acct.id, { livemode: true, name: 'web' });

    const before = Date.now();
    const rolled = await cli('keys', 'roll', old.id, '--expires-in', '3');
    expect(rolled.code).toBe(0);
    const { old: oldView, new: fresh } = rolled.json;
    expect(oldView).toMatchObject({ id: old.id, revoked_at: null });
    expect(oldView).not.toHaveProperty('secret');
    expect(fresh).toMatchObject({ account: acct.id, livemode: true, name: 'web', expires_at: null });
    expect(fresh.id).not.toBe(old.id);
    expect(fresh.secret).toMatch(/^sk_live_/);
    expect(fresh.secret).not.toBe(old.secret);
    expect(rolled.stderr).toContain('shown only this once');
    expect(rolled.stderr).toContain(`the old key ${old.id} keeps working until ${oldView.expires_at}`);
    const until = Date.parse(oldView.expires_at);
    expect(until).toBeGreaterThanOrEqual(before + 3000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3000);

    if (Date.now() < until - 200) expect((await listOrders(old.secret)).status).toBe(200);
    expect((await listOrders(fresh.secret)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now() + 50)));
    const expired = await listOrders(old.secret);
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe('api_key_invalid');
    expect((await listOrders(fresh.secret)).status).toBe(200);
  });

  it('rolls with the default 24 hours, or until an explicit time, never beyond an earlier expiry', async () => {
    const acct = await account('Roll defaults');
    const a = await issueKey(db(), acct.id, { livemode: false });
    const before = Date.now();
    const byDefault = await ok('keys', 'roll', a.id);
    const until = Date.parse(byDefault.old.expires_at);
    expect(until).toBeGreaterThanOrEqual(before + 24 * 3600 * 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + 24 * 3600 * 1000);
    expect((await listOrders(a.secret)).status).toBe(200);

    const b = await issueKey(db(), acct.id, { livemode: false });
    const at = new Date(Date.now() + 3600 * 1000);
    at.setUTCMilliseconds(0);
    const explicit = await ok('keys', 'roll', b.id, '--expires-at', at.toISOString());
    expect(explicit.old.expires_at).toBe(at.toISOString());
    // Rolling again cannot extend the old key past the hour it was already given.
    const again = await ok('keys', 'roll', b.id, '--expires-in', String(48 * 3600));
    expect(again.old.expires_at).toBe(at.toISOString());

    // --expires-in 0 retires the old key at once.
    const c = await issueKey(db(), acct.id, { livemode: false });
    const now = await ok('keys', 'roll', c.id, '--expires-in', '0');
    expect(Date.parse(now.old.expires_at)).toBeLessThanOrEqual(Date.now());
    expect((await listOrders(c.secret)).status).toBe(401);
    expect((await listOrders(now.new.secret)).status).toBe(200);
  });

  it('suspends an account (403 for every key) and reinstates it', async () => {
    const acct = await account('Suspend', true);
    const test = await issueKey(db(), acct.id, { livemode: false });
    const live = await issueKey(db(), acct.id, { livemode: true });
    const suspended = await cli('accounts', 'suspend', acct.id);
    expect(suspended.code).toBe(0);
    expect(suspended.json).toMatchObject({ id: acct.id, status: 'suspended' });
    expect(suspended.stderr).toContain('API_KEY_CACHE_TTL_MS');
    for (const key of [test, live]) {
      const res = await listOrders(key.secret);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ type: 'authentication', code: 'account_suspended' });
    }
    expect(await ok('accounts', 'reinstate', acct.id)).toMatchObject({ id: acct.id, status: 'active' });
    expect((await listOrders(test.secret)).status).toBe(200);
    expect((await listOrders(live.secret)).status).toBe(200);
  });

  it("sets an account's own rate-limit budget and clears it with --default", async () => {
    const acct = await account('Budget');
    const key = await issueKey(db(), acct.id, { livemode: false });
    const set = await ok('accounts', 'set-rate-limit', acct.id, '--per-second', '3', '--burst', '4');
    expect(set).toMatchObject({ id: acct.id, rate_limit: { per_second: 3, burst: 4 } });
    expect((await getAccount(db(), acct.id)).rate_limit).toEqual({ per_second: 3, burst: 4 });

    const first = await listOrders(key.secret);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('4');
    expect(first.headers.get('ratelimit-policy')).toBe('3;w=1;burst=4');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await listOrders(key.secret)).status);
    expect(statuses).toContain(429);

    const cleared = await ok('accounts', 'set-rate-limit', acct.id, '--default');
    expect(cleared.rate_limit).toBeNull();
    // Back to the test service's configured default budget for test keys.
    const after = await listOrders(key.secret);
    expect(after.headers.get('ratelimit-limit')).toBe(String(service.config.rateLimit.test.burst));
    expect(after.headers.get('ratelimit-policy')).toBe(`${service.config.rateLimit.test.perSecond};w=1;burst=${service.config.rateLimit.test.burst}`);
  });
});
