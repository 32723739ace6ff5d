// The one runtime object of a process: clock and randomness, the connectors with their circuit
// breaker, the routing cache, the sealing keys and the money-movement settings. Built once at
// start (src/service.ts) and passed down to the api and worker roles alike; tests build their own
// with a fake clock or their own connectors.
import type { Config, CrashPoint, PaymentsConfig, PayoutsConfig } from './config.js';
import { createConnectors, type ConnectorOptions, type Connectors } from './connectors/registry.js';
import type { CallDeps, Owner } from './connectors/router.js';
import { createEncryptor, type Encryptor } from './kernel/encryption.js';
import { createMetrics, type Metrics } from './metrics/registry.js';
import { connectorAccountSource } from './connectors/account-credentials.js';
import type { RoutingCacheEntry, RoutingStatsEntry } from './storage/routing-rules.js';
import { createVault, type Vault } from './vault/vault.js';

export interface Runtime {
  /** Payments, refunds, mandates and the connectors' settings. */
  config: PaymentsConfig;
  payouts: PayoutsConfig;
  connectors: Connectors;
  /** Calls to built-in connectors only; use callsFor for a movement's route, which may name connector accounts. */
  call: CallDeps;
  /** Calls on behalf of one account and mode: its connector accounts resolve, nobody else's. */
  callsFor(owner: Owner): CallDeps;
  now: () => Date;
  random: () => number;
  /**
   * Whether the routes that have a one-statement path (order and card payment creates) defer their
   * Idempotency-Key's claim to it (src/http/idempotency.ts). Off, the hook claims every key first
   * and every request takes the general path: test/engine/one-statement.differential.test.ts runs the same
   * requests both ways and compares what they leave.
   */
  oneStatementPaths: boolean;
  /** The idempotency lock timeout: until then a crashed request's retry may resume its movement. */
  idempotencyLockTimeoutS: number;
  routingCache: Map<string, RoutingCacheEntry>;
  /** The window's outcomes per account and mode, read for success_rate routing (src/domain/routing/stats.ts). */
  routingStats: Map<string, RoutingStatsEntry>;
  /** Base of the URLs handed out (webhook_url): PUBLIC_BASE_URL, else where the API listens. */
  publicUrl(): string;
  /** Once the API listens: its address, for the simulator's webhooks and the default public URL. */
  setServiceUrl(url: string): void;
  /** Seals and opens secrets at rest (webhook secrets, IBANs and account numbers): ENCRYPTION_KEYS. */
  encryptor: Encryptor;
  /** The card vault (VAULT_KEYS): the only way card numbers are kept and read back (docs/vault.md). */
  vault: Vault;
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
  /** False: every request takes the general path (for the differential test of the two); default true. */
  oneStatementPaths?: boolean;
}

export type RuntimeConfig = Pick<Config, 'payments' | 'payouts' | 'encryptionKeys' | 'vaultKeys' | 'idempotencyLockTimeoutS' | 'publicBaseUrl' | 'host' | 'port'>;

export function createRuntime(config: RuntimeConfig, opts: RuntimeOptions = {}): Runtime {
  const now = opts.now ?? (() => new Date());
  const payments = config.payments;
  const encryptor = createEncryptor(config.encryptionKeys);
  const metrics = opts.metrics ?? createMetrics();
  const accountSource = opts.db && connectorAccountSource(opts.db, encryptor);
  let listening = `http://${config.host}:${config.port}`;
  const publicUrl = () => config.publicBaseUrl ?? listening;
  const connectors = createConnectors(payments, { nowMs: opts.nowMs ?? (() => now().getTime()), accountSource, publicUrl, ...opts });
  const call: CallDeps = {
    registry: connectors.registry,
    accounts: { resolve: (key, owner) => connectors.resolveAccount(key, owner) },
    breaker: connectors.breaker,
    timeoutMs: payments.connectorTimeoutMs,
    now,
    metrics,
  };
  metrics.watchCircuits(() => connectors.registry.names().map((name) => [name, connectors.breaker.state(name)]));
  return {
    config: payments,
    payouts: config.payouts,
    connectors,
    call,
    callsFor: (owner) => ({ ...call, owner: { accountId: owner.accountId, livemode: owner.livemode } }),
    now,
    random: opts.random ?? Math.random,
    oneStatementPaths: opts.oneStatementPaths ?? true,
    idempotencyLockTimeoutS: config.idempotencyLockTimeoutS,
    routingCache: new Map(),
    routingStats: new Map(),
    publicUrl,
    setServiceUrl(url) {
      listening = url;
      connectors.setServiceUrl(url);
    },
    encryptor,
    vault: createVault(config.vaultKeys),
    fingerprintKey: payments.cardFingerprintKey,
    metrics,
    crashPoint(point) {
      if (payments.crashAfter === point) process.kill(process.pid, 'SIGKILL');
    },
    close: () => connectors.close(),
  };
}
