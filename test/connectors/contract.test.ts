// The connector contract suite: the same scenarios (test/connectors/contract/scenarios.ts) over every
// processor harness (test/connectors/contract/harnesses.ts: the simulated processor, Stripe, Adyen and GoCardless against their fakes),
// each through a service of its own and the service's HTTP API. A scenario the harness cannot run
// (a capability it lacks) is skipped.
import { HARNESSES } from './contract/harnesses.js';
import { describeContract } from './contract/suite.js';

for (const make of HARNESSES) {
  const harness = make();
  // A deadline that a loaded machine keeps for answered calls; the hang scenario waits it out.
  describeContract(`connector contract: ${harness.name}`, harness, { connectorTimeoutMs: 2000 });
}
