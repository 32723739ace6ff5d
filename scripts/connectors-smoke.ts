// npm run connectors:smoke -- <stripe|adyen|adyen-payouts|gocardless>: the connector contract's scenarios that
// need no fake (test/connectors/contract/smoke.ts; for adyen-payouts, the payout contract's) against the
// processor's real sandbox, through a service started in this process on an embedded database
// (TEST_DB=postgres uses the test PostgreSQL instead).
// Credentials come from the environment (each sandbox's list is in test/connectors/contract/sandboxes.ts);
// without them the run is skipped, and says so. Exit code 0: passed or skipped; 1: a scenario
// failed; 2: usage, or no connector for that processor in this version.
import { SANDBOXES } from '../test/connectors/contract/sandboxes.js';

const name = process.argv[2] ?? '';
const names = Object.keys(SANDBOXES).join('|');
if (!Object.hasOwn(SANDBOXES, name)) {
  console.error(`usage: npm run connectors:smoke -- <${names}>`);
  process.exit(2);
}
const sandbox = SANDBOXES[name];
if (!sandbox) {
  console.log(`${name}: not available yet: this version has no ${name} connector to run against its sandbox`);
  process.exit(2);
}
const missing = sandbox.credentials.filter((variable) => !process.env[variable]);
if (missing.length > 0) {
  console.log(`${name}: skipped: no credentials (set ${missing.join(', ')})`);
  process.exit(0);
}
const target = sandbox.optional.filter((variable) => process.env[variable]).map((variable) => `${variable}=${process.env[variable]}`);
console.log(`${name}: running the contract's smoke scenarios against ${target.length ? target.join(', ') : `${name}'s sandbox`}`);

process.env.SMOKE_CONNECTOR = name;
process.env.TEST_DB ??= 'pglite';
// Loaded only now: the answers above must come quickly.
const { startVitest } = await import('vitest/node');
const vitest = await startVitest('test', [], {
  config: false,
  run: true,
  watch: false,
  include: ['test/connectors/contract/smoke.ts'],
  testTimeout: 120_000,
  hookTimeout: 120_000,
  pool: 'forks',
  reporters: ['verbose'],
});
const failed = vitest.state.getCountOfFailedTests() > 0 || vitest.state.getUnhandledErrors().length > 0 || process.exitCode === 1;
await vitest.close();
console.log(failed ? `${name}: smoke FAILED` : `${name}: smoke passed`);
process.exit(failed ? 1 : 0);
