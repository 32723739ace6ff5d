// The connectors a process can use, built once from configuration: the simulated processors (in
// process, or over HTTP when SIMULATOR_URL names a simulator server), the circuit breaker they
// share, and the HTTP client of the core. Tests may pass their own connectors and clock.
//
// Connector accounts (ca_…) are not built here but at call time, from their credentials: each
// processor of the catalogue that this version can reach has a factory, by its catalogue name,
// that turns one account's opened credentials into a Connector. A real processor plugs in by
// adding its factory to `factories` below (with its base URL from configuration, never from the
// account); the simulators' factory hands out the built-in instance, which needs no credentials.
import type { PaymentsConfig } from '../config.js';
import type { Db } from '../storage/db.js';
import { CircuitBreaker } from '../kernel/circuit-breaker.js';
import { createHttpClient } from './http.js';
import type { ConnectorRegistry, Owner } from './router.js';
import { hasTestControls, type TestControls } from './test-controls.js';
import type { Connector } from './types.js';
import { createSimulatorConnector, httpTransport, inProcessTransport } from './simulator/connector.js';
import { SIMULATED_PROCESSORS, SimulatorHost, type SimulatorClock } from './simulator/processor.js';
import { sqlStore } from './simulator/sql-store.js';
import { createStripeConnector } from './stripe/connector.js';
import { createAdyenConnector } from './adyen/connector.js';
import { createGoCardlessConnector } from './gocardless/connector.js';

/** One connector account as its connector is built from it: credentials opened, in memory only. */
export interface ConnectorAccountCredentials {
  /** Its public id (ca_…), also its route key. */
  id: string;
  /** The catalogue's name of its processor. */
  connector: string;
  livemode: boolean;
  credentials: Record<string, string>;
  /** The webhook secrets that verify now, newest first: the current one and, in its grace period, the previous one. */
  webhookSecrets: string[];
}

export type ConnectorFactory = (account: ConnectorAccountCredentials) => Connector;

/** Where the credentials of a connector account come from (account-credentials.ts). */
export type ConnectorAccountSource = (key: string, owner: Owner) => Promise<ConnectorAccountCredentials | undefined>;

export interface Connectors {
  registry: ConnectorRegistry;
  /** Whether this version can send requests to the catalogue's processor `name` (connector accounts of it are routable). */
  implemented(name: string): boolean;
  /** The connector of a connector account, built from its credentials; undefined when it is not this owner's or not implemented. */
  resolveAccount(key: string, owner: Owner): Promise<Connector | undefined>;
  breaker: CircuitBreaker;
  /** The in-process simulated processors (absent when they run as their own server). */
  simulator: SimulatorHost | undefined;
  /** The test controls of a connector that has them (the built-in simulated processors); undefined for any other. */
  testControlsOf(connector: Connector): TestControls | undefined;
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
  /** The service's public base URL (PUBLIC_BASE_URL), base of the pages it serves for the simulated processors. */
  publicUrl?: () => string;
  /** Opens connector accounts' credentials; without it no connector account can be called. */
  accountSource?: ConnectorAccountSource;
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
    SIMULATED_PROCESSORS.map((profile) =>
      createSimulatorConnector({ name: profile.name, transport, familySecret: sim.webhookSecret, pageBaseUrl: opts.publicUrl }),
    );
  const byName = new Map(list.map((c) => [c.name, c]));
  const controls = new Map<string, Connector & TestControls>(list.filter(hasTestControls).map((c) => [c.name, c]));
  const factories = new Map<string, ConnectorFactory>(list.map((c) => [c.name, () => c]));
  // What every processor account's connector is built from besides its own credentials and endpoint.
  const common = (account: Parameters<ConnectorFactory>[0]) => ({ webhookSecrets: account.webhookSecrets, livemode: account.livemode });
  factories.set('stripe', (account) =>
    createStripeConnector({ ...common(account), secretKey: account.credentials.secret_key ?? '', apiBaseUrl: config.stripeApiBaseUrl }),
  );
  factories.set('adyen', (account) => {
    const { payout_api_key: payoutKey, balance_account_id: balanceAccountId, payout_hmac_key: payoutHmacKey } = account.credentials;
    return createAdyenConnector({
      apiKey: account.credentials.api_key ?? '',
      merchantAccount: account.credentials.merchant_account ?? '',
      hmacKeys: account.webhookSecrets,
      livemode: account.livemode,
      liveUrlPrefix: account.credentials.live_url_prefix,
      checkoutBaseUrl: config.adyenCheckoutBaseUrl,
      disputeBaseUrl: config.adyenDisputeBaseUrl,
      publicUrl: opts.publicUrl ?? (() => 'http://localhost'),
      http,
      payouts:
        payoutKey && balanceAccountId
          ? { apiKey: payoutKey, balanceAccountId, hmacKeys: payoutHmacKey ? [payoutHmacKey] : account.webhookSecrets, payoutBaseUrl: config.adyenPayoutBaseUrl }
          : undefined,
    });
  });
  factories.set('gocardless', (account) =>
    createGoCardlessConnector({ ...common(account), accessToken: account.credentials.access_token ?? '', apiBaseUrl: config.gocardlessApiBaseUrl, http }),
  );
  return {
    registry: { get: (name) => byName.get(name), names: () => [...byName.keys()] },
    implemented: (name) => factories.has(name),
    async resolveAccount(key, owner) {
      const account = await opts.accountSource?.(key, owner);
      return account && factories.get(account.connector)?.(account);
    },
    breaker: new CircuitBreaker({ ...config.circuitBreaker, now: opts.nowMs }),
    simulator,
    testControlsOf: (connector) => {
      const own = controls.get(connector.name);
      return own === connector ? own : undefined;
    },
    setServiceUrl(url) {
      if (simulator && !sim.webhookUrl) simulator.setWebhookBaseUrl(url);
    },
    close() {
      simulator?.close();
      http.close();
    },
  };
}
