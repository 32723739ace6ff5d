// Stripe's and Adyen's fakes side by side, for the tests that route one payment across both
// (saved-card portability, cascades): started before the enclosing suite and closed after it.
import { afterAll, beforeAll } from 'vitest';
import type { PaymentsSettings } from '../../support/helpers.js';
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
