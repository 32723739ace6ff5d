// What payments, refunds and inbound processor webhooks need besides the database: the connectors
// and their circuit breaker, the routing cache, settings, and an injectable clock and randomness.
// Built once per process (src/service.ts) and shared by the api and worker roles.
import type { CrashPoint, PaymentsConfig } from '../../config.js';
import { createConnectors, type ConnectorOptions, type Connectors } from '../../connectors/registry.js';
import type { CallDeps, RoutingRule } from '../../connectors/router.js';

export interface PaymentsRuntime {
  config: PaymentsConfig;
  connectors: Connectors;
  call: CallDeps;
  now: () => Date;
  random: () => number;
  /** The idempotency lock timeout: until then a crashed request's retry may resume its payment. */
  idempotencyLockTimeoutS: number;
  routingCache: Map<string, { rules: RoutingRule[] | undefined; version: number; updatedAt: Date | null; fetchedAtMs: number }>;
  /** Fault injection (CRASH_AFTER): dies on the spot, as a power cut would, at the named point. */
  crashPoint(point: CrashPoint): void;
  close(): void;
}

export interface PaymentsRuntimeOptions extends ConnectorOptions {
  now?: () => Date;
  random?: () => number;
  idempotencyLockTimeoutS?: number;
}

export function createPaymentsRuntime(config: PaymentsConfig, opts: PaymentsRuntimeOptions = {}): PaymentsRuntime {
  const now = opts.now ?? (() => new Date());
  const connectors = createConnectors(config, { nowMs: opts.nowMs ?? (() => now().getTime()), ...opts });
  return {
    config,
    connectors,
    call: { registry: connectors.registry, breaker: connectors.breaker, timeoutMs: config.connectorTimeoutMs, now },
    now,
    random: opts.random ?? Math.random,
    idempotencyLockTimeoutS: opts.idempotencyLockTimeoutS ?? 60,
    routingCache: new Map(),
    crashPoint(point) {
      if (config.crashAfter === point) process.kill(process.pid, 'SIGKILL');
    },
    close: () => connectors.close(),
  };
}
