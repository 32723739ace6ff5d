// The real sandboxes `npm run connectors:smoke -- <name>` can run the contract against, by name:
// which environment variables each needs, and its harness, loaded only when it runs (the script
// reads this table first, and must answer "skipped" quickly). undefined: no connector yet.
import type { ProcessorHarness } from './harness.js';
import type { PayoutHarness } from './payouts.js';

export interface Sandbox {
  /** Environment variables that must be set (credentials); without them the smoke run is skipped. */
  credentials: readonly string[];
  /** Optional ones, read when set. */
  optional: readonly string[];
  /** The payments contract's harness, or the payout contract's (`payouts`). */
  harness?(): Promise<ProcessorHarness>;
  payouts?(): Promise<PayoutHarness>;
}

export const SANDBOXES: Readonly<Record<string, Sandbox | undefined>> = {
  stripe: { credentials: ['STRIPE_SECRET_KEY'], optional: ['STRIPE_API_BASE_URL'], harness: async () => (await import('./stripe.js')).stripeSandbox() },
  adyen: {
    credentials: ['ADYEN_API_KEY', 'ADYEN_MERCHANT_ACCOUNT', 'ADYEN_HMAC_KEY'],
    optional: ['ADYEN_CHECKOUT_BASE_URL'],
    harness: async () => (await import('./adyen.js')).adyenSandbox(),
  },
  gocardless: {
    credentials: ['GOCARDLESS_ACCESS_TOKEN'],
    optional: ['GOCARDLESS_API_BASE_URL'],
    harness: async () => (await import('./gocardless.js')).gocardlessSandbox(),
  },
  'adyen-payouts': {
    credentials: ['ADYEN_API_KEY', 'ADYEN_MERCHANT_ACCOUNT', 'ADYEN_PAYOUT_API_KEY', 'ADYEN_BALANCE_ACCOUNT_ID'],
    optional: ['ADYEN_PAYOUT_BASE_URL'],
    payouts: async () => (await import('./payout-harnesses.js')).adyenPayoutSandbox(),
  },
};
