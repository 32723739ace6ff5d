// Every setting the service reads, from the environment, validated once at start-up so a typo
// fails loudly before the first request instead of surfacing as odd behaviour later.
import { DEVELOPMENT_KEY, EncryptionError, parseEncryptionKeys, type EncryptionKey } from './lib/encryption.js';
import { SIMULATED_PROCESSORS } from './connectors/simulator/profiles.js';

export type Role = 'api' | 'worker';

export interface RateLimitBudget {
  perSecond: number;
  burst: number;
}

export interface Config {
  /** PostgreSQL connection string; absent means the embedded database (PGlite) in dataDir. */
  databaseUrl: string | undefined;
  dataDir: string;
  databasePoolSize: number;
  /** How long opening a PostgreSQL connection may take before the request waiting for it gets a 503. */
  databaseConnectTimeoutMs: number;
  /** On SIGTERM/SIGINT: how long /ready answers 503 while requests are still taken (load balancers notice). */
  shutdownDelayMs: number;
  /** On SIGTERM/SIGINT: how long, from the signal, in-flight requests and webhook attempts may take to finish. */
  shutdownGraceMs: number;
  host: string;
  port: number;
  /** Where GET /metrics listens (METRICS_HOST, METRICS_PORT); port 0: nowhere. */
  metrics: { host: string; port: number };
  /**
   * Base of the URLs the service hands out (a connector account's webhook_url): PUBLIC_BASE_URL,
   * never a request's Host header. Unset: the address the API listens on (http://HOST:PORT).
   */
  publicBaseUrl: string | undefined;
  roles: Role[];
  logLevel: string;
  redisUrl: string | undefined;
  rateLimit: { live: RateLimitBudget; test: RateLimitBudget };
  idempotencyRetentionS: number;
  /** How long an in-flight idempotency lock is honoured before another request may take it over. */
  idempotencyLockTimeoutS: number;
  /** Upper bound on how stale a cached API-key lookup may be (revocation takes effect within it). */
  apiKeyCacheTtlMs: number;
  workerIntervalMs: number;
  bodyLimitBytes: number;
  /** Keys for encryption at rest; the first seals. Unset: the development key (not for production). */
  encryptionKeys: EncryptionKey[];
  usingDevelopmentEncryptionKey: boolean;
  webhooks: WebhookConfig;
  payments: PaymentsConfig;
  payouts: PayoutsConfig;
}

/** Payouts (src/domain/payouts). */
export interface PayoutsConfig {
  /**
   * Submit a payout to its bank right after the request that created it (in the background),
   * rather than waiting for the worker's next pass. Either way cancel and submission lock the
   * payout row, so exactly one of them wins. PAYOUT_SUBMIT_ON_CREATE=false leaves it to the worker.
   */
  submitOnCreate: boolean;
  /** How many due payouts one worker pass submits or checks at most. */
  batchSize: number;
}

export interface WebhookConfig {
  /** Whole-request deadline of one delivery attempt. */
  timeoutMs: number;
  /** Delay before each attempt, in seconds, from the previous failure (the first is the first attempt). */
  retryScheduleS: { live: number[]; test: number[] };
  /** Each delay is spread by ± this share (0.2 = ±20 %). */
  retryJitterRatio: number;
  /** An endpoint that has failed without a single success for this long is disabled. */
  disableAfterFailingS: number;
  /** How long a claimed delivery stays with its worker before another may take it (worker died). */
  leaseMs: number;
  /** Pause of an idle delivery loop before it looks for new events again. */
  pollIntervalMs: number;
  batchSize: number;
  /** Attempts in flight per worker process. */
  concurrency: number;
  /** Finished deliveries and attempt records older than this are deleted by the worker. */
  historyRetentionDays: number;
  /**
   * Test-mode endpoints may point at private and loopback addresses (local development) unless
   * 'deny'. Default: 'deny' when NODE_ENV=production, else 'allow'.
   */
  testModePrivateDestinations: 'allow' | 'deny';
}

