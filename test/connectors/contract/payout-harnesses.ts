// Every payout processor the payout contract (payouts.ts) runs over: the simulated processor
// simulator_a (its own HTTP server behind a fault proxy, as for cards) and Adyen (a connector
// account's payout credentials against the fake Transfers API, test/support/fakes/adyen-transfers.ts,
// reached through ADYEN_PAYOUT_BASE_URL), and Adyen's real balance platform for the smoke run.
// Where Adyen differs: it answers every payout `received` (in transit; any beneficiary account
// does), reports by balance platform webhooks acknowledged `[accepted]`, and signs no timestamp (no
// stale case: a replay is caught by its event id).
import crypto from 'node:crypto';
import { DEVELOPMENT_SIMULATOR_SECRET } from '../../../src/config.js';
import { createHttpClient, type HttpClient } from '../../../src/connectors/http.js';
import { createSimulatorConnector, httpTransport } from '../../../src/connectors/simulator/connector.js';
import { startSimulatorServer, type SimulatorServer } from '../../../src/connectors/simulator/server.js';
import { createConnectorAccount, simulatorWebhookHeaders } from '../../support/connectors.js';
import { FakeAdyenTransfers } from '../../support/fakes/adyen-transfers.js';
import { FaultProxy } from '../../support/fakes/fault-proxy.js';
import { fakeFaults, type Connected } from './harness.js';
import type { PayoutCapability, PayoutHarness, PayoutOutcome } from './payouts.js';

const SIM = 'simulator_a';
const SIM_STATE_OF = { paid: 'PAID', failed: 'REJECTED', returned: 'RETURNED' } as const;

export function simulatorPayoutHarness(): PayoutHarness {
  let server: SimulatorServer;
  let proxy: FaultProxy;
  let http: HttpClient;
  const processor = () => server.host.processors.get(SIM)!;
  const connector = (name: string, url: string) => createSimulatorConnector({ name, transport: httpTransport(url, http), familySecret: DEVELOPMENT_SIMULATOR_SECRET });
  return {
    name: SIM,
    capabilities: new Set<PayoutCapability>(['faults', 'books', 'settle', 'webhooks', 'processes']),
    // In transit until the bank answers (the simulators' pending account).
    account: { ending: '0003', format: 'iban' },
    async start() {
      server = await startSimulatorServer({ familySecret: DEVELOPMENT_SIMULATOR_SECRET, pendingDelayMs: 600_000 });
      proxy = await new FaultProxy(server.url, `/${SIM}/`, { status: 500, body: { error: { code: 'INTERNAL_ERROR', detail: 'could not process the request; nothing was paid' } } }).start();
      http = createHttpClient();
    },
    async close() {
      http?.close();
      await proxy?.close();
      await server?.close();
    },
    service: () => ({ runtime: { connectors: [connector(SIM, proxy.url), connector('simulator_b', server.url)] } }),
    processEnv: () => ({ SIMULATOR_URL: proxy.url }),
    connect: async (_api, serviceUrl) => ({ route: { name: SIM }, connector: SIM, webhookUrl: `${serviceUrl}/v1/connectors/${SIM}/webhooks` }),
    books: {
      held: async (id) => ((await processor().payouts.has(id)) ? 1 : 0),
      requests: async (id) => processor().payouts.requests.get(id) ?? 0,
    },
    faults: {
      refuseNext: () => proxy.inject('refuse'),
      serverErrorAfterNext: () => proxy.inject('server_error_after'),
      hangAfterNext: () => proxy.inject('hang_after'),
      refuseConnections: () => proxy.refuseConnections(),
    },
    async settle(payout, outcome: PayoutOutcome) {
      const answer = await server.host.dispatch('POST', `/${SIM}/payouts/${payout.id}/resolve`, { state: SIM_STATE_OF[outcome] });
      if (answer.status !== 200) throw new Error(`${SIM} could not settle ${payout.id}: ${JSON.stringify(answer.body)}`);
    },
    async webhook(_connected, payout, signing) {
      const held = await processor().payouts.get(payout.id);
      const body = JSON.stringify({ event_id: `evt_${payout.id}_${held!.state}`, event_type: 'payout.state_changed', occurred_at: new Date().toISOString(), payout: held });
      const opts = signing === 'wrong_secret' ? { secretOf: 'simulator_b' } : signing === 'stale' ? { timestampS: Math.floor(Date.now() / 1000) - 600 } : {};
      return { body, headers: simulatorWebhookHeaders(SIM, body, opts) };
    },
  };
}

