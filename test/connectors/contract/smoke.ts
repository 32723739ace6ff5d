// The contract's scenarios that need no fake (no fault injection, no books, no webhook sent on
// demand) against a processor's real sandbox. Run by scripts/connectors-smoke.ts
// (`npm run connectors:smoke -- <name>`), which names the sandbox in SMOKE_CONNECTOR after
// checking its credentials; not part of npm test (its name does not end in .test.ts).
import { SANDBOXES } from './sandboxes.js';
import { describeContract } from './suite.js';
import { describePayoutContract } from './payouts.js';

const name = process.env.SMOKE_CONNECTOR ?? '';
const sandbox = SANDBOXES[name];
if (!sandbox) throw new Error(`SMOKE_CONNECTOR=${JSON.stringify(name)} names no sandbox of test/connectors/contract/sandboxes.ts`);
// A real sandbox over the internet: the production deadline (two connectors of it fit the idempotency lock).
if (sandbox.harness) describeContract(`connectors smoke: ${name}`, await sandbox.harness(), { connectorTimeoutMs: 10_000 }, { onlyRunnable: true });
if (sandbox.payouts) describePayoutContract(`connectors smoke: ${name}`, await sandbox.payouts(), { connectorTimeoutMs: 10_000 }, { onlyRunnable: true });
