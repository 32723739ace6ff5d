// The operator CLI as a child process: arguments are checked before any database is opened (and
// the usage said), and a run against an embedded database in a temporary DATA_DIR. Both run on
// either project; the commands against PostgreSQL are in cli.accounts.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPostgres } from '../support/helpers.js';
import { baseEnv, runCli, runCliHere, tempDir } from '../support/cli.js';

describe('cli: arguments are checked before any database is opened', () => {
  // DATA_DIR points at a directory that does not exist yet: opening the embedded database would
  // create it, so its absence afterwards shows that nothing was opened.
  let dataDir: string;
  const cli = (...args: string[]) => runCli(args, baseEnv({ DATA_DIR: dataDir }));
  /** The same command line run in this process (fast), for the many argument checks. */
  const inProcess = (args: string[]) => runCliHere(args, baseEnv({ DATA_DIR: dataDir }));
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
      'accounts create --name NAME [--support-email EMAIL]',
      'accounts update ACCT_ID [--name NAME] [--support-email EMAIL|none]',
      'accounts list',
      'accounts show ACCT_ID',
      'accounts plan ACCT_ID',
      'accounts activate-live ACCT_ID [--force]',
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
    [['accounts', 'create', '--name', 'A', '--support-email', 'nobody'], '--support-email must be an email address'],
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
    // accounts create adds the test key and the plan to the account it prints.
    const { test_key: testKey, plan, ...account } = created.json;
    expect(testKey.secret).toMatch(/^sk_test_/);
    expect(plan.object).toBe('integration_plan');
    expect(listed.json).toEqual([account]);
    expect(fs.existsSync(path.join(dataDir, 'service.lock'))).toBe(false);
  }, 120_000); // three PGlite start-ups, the first one creating the cluster
});
