// The connector contract for payouts (test/connectors/contract/payouts.ts) over every payout harness
// (test/connectors/contract/payout-harnesses.ts: the simulated processor and Adyen against their fakes), each
// through a service of its own and the service's HTTP API. A scenario the harness cannot run is skipped.
import { PAYOUT_HARNESSES } from './contract/payout-harnesses.js';
import { describePayoutContract } from './contract/payouts.js';

for (const make of PAYOUT_HARNESSES) {
  const harness = make();
  describePayoutContract(`payout contract: ${harness.name}`, harness, { connectorTimeoutMs: 2000, statusCheckIntervalMs: 100 });
}
