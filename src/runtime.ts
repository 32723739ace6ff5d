// The one runtime object of a process: clock and randomness, the connectors with their circuit
// breaker, the routing cache, the sealing keys and the money-movement settings. Built once at
// start (src/service.ts) and passed down to the api and worker roles alike; tests build their own
// with a fake clock or their own connectors.
import type { Config, CrashPoint, PaymentsConfig, PayoutsConfig } from './config.js';
import { createConnectors, type ConnectorOptions, type Connectors } from './connectors/registry.js';
import type { CallDeps, RoutingRule } from './connectors/router.js';
import { createEncryptor, type Encryptor } from './lib/encryption.js';
import { createMetrics, type Metrics } from './metrics/registry.js';

export interface Runtime {
  /** Payments, refunds, mandates and the connectors' settings. */
  config: PaymentsConfig;
  payouts: PayoutsConfig;
  connectors: Connectors;
  call: CallDeps;
  now: () => Date;
  random: () => number;
  /** The idempotency lock timeout: until then a crashed request's retry may resume its movement. */
  idempotencyLockTimeoutS: number;
  routingCache: Map<string, { rules: RoutingRule[] | undefined; version: number; updatedAt: Date | null; fetchedAtMs: number }>;
  /** Seals and opens secrets at rest (webhook secrets, IBANs and account numbers): ENCRYPTION_KEYS. */
  encryptor: Encryptor;
  /** HMAC key of card and bank account fingerprints (CARD_FINGERPRINT_KEY), derived per merchant account. */
  fingerprintKey: Buffer;
  /** This process's metrics (its own registry: several runtimes may share a test process). */
  metrics: Metrics;
  /** Fault injection (CRASH_AFTER): dies on the spot, as a power cut would, at the named point. */
  crashPoint(point: CrashPoint): void;
  close(): void;
}

export interface RuntimeOptions extends ConnectorOptions {
  now?: () => Date;
  random?: () => number;
  metrics?: Metrics;
}

export type RuntimeConfig = Pick<Config, 'payments' | 'payouts' | 'encryptionKeys' | 'idempotencyLockTimeoutS'>;

export function createRuntime(config: RuntimeConfig, opts: RuntimeOptions = {}): Runtime {
  const now = opts.now ?? (() => new Date());
  const payments = config.payments;
  const connectors = createConnectors(payments, { nowMs: opts.nowMs ?? (() => now().getTime()), ...opts });
  const metrics = opts.metrics ?? createMetrics();
  metrics.watchCircuits(() => connectors.registry.names().map((name) => [name, connectors.breaker.state(name)]));
  return {
    config: payments,
    payouts: config.payouts,
    connectors,
    call: { registry: connectors.registry, breaker: connectors.breaker, timeoutMs: payments.connectorTimeoutMs, now, metrics },
    now,
    random: opts.random ?? Math.random,
    idempotencyLockTimeoutS: config.idempotencyLockTimeoutS,
    routingCache: new Map(),
    encryptor: createEncryptor(config.encryptionKeys),
    fingerprintKey: payments.cardFingerprintKey,
    metrics,
    crashPoint(point) {
      if (payments.crashAfter === point) process.kill(process.pid, 'SIGKILL');
    },
    close: () => connectors.close(),
  };
}
