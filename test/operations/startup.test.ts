// What a starting process prints (src/main.ts): only the embedded development start creates a
// first account and prints its key with a curl line; a start on PostgreSQL or with
// NODE_ENV=production prints no secret and creates nothing; a worker-only process says it runs and
// prints no curl line for a port it does not serve. The embedded starts run in the pglite project
// and the PostgreSQL ones in the postgres project (each spawns its own processes, once).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, isPostgres, type TestDatabase } from '../support/helpers.js';
import { startChild, stopChild, type Child } from '../support/processes.js';
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

describe.skipIf(!isPostgres)('start-up output on PostgreSQL', () => {
  let testDb: TestDatabase;
  afterAll(async () => testDb?.drop());

  it('never creates an account nor prints a key, in production or not, api or worker', async () => {
    testDb = await createTestDatabase();
    const starts: Record<string, string>[] = [{ ROLES: 'api,worker', NODE_ENV: 'production' }, { ROLES: 'api' }, { ROLES: 'worker' }];
    for (const env of starts) {
      child = await startChild({ DATABASE_URL: testDb.url!, ...env });
      expect(child.output()).toContain(env.ROLES === 'worker' ? 'Worker running (PostgreSQL)' : 'Listening on');
      await stopChild(child);
      expect(child.output()).not.toMatch(KEY);
      expect(child.output()).not.toContain('curl');
    }
    const accounts = await testDb.database.db.execute(sql`SELECT count(*)::int AS n FROM accounts`);
    expect((accounts as unknown as { rows: { n: number }[] }).rows[0]!.n).toBe(0);
  }, 120_000);
});
