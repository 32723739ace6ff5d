// The first day on the embedded database, as the README starts it: `npm start` on a fresh data
// directory; the CLI beside it (the service holds the database, so the commands run inside it
// through the data directory's admin socket, with the same output and exit codes); then SIGTERM
// sent to the PID of `npm start` itself, as a process manager does, which must drain and close the
// port within SHUTDOWN_GRACE_MS rather than leave the service running without its parent. Runs
// once, in the pglite project: it spawns its own processes and uses no test database.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, isPostgres } from '../support/helpers.js';
import { killGroup, startChild, type Child } from '../support/processes.js';
import { baseEnv, runCli } from '../support/cli.js';
import { adminSocketPath } from '../../src/cli/admin-channel.js';

// A fresh embedded database takes a while to create on a busy machine.
const START_MS = 150_000;
const GRACE_MS = 6000;
const DELAY_MS = 500;

describe.skipIf(isPostgres)('npm start on the embedded database', () => {
  let dir: string;
  let dataDir: string;
  let service: Child;
  let account: string;
  let firstKey: string;
  const cli = (...args: string[]) => runCli(args, baseEnv({ DATA_DIR: dataDir }));

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'po-embedded-'));
    dataDir = path.join(dir, 'data');
    service = await startChild(
      { DATABASE_URL: '', DATA_DIR: dataDir, ROLES: 'api,worker', LOG_LEVEL: 'info', SHUTDOWN_DELAY_MS: String(DELAY_MS), SHUTDOWN_GRACE_MS: String(GRACE_MS) },
      START_MS,
      ['npm', 'start'],
    );
    account = /Created account (acct_\w+)/.exec(service.output())![1]!;
    firstKey = /sk_test_\w+/.exec(service.output())![0];
  }, START_MS + 30_000);
  afterAll(() => {
    // Whatever a failed test leaves running (before the fix: the service, orphaned by npm).
    if (service) killGroup(service);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the socket is the owner\'s alone: a 0700 directory, a 0600 socket', () => {
    const socket = adminSocketPath(dataDir);
    expect(fs.statSync(socket).isSocket()).toBe(true);
    expect(fs.statSync(socket).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(socket)).mode & 0o777).toBe(0o700);
  });

  it('runs CLI commands beside the running service, with the same output and exit codes', async () => {
    const key = await cli('keys', 'create', account, '--mode', 'test', '--name', 'beside the service');
    expect(key.code, key.stderr).toBe(0);
    expect(key.json).toMatchObject({ account, livemode: false, name: 'beside the service', secret: expect.stringMatching(/^sk_test_/) });
    expect(key.stderr).toBe('note: the secret is shown only this once and stored only as a hash: keep it somewhere safe now\n');
    // The key works at once, against the same service.
    expect((await call(service.url, 'GET', '/v1/payment-orders', { key: key.json.secret })).status).toBe(200);

    const renamed = await cli('accounts', 'update', account, '--name', 'Corner Shop');
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.json).toMatchObject({ id: account, name: 'Corner Shop' });

    const session = await cli('dashboard', 'session', account, '--mode', 'test');
    expect(session.code, session.stderr).toBe(0);
    // The service's own configuration builds the URL: where it really listens.
    expect(session.json).toMatchObject({ account, mode: 'test', code: expect.any(String), sign_in_url: `${service.url}/dashboard/sign-in` });

    const keys = await cli('keys', 'list', account);
    expect(keys.json.map((k: { name: string }) => k.name).sort()).toEqual(['beside the service', 'first start']);
    expect(JSON.stringify(keys.json)).not.toContain(firstKey);

    const ledger = await cli('ledger', 'check');
    expect(ledger.code, ledger.stderr).toBe(0);
    expect(ledger.json).toMatchObject({ ok: true });

    // An onboarding error reads exactly as it does without a service.
    const missing = await cli('accounts', 'show', 'acct_01h455vb4pex5vsknk084sn02q');
    expect(missing).toMatchObject({ code: 2, stdout: '', stderr: 'error: no account acct_01h455vb4pex5vsknk084sn02q\n' });
  }, 120_000);

  it("stops gracefully on SIGTERM sent to npm start's own PID: port closed within the grace period, exit 0", async () => {
    const signalledAt = Date.now();
    process.kill(service.process.pid!, 'SIGTERM');
    const port = () => fetch(`${service.url}/health`).then(() => 'open', () => 'closed');
    await expect.poll(port, { timeout: GRACE_MS, interval: 100 }).toBe('closed');
    const exit = await Promise.race([service.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), GRACE_MS + 5000))]);
    expect(exit, service.output()).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(GRACE_MS + 5000);
    // Nothing listens any more: not npm, and not a service left behind by it.
    expect(await port()).toBe('closed');
    expect(service.output()).toContain('"signal":"SIGTERM"');
    expect(service.output()).toContain('shutdown: done');
    expect(fs.existsSync(adminSocketPath(dataDir))).toBe(false);
  }, 60_000);
});
