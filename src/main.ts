// Process entry point: `npm start`. Runs the roles named in ROLES (default: api and worker in one
// process), on PostgreSQL when DATABASE_URL is set and on the embedded database otherwise. On the
// very first start it creates an account and prints a test-mode key, so a newcomer can call the
// API straight away.
import { ConfigError, loadConfig } from './config.js';
import { sql } from 'drizzle-orm';
import { DataDirLockedError, type Db } from './storage/db.js';
import { startService } from './service.js';
import { createAccount, issueKey, listAccounts } from './domain/accounts/service.js';

/**
 * Creates the first account and a test key when the database has none. The advisory lock stops
 * several processes starting together on an empty database from each creating one.
 */
async function bootstrapFirstAccount(db: Db) {
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(72707002)`);
    if ((await listAccounts(tx)).length > 0) return undefined;
    const account = await createAccount(tx, 'Default account');
    const key = await issueKey(tx, account.id, { livemode: false, name: 'first start' });
    return { account, key };
  });
}

async function main() {
  const config = loadConfig();
  const service = await startService(config);
  const first = await bootstrapFirstAccount(service.database.db);
  if (first) {
    const { account, key } = first;
    process.stdout.write(
      `\nCreated account ${account.id} with a test-mode API key (shown once, stored only as a hash):\n\n` +
        `    ${key.secret}\n\n` +
        `Try: curl -s ${service.url ?? 'http://127.0.0.1:' + config.port}/v1/payment-orders -H "Authorization: Bearer ${key.secret}" \\\n` +
        `       -H "Idempotency-Key: $(date +%s%N)" -H "Content-Type: application/json" \\\n` +
        `       -d '{"amount":1999,"currency":"EUR","reference":"order-1","customer":{"email":"jane@example.com"}}'\n\n`,
    );
  }
  if (service.url) {
    process.stdout.write(
      `Listening on ${service.url} (${service.database.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL'}); API docs at ${service.url}/docs\n`,
    );
  }
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await service.close();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

main().catch((err) => {
  if (err instanceof ConfigError || err instanceof DataDirLockedError) {
    process.stderr.write(`error: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
