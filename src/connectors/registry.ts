// The connectors a process can use, built once from configuration: the simulated processors (in
// process, or over HTTP when SIMULATOR_URL names a simulator server), the circuit breaker they
// share, and the HTTP client of the core. Tests may pass their own connectors and clock.
import type { PaymentsConfig } from '../config.js';
import type { Db } from '../storage/db.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { createHttpClient } from './http.js';
import type { ConnectorRegistry } from './router.js';
import { hasTestControls, type TestControls } from './test-controls.js';
import type { Connector } from './types.js';
import { createSimulatorConnector, httpTransport, inProcessTransport } from './simulator/connector.js';
import { SIMULATED_PROCESSORS, SimulatorHost, type SimulatorClock } from './simulator/processor.js';
import { sqlStore } from './simulator/sql-store.js';

export interface Connectors {
  registry: ConnectorRegistry;
  breaker: CircuitBreaker;
  /** The in-process simulated processors (absent when they run as their own server). */
  simulator: SimulatorHost | undefined;
  /** The test controls of a connector that has them (the simulated processors); undefined for any other. */
  testControls(name: string): TestControls | undefined;
  /** Once the API listens: where the in-process simulator sends its webhooks, unless configured. */
  setServiceUrl(url: string): void;
  close(): void;
}

export interface ConnectorOptions {
  /** Replaces the built-in connectors (tests of connector failures). */
  connectors?: Connector[];
  /** Clock of the circuit breaker, in ms. */
  nowMs?: () => number;
  simulatorClock?: SimulatorClock;
  /**
   * The service's database, where the in-process simulated processors keep their books, so that
   * every process on it (and the same process after a restart) meets the same processors. Without
   * it they keep them in this process's memory.
   */
  db?: Db;
}

export function createConnectors(config: PaymentsConfig, opts: ConnectorOptions = {}): Connectors {
  const http = createHttpClient();
  const sim = config.simulator;
  const simulator = sim.url
    ? undefined
    : new SimulatorHost({
        familySecret: sim.webhookSecret,
        pendingDelayMs: sim.pendingDelayMs,
        latencyMs: sim.latencyMs,
        webhookBaseUrl: sim.webhookUrl,
        clock: opts.simulatorClock,
        store: opts.db && sqlStore(opts.db),
      });
  const transport = simulator ? inProcessTransport(simulator) : httpTransport(sim.url!, http);
  const list =
    opts.connectors ??
    SIMULATED_PROCESSORS.map((profile) => createSimulatorConnector({ name: profile.name, transport, familySecret: sim.webhookSecret }));
  const byName = new Map(list.map((c) => [c.name, c]));
  const controls = new Map(list.filter(hasTestControls).map((c) => [c.name, c as TestControls]));
  return {
    registry: { get: (name) => byName.get(name), names: () => [...byName.keys()] },
    breaker: new CircuitBreaker({ ...config.circuitBreaker, now: opts.nowMs }),
    simulator,
    testControls: (name) => controls.get(name),
    setServiceUrl(url) {
      if (simulator && !sim.webhookUrl) simulator.setWebhookBaseUrl(url);
    },
    close() {
      simulator?.close();
      http.close();
    },
  };
}
