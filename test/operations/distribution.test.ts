// The schema can be distributed by account with Citus (docs/operations.md#distributing-by-account-citus):
// scripts/check-distribution.ts passes on the migrated database and fails, naming each, on violations
// planted in a scratch database; the docs' migration plan is the one the database gives; and what
// was found by a global key before migration 0029 is found through its reference tables after it.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { checkDistribution, migrationPlan } from '../../scripts/check-distribution.js';
import { parseId } from '../../src/kernel/ids.js';
import { newApiKey, sha256Hex } from '../../src/kernel/secrets.js';
import type { Database } from '../../src/storage/db.js';
import { useService } from '../support/fixtures.js';
import { client, createTestDatabase, isPostgres, rowsOf, type TestDatabase } from '../support/helpers.js';
import { createConnectorAccount } from '../support/connectors.js';
import { newOrder } from '../support/payments.js';
import { visit } from '../support/checkout.js';

const ROOT = new URL('../../', import.meta.url);
const s = useService();
const catalog = (database: Database) => async (text: string) => rowsOf(database, sql.raw(text));

/** The statements of migration 0029, to run again over rows written as before it. */
const MIGRATION_0029 = readFileSync(new URL('migrations/0029_distribution_keys.sql', ROOT), 'utf8').split('--> statement-breakpoint');

describe('check:distribution', () => {
  const scratches: TestDatabase[] = [];
  afterAll(async () => {
    for (const scratch of scratches) await scratch.drop();
  });

  it('finds nothing wrong in the migrated schema', async () => {
    expect(await checkDistribution(catalog(s.database))).toEqual([]);
  });

  it('fails on planted violations, naming each; a partition column added to a key that holds account_id passes', async () => {
    const scratch = await createTestDatabase();
    scratches.push(scratch);
    const plant = (statement: string) => scratch.database.db.execute(sql.raw(statement));
    await plant('CREATE TABLE planted_global (account_id uuid NOT NULL, id uuid NOT NULL, token text, PRIMARY KEY (account_id, id))');
    await plant('CREATE UNIQUE INDEX planted_global_token_key ON planted_global (token)');
    await plant('CREATE TABLE planted_no_account (id uuid PRIMARY KEY)');
    await plant('CREATE TABLE planted_nullable (account_id uuid, id uuid NOT NULL)');
    await plant('CREATE TABLE planted_child (account_id uuid NOT NULL, order_account uuid NOT NULL, order_id uuid NOT NULL, FOREIGN KEY (order_account, order_id) REFERENCES payment_orders (account_id, id))');
    await plant('ALTER TABLE connector_account_routes ADD FOREIGN KEY (account_id, id) REFERENCES connector_accounts (account_id, id)');
    await plant('ALTER TABLE api_key_lookups DROP CONSTRAINT api_key_lookups_pkey');
    await plant('DROP TABLE simulator_reports');
    // As events and webhook_attempts are partitioned by time: the key gains created_at.
    await plant('CREATE TABLE planted_history (account_id uuid NOT NULL, id uuid NOT NULL, created_at timestamptz NOT NULL, PRIMARY KEY (account_id, id, created_at)) PARTITION BY RANGE (created_at)');
    await plant("CREATE TABLE planted_history_2026 PARTITION OF planted_history FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')");
    await plant('CREATE TABLE planted_bad_history (account_id uuid NOT NULL, id uuid NOT NULL, created_at timestamptz NOT NULL, PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at)');

    const problems = await checkDistribution(catalog(scratch.database));
    const expected = [
      'simulator_reports: listed as reference in PLACEMENTS but no such table',
      'planted_no_account: no account_id column to distribute by',
      'planted_nullable: account_id must be uuid NOT NULL (is uuid, nullable)',
      'planted_bad_history: primary key planted_bad_history_pkey (id, created_at) does not include account_id',
      'planted_global: unique index planted_global_token_key (token) does not include account_id',
      'planted_no_account: primary key planted_no_account_pkey (id) does not include account_id',
      'connector_account_routes: foreign key connector_account_routes_account_id_id_fkey to connector_accounts: a reference table cannot refer to a distributed one',
      'planted_child: foreign key planted_child_order_account_order_id_fkey to payment_orders: must match account_id to account_id',
      'look-up "API key by its hash (authentication)" through api_key_lookups: no unique key on (key_hash) alone',
    ];
    for (const line of expected) expect(problems.some((p) => p.startsWith(line)), `${line}\n in:\n${problems.join('\n')}`).toBe(true);
    expect(problems).toHaveLength(expected.length);
    expect(problems.join('\n')).not.toContain('planted_history');

    if (!isPostgres) return;
    // The command CI runs: exit 1 and the list on this database, 0 on a clean one.
    const run = (url: string) => spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-distribution.ts', '--url', url], { cwd: ROOT, encoding: 'utf8' });
    const failed = run(scratch.url!);
    expect(failed.status, failed.stderr).toBe(1);
    expect(failed.stderr).toContain('distribution: planted_global: unique index planted_global_token_key (token) does not include account_id');
    expect(failed.stdout).toContain(`${expected.length} violation(s)`);
    const clean = run(s.databaseUrl!);
    expect(clean.status, clean.stderr).toBe(0);
    expect(clean.stdout).toContain('ready to distribute by account_id');
  }, 60_000);

  it("is what docs/operations.md's migration plan says, call for call", async () => {
    const plan = await migrationPlan(catalog(s.database));
    expect(plan[0]).toBe("SELECT create_reference_table('accounts');");
    expect(plan).toContain("SELECT create_distributed_table('payments', 'account_id', colocate_with => 'account_terms');");
    const docs = readFileSync(new URL('docs/operations.md', ROOT), 'utf8');
    expect(docs).toContain(`\`\`\`sql\n${plan.join('\n')}\n\`\`\``);
  });
});

