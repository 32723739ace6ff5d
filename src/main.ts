// Process entry point: `npm start`. Runs the roles named in ROLES (default: api and worker in one
// process), on PostgreSQL when DATABASE_URL is set and on the embedded database otherwise. On the
// very first development start (embedded database, not NODE_ENV=production, serving the API) it
// creates an account and prints a test-mode key, so a newcomer can call the API straight away; a
// deployment on PostgreSQL onboards its accounts with the CLI and never prints a key. SIGTERM and
// SIGINT stop it gracefully (Service.shutdown), sent to this process or to `npm start`'s own PID:
// package.json's start script execs node, so npm relays the signal to this process and no shell or
// loader process in between swallows it.
import { ConfigError, loadConfig } from './config.js';
import { DataDirLockedError, type Db } from './storage/db.js';
import { createsFirstAccount, startService } from './service.js';
import { createAccount, issueKey, listAccounts } from './domain/accounts/service.js';

const RELAYED_SIGNAL_MS = 1000;

/** Creates the first account and a test key when the (embedded, single-process) database has none. */
async function bootstrapFirstAccount(db: Db) {
  return db.transaction(async (tx) => {
    if ((await listAccounts(tx)).length > 0) return undefined;
    const account = await createAccount(tx, 'Default account');
    const key = await issueKey(tx, account.id, { livemode: false, name: 'first start' });
    return { account, key };
  });
}

async function main() {
  const config = loadConfig();
  const service = await startService(config);
  const first = createsFirstAccount(config, service.database) ? await bootstrapFirstAccount(service.database.db) : undefined;
  if (first) {
    const { account, key } = first;
    process.stdout.write(
      `\nCreated account ${account.id} with a test-mode API key (shown once, stored only as a hash):\n\n` +
        `    ${key.secret}\n\n` +
        `Try: curl -s ${service.url ?? ''}/v1/payment-orders -H "Authorization: Bearer ${key.secret}" \\\n` +
        `       -H "Idempotency-Key: $(date +%s%N)" -H "Content-Type: application/json" \\\n` +
        `       -d '{"amount":1999,"currency":"EUR","reference":"order-1","customer":{"email":"jane@example.com"}}'\n\n` +
        `Name it (the checkout and the dashboard show this name): npm run cli -- accounts update ${account.id} --name "Your shop" --support-email you@example.com\n\n`,
    );
  }
  const where = service.database.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL';
  if (service.url) process.stdout.write(`Listening on ${service.url} (${where}); API docs at ${service.url}/docs; dashboard at ${service.url}/dashboard\n`);
  if (config.roles.includes('worker')) process.stdout.write(`Worker running (${where})\n`);
  let closingSince: number | undefined;
  const shutdown = (signal: NodeJS.Signals) => {
    // A second signal (Ctrl-C again) does not wait for the grace period: what is cut is resumed
    // by its Idempotency-Key or taken up again when its lease runs out, as after a crash. Under
    // `npm start` one Ctrl-C arrives twice (from the terminal, then relayed by npm to its script),
    // so a repeat within RELAYED_SIGNAL_MS is that same request, not a second one.
    if (closingSince !== undefined) {
      if (performance.now() - closingSince < RELAYED_SIGNAL_MS) return;
      service.log.warn({ signal }, 'shutdown: second signal; exiting now');
      process.exit(1);
    }
    closingSince = performance.now();
    service.shutdown(signal).then(
      () => process.exit(0),
      (err: unknown) => {
        service.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
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