const DEFAULT_RETRY_SCHEDULE_S = [0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400];

function schedule(env: NodeJS.ProcessEnv, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const list = raw.split(',').map((part) => Number(part.trim()));
  if (list.length === 0 || list.length > 50 || list.some((x) => !Number.isFinite(x) || x < 0 || x > 7 * 86400)) {
    throw new ConfigError(`${name} must be 1 to 50 comma-separated delays in seconds (0..604800), got ${JSON.stringify(raw)}`);
  }
  return list;
}

function encryptionKeys(raw: string | undefined): EncryptionKey[] | undefined {
  if (raw === undefined || raw === '') return undefined;
  try {
    return parseEncryptionKeys(raw);
  } catch (err) {
    throw new ConfigError(`ENCRYPTION_KEYS: ${(err as EncryptionError).message}`);
  }
}

function webhookConfig(env: NodeJS.ProcessEnv): WebhookConfig {
  const live = schedule(env, 'WEBHOOK_RETRY_SCHEDULE_S', DEFAULT_RETRY_SCHEDULE_S);
  const timeoutMs = int(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100);
  const leaseMs = int(env, 'WEBHOOK_LEASE_MS', timeoutMs + 30_000, 100);
  if (leaseMs <= timeoutMs) throw new ConfigError(`WEBHOOK_LEASE_MS (${leaseMs}) must be longer than WEBHOOK_TIMEOUT_MS (${timeoutMs})`);
  // A production deployment that hands out test keys must not let them reach its internal network
  // (test-helper sends answer with the response); local development and tests need loopback.
  const privateDestinations = env.WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS || (env.NODE_ENV === 'production' ? 'deny' : 'allow');
  if (privateDestinations !== 'allow' && privateDestinations !== 'deny') {
    throw new ConfigError(`WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS must be allow or deny, got ${JSON.stringify(privateDestinations)}`);
  }
  return {
    timeoutMs,
    retryScheduleS: { live, test: schedule(env, 'WEBHOOK_TEST_RETRY_SCHEDULE_S', live) },
    retryJitterRatio: int(env, 'WEBHOOK_RETRY_JITTER_PERCENT', 20) / 100,
    disableAfterFailingS: int(env, 'WEBHOOK_DISABLE_AFTER_FAILING_S', 5 * 86400, 1),
    leaseMs,
    pollIntervalMs: int(env, 'WEBHOOK_POLL_INTERVAL_MS', 20, 1),
    batchSize: int(env, 'WEBHOOK_BATCH_SIZE', 200, 1),
    concurrency: int(env, 'WEBHOOK_CONCURRENCY', 128, 1),
    historyRetentionDays: int(env, 'WEBHOOK_HISTORY_RETENTION_DAYS', 30, 1),
    testModePrivateDestinations: privateDestinations,
  };
}