describe('look-ups through reference tables', () => {
  it('a checkout token finds its order only within the account it names', async () => {
    const order = await newOrder(s.api);
    expect((await visit(order.checkout_url)).status).toBe(200);
    const other = await s.newTenant();
    const otherAccount = Buffer.from(parseId('acct', other.accountId)!.replace(/-/g, ''), 'hex').toString('base64url');
    const [base, token] = [order.checkout_url.slice(0, order.checkout_url.lastIndexOf('/') + 1), order.checkout_url.split('/').pop()!];
    const secret = token.split('.')[1]!;
    expect((await visit(`${base}${otherAccount}.${secret}`)).status).toBe(404);
    expect((await visit(`${base}${secret}`)).status).toBe(404);
  });

  it('what was written before migration 0029 is found after it, and running it again changes nothing else', async () => {
    // A key, an old-style checkout token and a connector account as the previous release left them: no look-up rows.
    const accountId = parseId('acct', s.tenant.accountId)!;
    const secret = newApiKey(false);
    await s.query(sql`INSERT INTO api_keys (account_id, id, livemode, key_hash, redacted) VALUES (${accountId}, ${crypto.randomUUID()}, false, ${sha256Hex(secret)}, 'sk_test_…old')`);
    const order = await newOrder(s.api);
    const oldToken = crypto.randomBytes(32).toString('base64url');
    await s.query(sql`UPDATE payment_orders SET checkout_token = ${oldToken} WHERE account_id = ${accountId} AND id = ${parseId('ord', order.id)}`);
    const oldUrl = `${s.url}/checkout/${oldToken}`;
    const connectorAccount = await createConnectorAccount(s.api, 'simulator_b', 'before-0029');
    await s.query(sql`DELETE FROM connector_account_routes WHERE id = ${parseId('ca', connectorAccount.id)}`);
    const webhook = () => fetch(`${s.url}/v1/connector-accounts/${connectorAccount.id}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const oldKey = client(s.url, secret);

    expect((await oldKey.get('/v1/payment-orders?limit=1')).status).toBe(401);
    expect((await visit(oldUrl)).status).toBe(404);
    expect((await webhook()).status).toBe(404);
    const before = await s.query(sql`SELECT (SELECT count(*) FROM api_key_lookups) AS keys, (SELECT count(*) FROM checkout_token_routes) AS tokens`);

    for (const statement of MIGRATION_0029) await s.db.execute(sql.raw(statement));

    expect((await oldKey.get('/v1/payment-orders?limit=1')).status).toBe(200);
    expect((await visit(oldUrl)).status).toBe(200);
    // Found: refused for its (missing) signature, not unknown.
    expect((await webhook()).status).toBe(401);
    const after = await s.query(sql`SELECT (SELECT count(*) FROM api_key_lookups) AS keys, (SELECT count(*) FROM checkout_token_routes) AS tokens`);
    expect(Number(after[0]!.keys)).toBe(Number(before[0]!.keys) + 1);
    // Only tokens without an account part get a route.
    expect(Number(after[0]!.tokens)).toBe(Number(before[0]!.tokens) + 1);
    expect(await s.query(sql`SELECT account_id FROM checkout_token_routes WHERE token = ${oldToken}`)).toEqual([{ account_id: accountId }]);
    expect(await checkDistribution(catalog(s.database))).toEqual([]);
  });
});
