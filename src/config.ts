// Every setting the service reads, from the environment, validated once at start-up so a typo
// fails loudly before the first request instead of surfacing as odd behaviour later.
import { DEVELOPMENT_KEY, DEVELOPMENT_VAULT_KEY, EncryptionError, parseEncryptionKeys, type EncryptionKey } from './kernel/encryption.js';
import { SIMULATED_PROCESSORS } from './connectors/simulator/profiles.js';
import { bool, ConfigError, int, oneOf, requireInProduction } from './config/parse.js';
import { PREPARED_STATEMENTS, type PreparedStatements } from './storage/db.js';
import { paymentsConfig, type PaymentsConfig } from './config/payments.js';
import { webhookConfig, type WebhookConfig } from './config/webhooks.js';

export { ConfigError } from './config/parse.js';
export type { CrashPoint, PaymentsConfig, SimulatorConfig } from './config/payments.js';
export { CRASH_POINTS, DEVELOPMENT_SIMULATOR_SECRET } from './config/payments.js';
export type { WebhookConfig } from './config/webhooks.js';

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
  /** `named` directly on PostgreSQL; `unnamed` behind a transaction pooler (src/storage/db.ts). */
  databasePreparedStatements: PreparedStatements;
  /** A streaming replica that lists may read from (src/storage/read-replica.ts); ignored on the embedded database. */
  databaseReadUrl: string | undefined;
  /** How far behind the replica may be before its reads go to the primary. */
  databaseReadMaxLagMs: number;
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
  /** Days an applied processor event's id is kept to recognise a redelivery (src/movement/inbound.ts). */
  inboundEventRetentionDays: number;
  /** How long an in-flight idempotency lock is honoured before another request may take it over. */
  idempotencyLockTimeoutS: number;
  /** Upper bound on how stale a cached API-key lookup may be (revocation takes effect within it). */
  apiKeyCacheTtlMs: number;
  workerIntervalMs: number;
  bodyLimitBytes: number;
  /**
   * The longest a request body may go without a byte arriving before the request is answered
   * `408 request_timeout` and its connection closed (REQUEST_BODY_TIMEOUT_MS). A bound on silence,
   * not on the whole body: a large body arriving steadily over a slow link is never cut.
   */
  requestBodyTimeoutMs: number;
  /**
   * The slowest a request body may arrive, in bytes per second over each REQUEST_BODY_TIMEOUT_MS
   * window (REQUEST_BODY_MIN_RATE), so a trickle that never falls silent is answered the same way;
   * a body complete within one window is never held to it. 0: no rate rule.
   */
  requestBodyMinRate: number;
  /** Keys for encryption at rest; the first seals. Unset: the development key (not for production). */
  encryptionKeys: EncryptionKey[];
  usingDevelopmentEncryptionKey: boolean;
  /**
   * Key-encryption keys of the card vault (src/vault, docs/vault.md): the first wraps new data keys,
   * all unwrap. Unset: a development key, refused when NODE_ENV=production.
   */
  vaultKeys: EncryptionKey[];
  usingDevelopmentVaultKey: boolean;
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

/** A key list setting (`id:base64key,…`, ENCRYPTION_KEYS or VAULT_KEYS); unset: undefined. */
function keyList(env: NodeJS.ProcessEnv, name: string): EncryptionKey[] | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    return parseEncryptionKeys(raw);
  } catch (err) {
    throw new ConfigError(`${name}: ${(err as EncryptionError).message}`);
  }
}

function vaultKeys(env: NodeJS.ProcessEnv): Pick<Config, 'vaultKeys' | 'usingDevelopmentVaultKey'> {
  requireInProduction(env, 'VAULT_KEYS', 'the card vault wraps its data keys with it, and the development key is public (docs/vault.md)');
  const keys = keyList(env, 'VAULT_KEYS');
  return { vaultKeys: keys ?? [DEVELOPMENT_VAULT_KEY], usingDevelopmentVaultKey: !keys };
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
    databasePreparedStatements: oneOf(env, 'DATABASE_PREPARED_STATEMENTS', PREPARED_STATEMENTS, 'named'),
    databaseReadUrl: env.DATABASE_READ_URL || undefined,
    databaseReadMaxLagMs: int(env, 'DATABASE_READ_MAX_LAG_MS', 5000, 0),
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
    inboundEventRetentionDays: int(env, 'INBOUND_EVENT_RETENTION_DAYS', 90, 1),
    idempotencyLockTimeoutS,
    apiKeyCacheTtlMs: int(env, 'API_KEY_CACHE_TTL_MS', 5000),
    workerIntervalMs: int(env, 'WORKER_INTERVAL_MS', 1000, 10),
    bodyLimitBytes: 1024 * 1024,
    requestBodyTimeoutMs: int(env, 'REQUEST_BODY_TIMEOUT_MS', 10_000, 100),
    requestBodyMinRate: int(env, 'REQUEST_BODY_MIN_RATE', 1024, 0),
    encryptionKeys: keyList(env, 'ENCRYPTION_KEYS') ?? [DEVELOPMENT_KEY],
    usingDevelopmentEncryptionKey: !env.ENCRYPTION_KEYS,
    ...vaultKeys(env),
    webhooks: webhookConfig(env),
    payments,
    payouts: {
      submitOnCreate: bool(env, 'PAYOUT_SUBMIT_ON_CREATE', true),
      batchSize: int(env, 'PAYOUT_BATCH_SIZE', 50, 1),
    },
  };
}