const PAYOUT_HMAC = '6e'.repeat(32);
const OTHER_HMAC = '9a'.repeat(32);
const TRANSFER_OF = { paid: 'booked', failed: 'failed', returned: 'returned' } as const;

async function connectAdyen(api: Parameters<PayoutHarness['connect']>[0], credentials: Record<string, string>): Promise<Connected> {
  const account = await createConnectorAccount(api, 'adyen', `payouts-adyen-${crypto.randomBytes(3).toString('hex')}`, credentials);
  return { route: { name: account.name }, connector: account.id, webhookUrl: account.webhook_url };
}

export function adyenPayoutHarness(): PayoutHarness {
  const fake = new FakeAdyenTransfers();
  const transfer = (id: string) => fake.held(id)[0]!;
  return {
    name: 'adyen payouts',
    capabilities: new Set<PayoutCapability>(['faults', 'books', 'settle', 'webhooks', 'processes']),
    account: { ending: '0000', format: 'iban' },
    start: async () => void (await fake.start()),
    close: () => fake.close(),
    service: () => ({ settings: { adyenPayoutBaseUrl: fake.url } }),
    processEnv: () => ({ ADYEN_PAYOUT_BASE_URL: fake.url }),
    connect: (api) =>
      connectAdyen(api, {
        api_key: `AQE_contract_${'k'.repeat(16)}`,
        merchant_account: 'ContractECOM',
        payout_api_key: `AQE_payouts_${'p'.repeat(16)}`,
        balance_account_id: 'BA32272223222B5CTDQPM6W2H',
        payout_hmac_key: PAYOUT_HMAC,
      }),
    books: { held: async (id) => fake.held(id).length, requests: async (id) => fake.sent(id) },
    faults: fakeFaults(fake),
    async settle(payout, outcome) {
      fake.settle(transfer(payout.id).id, TRANSFER_OF[outcome]);
    },
    async webhook(_connected, payout, signing) {
      if (signing === 'stale') return undefined;
      return fake.webhook(transfer(payout.id), signing === 'wrong_secret' ? OTHER_HMAC : PAYOUT_HMAC);
    },
    webhookAcknowledgement: '[accepted]',
  };
}

/**
 * Adyen's balance platform test environment (or ADYEN_PAYOUT_BASE_URL), with ADYEN_API_KEY and
 * ADYEN_MERCHANT_ACCOUNT (the account's required card credentials), ADYEN_PAYOUT_API_KEY and
 * ADYEN_BALANCE_ACCOUNT_ID: no faults, no books, no webhooks this run can receive.
 */
export function adyenPayoutSandbox(): PayoutHarness {
  return {
    name: 'adyen payouts (sandbox)',
    capabilities: new Set<PayoutCapability>(),
    account: { ending: '0000', format: 'iban' },
    start: async () => undefined,
    close: async () => undefined,
    service: () => ({ settings: { adyenPayoutBaseUrl: process.env.ADYEN_PAYOUT_BASE_URL || undefined } }),
    processEnv: () => ({}),
    connect: (api) =>
      connectAdyen(api, {
        api_key: process.env.ADYEN_API_KEY!,
        merchant_account: process.env.ADYEN_MERCHANT_ACCOUNT!,
        payout_api_key: process.env.ADYEN_PAYOUT_API_KEY!,
        balance_account_id: process.env.ADYEN_BALANCE_ACCOUNT_ID!,
      }),
  };
}

export const PAYOUT_HARNESSES: readonly (() => PayoutHarness)[] = [simulatorPayoutHarness, adyenPayoutHarness];
