// Stripe's and Adyen's fakes side by side, for the tests that route one payment across both
// (saved-card portability, cascades): started before the enclosing suite and closed after it.
import { afterAll, beforeAll } from 'vitest';
import { useService } from '../../support/fixtures.js';
import type { PaymentsSettings } from '../../support/helpers.js';
import type { Connected } from './harness.js';
import { adyenHarness } from './adyen.js';
import { stripeHarness } from './stripe.js';

export function useStripeAndAdyen() {
  const stripe = stripeHarness();
  const adyen = adyenHarness();
  beforeAll(async () => {
    await stripe.start();
    await adyen.start();
  });
  afterAll(async () => {
    await stripe.close();
    await adyen.close();
  });
  return {
    stripe,
    adyen,
    /** A service in this process reaching both (a breaker that never opens on the faults a test injects). */
    settings: (): PaymentsSettings => ({ circuitBreaker: { failureThreshold: 1000 }, ...stripe.service().settings, ...adyen.service().settings }),
    /** The same, as the environment of a service process. */
    processEnv: () => ({ ...stripe.processEnv(), ...adyen.processEnv() }),
  };
}

/** A service in this process reaching both fakes, with a connector account at each (made before the suite's tests). */
export function useServiceOnStripeAndAdyen() {
  const both = useStripeAndAdyen();
  const h = useService({ late: () => ({ settings: { connectorTimeoutMs: 2000, ...both.settings() } }) });
  const connected = {} as { stripe: Connected; adyen: Connected };
  beforeAll(async () => {
    connected.stripe = await both.stripe.connect(h.api, h.url);
    connected.adyen = await both.adyen.connect(h.api, h.url);
  });
  return { ...both, h, connected };
}
