// Payments, refunds, mandates and connector settings (src/domain/payments, src/connectors).
import { baseUrl, ConfigError, int, requireInProduction, bool } from './parse.js';

/** Payments, refunds and connectors (src/domain/payments, src/connectors). */
export interface PaymentsConfig {
  /** Deadline of one connector call. Past it, a charge the processor received has an unknown outcome: the payment stays pending. */
  connectorTimeoutMs: number;
  /** Consecutive failures that open a connector's circuit, and how long it stays open before one probe is let through. */
  circuitBreaker: { failureThreshold: number; openMs: number };
  /** Pause between the worker's status checks of one pending payment or refund. */
  statusCheckIntervalMs: number;
  /**
   * How long a payment may wait for its customer action (3-D Secure, a redirect) before the
   * worker's last status check fails it authentication_failed (ACTION_TIMEOUT_MS, default 1 h).
   */
  actionTimeoutMs: number;
  /** Staleness bound of the in-process routing cache: another process sees a PUT /v1/routing within it. */
  routingCacheTtlMs: number;
  /** HMAC key of card fingerprints (CARD_FINGERPRINT_KEY, base64, at least 16 bytes). Unset outside production: a development key. */
  cardFingerprintKey: Buffer;
  usingDevelopmentFingerprintKey: boolean;
  simulator: SimulatorConfig;
  /**
   * Where every Stripe request goes, sandbox and live (STRIPE_API_BASE_URL, an http(s) URL; a fake
   * Stripe in tests). Unset: Stripe's own endpoint. Never taken from a tenant's input.
   */
  stripeApiBaseUrl: string | undefined;
  /**
   * Where every Adyen Checkout request goes, test and live (ADYEN_CHECKOUT_BASE_URL, an http(s)
   * origin; calls go to its /v71/…; a fake Adyen in tests). Unset: Adyen's test endpoint in
   * test mode, and in live mode the account's own live endpoint built from its validated
   * live_url_prefix. Never taken from a tenant's input.
   */
  adyenCheckoutBaseUrl: string | undefined;
  /**
   * Where every GoCardless request goes, sandbox and live (GOCARDLESS_API_BASE_URL, an http(s)
   * origin; a fake GoCardless in tests). Unset: api-sandbox.gocardless.com with a test key,
   * api.gocardless.com with a live key. Never taken from a tenant's input.
   */
  gocardlessApiBaseUrl: string | undefined;
  /**
   * Where every Adyen payout request goes (the Transfers API), test and live
   * (ADYEN_PAYOUT_BASE_URL, an http(s) origin; calls go to its /btl/v4/…; a fake Adyen in tests).
   * Unset: Adyen's balance platform endpoint of the mode. Never taken from a tenant's input.
   */
  adyenPayoutBaseUrl: string | undefined;
  /**
   * Where every Adyen Disputes API request goes, test and live (ADYEN_DISPUTE_BASE_URL, an http(s)
   * origin; calls go to its /ca/services/DisputeService/v30/…; a fake Adyen in tests). Unset:
   * ca-test.adyen.com or ca-live.adyen.com by mode. Never taken from a tenant's input.
   */
  adyenDisputeBaseUrl: string | undefined;
  /**
   * An active mandate with no successful debit for this many days (counted from its activation or
   * its last successful debit) expires (MANDATE_DORMANCY_DAYS; default 1095, the 36 months after
   * which a SEPA Core mandate lapses).
   */
  mandateDormancyDays: number;
  /**
   * Processors (stripe, adyen, simulator) that give their dispute fee back when the merchant wins
   * (DISPUTE_FEE_RETURNED_BY, comma-separated; default "stripe,simulator": Adyen keeps its
   * chargeback fee whatever the outcome). A won dispute gives the merchant's dispute fee back likewise.
   */
  disputeFeeReturnedBy: string[];
  /**
   * Fault injection for the crash-safety tests: SIGKILL the process right after this point of a
   * payment or refund. Never set it in production.
   */
  crashAfter: CrashPoint | undefined;
  /** RECONCILIATION_DAILY: the worker reconciles each connector account whose records it can fetch, once per UTC day (docs/reconciliation.md). */
  reconciliationDaily: boolean;
}

export interface SimulatorConfig {
  /** Base URL of a simulator running as its own server (npm run simulator); unset: in process. */
  url: string | undefined;
  /** Where the in-process simulator posts its webhooks; unset: this service's own address. */
  webhookUrl: string | undefined;
  /** Family secret from which each simulated processor's webhook secret is derived. */
  webhookSecret: string;
  /** How long a pending simulated charge (card 4000000000000077, 4000000000000101) waits before it resolves. */
  pendingDelayMs: number;
  /** Added latency of every simulated processor call (0: answer at once). */
  latencyMs: number;
}