/** Payments, refunds and connectors (src/domain/payments, src/connectors). */
export interface PaymentsConfig {
  /** Deadline of one connector call. Past it, a charge the processor received has an unknown outcome: the payment stays pending. */
  connectorTimeoutMs: number;
  /** Consecutive failures that open a connector's circuit, and how long it stays open before one probe is let through. */
  circuitBreaker: { failureThreshold: number; openMs: number };
  /** Pause between the worker's status checks of one pending payment or refund. */
  statusCheckIntervalMs: number;
  /** Staleness bound of the in-process routing cache: another process sees a PUT /v1/routing within it. */
  routingCacheTtlMs: number;
  /** HMAC key of card fingerprints (CARD_FINGERPRINT_KEY, base64, at least 16 bytes). Unset: a development key. */
  cardFingerprintKey: Buffer;
  usingDevelopmentFingerprintKey: boolean;
  simulator: SimulatorConfig;
  /**
   * Where every Stripe request goes, sandbox and live (STRIPE_API_BASE_URL, an http(s) URL; a fake
   * Stripe in tests). Unset: Stripe's own endpoint. Never taken from a tenant's input.
   */
  stripeApiBaseUrl: string | undefined;
  /**
   * An active mandate with no successful debit for this many days (counted from its activation or
   * its last successful debit) expires (MANDATE_DORMANCY_DAYS; default 1095, the 36 months after
   * which a SEPA Core mandate lapses).
   */
  mandateDormancyDays: number;
  /**
   * Fault injection for the crash-safety tests: SIGKILL the process right after this point of a
   * payment or refund. Never set it in production.
   */
  crashAfter: CrashPoint | undefined;
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

export const CRASH_POINTS = ['payment_created', 'payment_connector_answered', 'refund_created', 'mandate_created'] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

/** Printed in this file, so it protects nothing: production sets CARD_FINGERPRINT_KEY. */
const DEVELOPMENT_FINGERPRINT_KEY = Buffer.from('payment-orchestrator development card fingerprint key, NOT SECRET');
export const DEVELOPMENT_SIMULATOR_SECRET = 'simsec_development_not_secret';

function paymentsConfig(env: NodeJS.ProcessEnv): PaymentsConfig {
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
    mandateDormancyDays: int(env, 'MANDATE_DORMANCY_DAYS', 1095, 1),
    crashAfter: crash as CrashPoint | undefined,
  };
}

export class ConfigError extends Error {}

function baseUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  // An origin and nothing else: a path, query, fragment or user info would be silently dropped.
  if (!url || !['http:', 'https:'].includes(url.protocol) || raw.replace(/\/$/, '') !== url.origin) {
    throw new ConfigError(`${name} must be an http(s) origin (scheme, host, port) without a path, got ${JSON.stringify(raw)}`);
  }
  return url.origin;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  const value = Number(raw);
  if (value < min) throw new ConfigError(`${name} must be at least ${min}, got ${value}`);
  return value;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(raw)}`);
  return raw === 'true';
}

/** An http(s) origin with an optional path, no query or fragment; kept without its trailing slash. */
function publicBaseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`PUBLIC_BASE_URL must be an absolute http(s) URL, got ${JSON.stringify(raw)}`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`PUBLIC_BASE_URL must be an http(s) URL without credentials, query or fragment, got ${JSON.stringify(raw)}`);
  }
  return url.toString().replace(/\/+$/, '');
}

function roles(raw: string | undefined): Role[] {
  const list = (raw ?? 'api,worker').split(',').map((r) => r.trim()).filter(Boolean);
  for (const role of list) {
    if (role !== 'api' && role !== 'worker') throw new ConfigError(`ROLES may contain api and worker, got ${JSON.stringify(role)}`);
  }
  if (list.length === 0) throw new ConfigError('ROLES must name at least one role');
  return list as Role[];
}

/**
 * A request stalled past its key's lock keeps calling its route's connectors; a retry that takes
 * the key over resumes the payment and may charge while the stalled request's fallback call books
 * the same payment at another connector. The lock must therefore outlast the longest route with as
 * much again to spare for the first phase and pauses of the process: at least the two built-in
 * connectors of the default test route, and routing rules are held to maxRouteLength.
 */
function checkLockOutlastsRoute(lockTimeoutS: number, payments: PaymentsConfig): void {
  const routeMs = SIMULATED_PROCESSORS.length * payments.connectorTimeoutMs;
  if (maxRouteLength(lockTimeoutS, payments.connectorTimeoutMs) < SIMULATED_PROCESSORS.length) {
    throw new ConfigError(
      `IDEMPOTENCY_LOCK_TIMEOUT_S (${lockTimeoutS}) must be more than twice the longest route's connector time ` +
        `(${SIMULATED_PROCESSORS.length} connectors × CONNECTOR_TIMEOUT_MS ${payments.connectorTimeoutMs} = ${routeMs} ms), ` +
        `so that a retry taking over a stalled request's key cannot charge while that request's connector calls are still running; ` +
        `raise it above ${Math.floor((2 * routeMs) / 1000)} or lower CONNECTOR_TIMEOUT_MS`,
    );
  }
}

