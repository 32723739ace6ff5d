// The built-in simulated processor simulator_a as a contract harness: the simulators' own HTTP
// server (npm run simulator) behind a fault proxy for simulator_a's requests, the service's
// simulator_a reaching it over HTTP and simulator_b (the route's backup) reaching the server
// directly. Routing names it by its built-in name; its webhooks go to /v1/connectors/simulator_a/webhooks.
// Its direct debits: a mandate on an account ending 0003 is answered pending (test/support/mandates.ts
// ENDINGS), then moved through the simulator's control endpoint; its banks never take a confirmed
// debit back, and it sends one event a webhook.
import crypto from 'node:crypto';
import { DEVELOPMENT_SIMULATOR_SECRET } from '../../../src/config.js';
import { createHttpClient, type HttpClient } from '../../../src/connectors/http.js';
import { createSimulatorConnector, httpTransport } from '../../../src/connectors/simulator/connector.js';
import { startSimulatorServer, type SimulatorServer } from '../../../src/connectors/simulator/server.js';
import { chargeEvent, simulatorWebhookHeaders } from '../../support/connectors.js';
import { FaultProxy } from '../../support/fakes/fault-proxy.js';
import { ENDINGS } from '../../support/mandates.js';
import { answerChallenge, CHALLENGE_CARD } from '../../support/payments.actions.js';
import type { Capability, ProcessorHarness, Webhook } from './harness.js';

const NAME = 'simulator_a';
const STATE_OF = { pending: 'PENDING', succeeded: 'CAPTURED', failed: 'REFUSED' } as const;
const MANDATE_STATE_OF = { active: 'ACTIVE', failed: 'REJECTED', revoked: 'REVOKED_BY_PAYER' } as const;
const DEBIT_STATE_OF = { confirmed: 'CAPTURED', failed: 'REFUSED' } as const;

export function simulatorHarness(): ProcessorHarness {
  let server: SimulatorServer;
  let proxy: FaultProxy;
  let http: HttpClient;
  const processor = () => server.host.processors.get(NAME)!;
  /** Moves our object at the simulator through its control endpoint; the webhook it then sends (one event, as its outbox reports it). */
  async function move(kind: 'mandate' | 'charge', ourId: string, state: string): Promise<Webhook> {
    const answer = await server.host.dispatch('POST', `/${NAME}/${kind}s/${ourId}/resolve`, { state });
    const object = answer.body as { state?: string };
    if (answer.status !== 200 || object.state !== state) throw new Error(`${NAME} could not move ${kind} ${ourId} to ${state}: ${JSON.stringify(object)}`);
    const body = JSON.stringify({ event_id: `evt_${crypto.randomUUID()}`, event_type: `${kind}.state_changed`, occurred_at: new Date().toISOString(), [kind]: object });
    return { body, headers: simulatorWebhookHeaders(NAME, body) };
  }
  const connector = (name: string, url: string) => createSimulatorConnector({ name, transport: httpTransport(url, http), familySecret: DEVELOPMENT_SIMULATOR_SECRET });
  return {
    name: NAME,
    capabilities: new Set<Capability>(['faults', 'books', 'settle', 'webhooks', 'processes', 'refund_outcome', 'status_lookup', 'customer_actions', 'mandates', 'mandate_setup']),
    cards: { success: '4242424242424242', declined: '4000000000000002', insufficientFunds: '4000000000009995' },
    async start() {
      server = await startSimulatorServer({ familySecret: DEVELOPMENT_SIMULATOR_SECRET, pendingDelayMs: 600_000 });
      // The simulators' "nothing was charged" answer (the one retryable error of their protocol).
      proxy = await new FaultProxy(server.url, `/${NAME}/`, { status: 500, body: { error: { code: 'INTERNAL_ERROR', detail: 'could not process the request; nothing was charged' } } }).start();
      http = createHttpClient();
    },
    async close() {
      http?.close();
      await proxy?.close();
      await server?.close();
    },
    service: () => ({ runtime: { connectors: [connector(NAME, proxy.url), connector('simulator_b', server.url)] } }),
    processEnv: () => ({ SIMULATOR_URL: proxy.url }),
    connect: async (_api, serviceUrl) => ({ route: { name: NAME }, connector: NAME, webhookUrl: `${serviceUrl}/v1/connectors/${NAME}/webhooks` }),
    pendingCard: () => '4000000000000077',
    books: {
      chargesHeld: async (id) => ((await processor().charges.has(id)) ? 1 : 0),
      chargeRequests: async (id) => processor().chargeRequests.get(id) ?? 0,
      refunded: async (id) => (await processor().charges.get(id))?.refunded_minor ?? 0,
      async authorisation(id) {
        const charge = await processor().charges.get(id);
        return { captured: charge?.captured_minor ?? 0, voided: charge?.state === 'VOIDED' };
      },
    },
    faults: {
      refuseNext: () => proxy.inject('refuse'),
      serverErrorAfterNext: () => proxy.inject('server_error_after'),
      hangAfterNext: () => proxy.inject('hang_after'),
      refuseConnections: () => proxy.refuseConnections(),
    },
    async settle(payment, outcome) {
      const answer = await server.host.dispatch('POST', `/${NAME}/charges/${payment.id}/resolve`, { state: STATE_OF[outcome] });
      if (answer.status !== 200) throw new Error(`${NAME} could not settle ${payment.id}: ${JSON.stringify(answer.body)}`);
    },
    mandates: {
      pendingAccount: ENDINGS.pending,
      mandate: (_connected, mandateId, outcome) => move('mandate', mandateId, MANDATE_STATE_OF[outcome]),
      debit(_connected, paymentId, outcome) {
        if (outcome !== 'confirmed' && outcome !== 'failed') throw new Error(`${NAME}'s banks never take a confirmed debit back (${outcome})`);
        return move('charge', paymentId, DEBIT_STATE_OF[outcome]);
      },
      held: async (ourId) => ((await processor().mandates.has(ourId)) ? 1 : 0) + ((await processor().charges.has(ourId)) ? 1 : 0),
    },
    // The simulator's own challenge page, answered Complete or Fail.
    actions: { card: CHALLENGE_CARD, answer: (payment, outcome) => answerChallenge(payment.next_action.url, outcome) },
    webhook(_connected, payment, state, signing) {
      const body = chargeEvent(payment, STATE_OF[state], undefined, payment.connector_reference ?? `${NAME}_ch_unknown`);
      const opts = signing === 'wrong_secret' ? { secretOf: 'simulator_b' } : signing === 'stale' ? { timestampS: Math.floor(Date.now() / 1000) - 600 } : {};
      return { body, headers: simulatorWebhookHeaders(NAME, body, opts) };
    },
  };
}
