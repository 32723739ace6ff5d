// The connectors a process can use, built once from configuration: the simulated processors (in
// process, or over HTTP when SIMULATOR_URL names a simulator server), the circuit breaker they
// share, and the HTTP client of the core. Tests may pass their own connectors and clock.
import type { PaymentsConfig } from '../config.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { createHttpClient } from './http.js';
import type { ConnectorRegistry } from './router.js';
import type { Connector } from './types.js';
import { createSimulatorConnector, httpTransport, inProcessTransport } from './simulator/connector.js';
import { SIMULATED_PROCESSORS, SimulatorHost, type SimulatorClock } from './simulator/processor.js';

export interface Connectors {
  registry: ConnectorRegistry;
  breaker: CircuitBreaker;
  /** The in-process simulated processors (absent when they run as their own server). */
  simulator: SimulatorHost | undefined;
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
      });
  const transport = simulator ? inProcessTransport(simulator) : httpTransport(sim.url!, http);
  const list =
    opts.connectors ??
    SIMULATED_PROCESSORS.map((profile) => createSimulatorConnector({ name: profile.name, transport, familySecret: sim.webhookSecret }));
  const byName = new Map(list.map((c) => [c.name, c]));
  return {
    registry: { get: (name) => byName.get(name), names: () => [...byName.keys()] },
    breaker: new CircuitBreaker({ ...config.circuitBreaker, now: opts.nowMs }),
    simulator,
    setServiceUrl(url) {
      if (simulator && !sim.webhookUrl) simulator.setWebhookBaseUrl(url);
    },
    close() {
      simulator?.close();
      http.close();
    },
  };
}
