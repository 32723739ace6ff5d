// The connector contract suite: the same scenarios (test/contract/scenarios.ts) over every
// processor harness (test/contract/harnesses.ts: the simulated processor, Stripe against its fake),
// each through a service of its own and the service's HTTP API. A scenario the harness cannot run
// (a capability it lacks) is skipped; one not written yet (customer actions) is a todo.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { useService } from './fixtures.js';
import type { Connected } from './contract/harness.js';
import { HARNESSES } from './contract/harnesses.js';
import { routeThrough, runnable, SCENARIOS, type ScenarioContext } from './contract/scenarios.js';

for (const make of HARNESSES) {
  const harness = make();
  describe(`connector contract: ${harness.name}`, () => {
    beforeAll(() => harness.start());
    afterAll(() => harness.close());
    const h = useService({
      // A deadline that a loaded machine keeps for answered calls; the hang scenario waits it out.
      late: () => {
        const { settings, runtime } = harness.service();
        return { settings: { connectorTimeoutMs: 2000, circuitBreaker: { failureThreshold: 1000 }, ...settings }, runtime };
      },
    });
    let processor: Connected;
    beforeAll(async () => {
      processor = await harness.connect(h.api, h.url);
      await routeThrough(h.api, processor);
    });
    const context = (): ScenarioContext => ({ api: h.api, harness, processor });

    for (const scenario of SCENARIOS) {
      if (!scenario.run) it.todo(scenario.name);
      else it.skipIf(!runnable(harness, scenario))(scenario.name, () => scenario.run!(context()));
    }
  });
}
