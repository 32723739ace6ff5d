// Webhook delivery settings (src/domain/webhooks/delivery).
import { ConfigError, int } from './parse.js';

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

export function webhookConfig(env: NodeJS.ProcessEnv): WebhookConfig {
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

