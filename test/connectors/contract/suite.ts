// One harness's run of the contract: a service of its own (with the harness's settings), the
// tenant's connector account or configuration, the route through it, then every scenario the
// harness can run (test/connectors/contract.test.ts over the fakes; test/connectors/contract/ against a sandbox).
import { afterAll, beforeAll, describe, it } from 'vitest';
import { useService } from '../../support/fixtures.js';
import type { PaymentsSettings } from '../../support/helpers.js';
import type { Connected, ProcessorHarness } from './harness.js';
import { MANDATE_SCENARIOS } from './mandates.js';
import { SAVED_CARD_SCENARIOS } from './saved-cards.js';
import { VERIFY_CARD_SCENARIOS } from './verify-cards.js';
import { routeThrough, runnable, SCENARIOS, type ScenarioContext } from './scenarios.js';

export function describeContract(title: string, harness: ProcessorHarness, settings: PaymentsSettings, opts: { onlyRunnable?: boolean } = {}) {
  describe(title, () => {
    beforeAll(() => harness.start());
    afterAll(() => harness.close());
    const h = useService({
      late: () => {
        const own = harness.service();
        return { settings: { circuitBreaker: { failureThreshold: 1000 }, ...settings, ...own.settings }, runtime: own.runtime };
      },
    });
    let processor: Connected;
    beforeAll(async () => {
      processor = await harness.connect(h.api, h.url);
      await routeThrough(h.api, processor);
    });
    const context = (): ScenarioContext => ({ api: h.api, harness, processor, url: h.url, query: (statement) => h.query(statement), saving: { db: h.db, owner: { accountId: h.tenant.accountId, livemode: false } } });

    for (const scenario of [...SCENARIOS, ...SAVED_CARD_SCENARIOS, ...VERIFY_CARD_SCENARIOS, ...MANDATE_SCENARIOS]) {
      const can = runnable(harness, scenario);
      if (opts.onlyRunnable && !can) continue;
      it.skipIf(!can)(scenario.name, () => scenario.run(context()));
    }
  });
}