export const CRASH_POINTS = [
  'payment_created',
  'payment_connector_answered',
  // A cascade (src/domain/payments/cascade.ts): attempt n > 1 persisted, not yet sent; and answered.
  'payment_attempt_persisted',
  'payment_attempt_answered',
  'refund_created',
  'refund_connector_answered',
  'capture_created',
  'capture_connector_answered',
  'void_created',
  'void_connector_answered',
  'dispute_response_created',
  'dispute_response_connector_answered',
  'mandate_created',
  'mandate_connector_answered',
  'payment_method_created',
  'payment_method_connector_answered',
  'payout_submitted',
  'payout_connector_answered',
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

/** Printed in this file, so it protects nothing: production sets CARD_FINGERPRINT_KEY. */
const DEVELOPMENT_FINGERPRINT_KEY = Buffer.from('payment-orchestrator development card fingerprint key, NOT SECRET');
export const DEVELOPMENT_SIMULATOR_SECRET = 'simsec_development_not_secret';

export function paymentsConfig(env: NodeJS.ProcessEnv): PaymentsConfig {
  requireInProduction(env, 'CARD_FINGERPRINT_KEY', 'card fingerprints and the idempotency fingerprints of requests with card data are keyed with it, and the development key is public');
  const rawKey = env.CARD_FINGERPRINT_KEY;
  const key = rawKey ? Buffer.from(rawKey, 'base64') : DEVELOPMENT_FINGERPRINT_KEY;
  if (key.length < 16) throw new ConfigError('CARD_FINGERPRINT_KEY must be base64 of at least 16 bytes');
  const crash = env.CRASH_AFTER || undefined;
  if (crash !== undefined && !(CRASH_POINTS as readonly string[]).includes(crash)) {
    throw new ConfigError(`CRASH_AFTER must be one of ${CRASH_POINTS.join(', ')}, got ${JSON.stringify(crash)}`);
  }
  return {
    connectorTimeoutMs: int(env, 'CONNECTOR_TIMEOUT_MS', 10_000, 10),
    circuitBreaker: {
      failureThreshold: int(env, 'CIRCUIT_BREAKER_FAILURES', 5, 1),
      openMs: int(env, 'CIRCUIT_BREAKER_OPEN_MS', 30_000, 1),
    },
    statusCheckIntervalMs: int(env, 'STATUS_CHECK_INTERVAL_MS', 30_000, 10),
    actionTimeoutMs: int(env, 'ACTION_TIMEOUT_MS', 3_600_000, 1),
    routingCacheTtlMs: int(env, 'ROUTING_CACHE_TTL_MS', 5000),
    cardFingerprintKey: key,
    usingDevelopmentFingerprintKey: !rawKey,
    simulator: {
      url: env.SIMULATOR_URL || undefined,
      webhookUrl: env.SIMULATOR_WEBHOOK_URL || undefined,
      webhookSecret: env.SIMULATOR_WEBHOOK_SECRET || DEVELOPMENT_SIMULATOR_SECRET,
      pendingDelayMs: int(env, 'SIMULATOR_PENDING_DELAY_MS', 5000),
      latencyMs: int(env, 'SIMULATOR_LATENCY_MS', 0),
    },
    stripeApiBaseUrl: baseUrl(env, 'STRIPE_API_BASE_URL'),
    adyenCheckoutBaseUrl: baseUrl(env, 'ADYEN_CHECKOUT_BASE_URL'),
    gocardlessApiBaseUrl: baseUrl(env, 'GOCARDLESS_API_BASE_URL'),
    adyenPayoutBaseUrl: baseUrl(env, 'ADYEN_PAYOUT_BASE_URL'),
    adyenDisputeBaseUrl: baseUrl(env, 'ADYEN_DISPUTE_BASE_URL'),
    mandateDormancyDays: int(env, 'MANDATE_DORMANCY_DAYS', 1095, 1),
    disputeFeeReturnedBy: (env.DISPUTE_FEE_RETURNED_BY ?? 'stripe,simulator').split(',').map((s) => s.trim()).filter(Boolean),
    crashAfter: crash as CrashPoint | undefined,
    reconciliationDaily: bool(env, 'RECONCILIATION_DAILY', false),
  };
}