/**
 * The most connectors one route may list so that, twice over, their calls fit within the
 * idempotency lock (checkLockOutlastsRoute): a routing rule naming connector accounts may list no
 * more, and default routes are cut to it. With the defaults (60 s, 10 s) that is 2.
 */
export function maxRouteLength(lockTimeoutS: number, connectorTimeoutMs: number): number {
  return Math.max(1, Math.ceil((lockTimeoutS * 1000) / (2 * connectorTimeoutMs)) - 1);
}

/** The grace is counted from the signal, so the delay before the listener closes is spent from it. */
function shutdownTimes(env: NodeJS.ProcessEnv): Pick<Config, 'shutdownDelayMs' | 'shutdownGraceMs'> {
  const shutdownDelayMs = int(env, 'SHUTDOWN_DELAY_MS', 0);
  const shutdownGraceMs = int(env, 'SHUTDOWN_GRACE_MS', 25_000);
  if (shutdownDelayMs >= shutdownGraceMs && shutdownDelayMs > 0) {
    throw new ConfigError(`SHUTDOWN_DELAY_MS (${shutdownDelayMs}) must be shorter than SHUTDOWN_GRACE_MS (${shutdownGraceMs}), which counts from the signal too`);
  }
  return { shutdownDelayMs, shutdownGraceMs };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const idempotencyLockTimeoutS = int(env, 'IDEMPOTENCY_LOCK_TIMEOUT_S', 60, 1);
  const payments = paymentsConfig(env);
  checkLockOutlastsRoute(idempotencyLockTimeoutS, payments);
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.DATA_DIR || './data',
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 20, 1),
    databaseConnectTimeoutMs: int(env, 'DATABASE_CONNECT_TIMEOUT_MS', 5000, 100),
    ...shutdownTimes(env),
    host: env.HOST || '127.0.0.1',
    port: int(env, 'PORT', 3000),
    metrics: { host: env.METRICS_HOST || '127.0.0.1', port: int(env, 'METRICS_PORT', 9464) },
    publicBaseUrl: publicBaseUrl(env.PUBLIC_BASE_URL),
    roles: roles(env.ROLES),
    logLevel: env.LOG_LEVEL || 'info',
    redisUrl: env.REDIS_URL || undefined,
    rateLimit: {
      live: { perSecond: int(env, 'RATE_LIMIT_LIVE_PER_S', 100, 1), burst: int(env, 'RATE_LIMIT_LIVE_BURST', 200, 1) },
      test: { perSecond: int(env, 'RATE_LIMIT_TEST_PER_S', 25, 1), burst: int(env, 'RATE_LIMIT_TEST_BURST', 50, 1) },
    },
    idempotencyRetentionS: int(env, 'IDEMPOTENCY_RETENTION_S', 24 * 3600, 1),
    idempotencyLockTimeoutS,
    apiKeyCacheTtlMs: int(env, 'API_KEY_CACHE_TTL_MS', 5000),
    workerIntervalMs: int(env, 'WORKER_INTERVAL_MS', 1000, 10),
    bodyLimitBytes: 1024 * 1024,
    encryptionKeys: encryptionKeys(env.ENCRYPTION_KEYS) ?? [DEVELOPMENT_KEY],
    usingDevelopmentEncryptionKey: !env.ENCRYPTION_KEYS,
    webhooks: webhookConfig(env),
    payments,
    payouts: {
      submitOnCreate: bool(env, 'PAYOUT_SUBMIT_ON_CREATE', true),
      batchSize: int(env, 'PAYOUT_BATCH_SIZE', 50, 1),
    },
  };
}
