// Every card processor the capture contract (captures.ts) runs over, each connector against its
// fake: the simulated processor in process, Stripe (test/support/fakes/stripe.ts) and Adyen
// (test/support/fakes/adyen.ts, which checks every request against Adyen's published schemas and
// sends CAPTURE, CAPTURE_FAILED and CANCELLATION notifications signed with the account's HMAC key).
// Where they differ: Adyen takes captures and cancels `received` and tells the outcome by
// notification; Stripe captures a PaymentIntent once (no multicapture requested), and its fake has
// no card whose capture is declined.
import { createAdyenConnector, readAdyenWebhook } from '../../../src/connectors/adyen/connector.js';
import { createHttpClient, type HttpClient } from '../../../src/connectors/http.js';
import { createSimulatorConnector, inProcessTransport } from '../../../src/connectors/simulator/connector.js';
import { SimulatorHost } from '../../../src/connectors/simulator/processor.js';
import { createStripeConnector } from '../../../src/connectors/stripe/connector.js';
import type { Connector, InboundEvent } from '../../../src/connectors/types.js';
import { ADYEN_CARDS, FakeAdyen } from '../../support/fakes/adyen.js';
import { FakeStripe, STRIPE_CARDS } from '../../support/fakes/stripe.js';

export type CaptureCapability =
  /** Several partial captures of one authorisation (catalogue capability multiple_captures). */
  | 'multiple_captures'
  /** A card that authorises and whose capture the processor then declines. */
  | 'capture_declined'
  /** Captures and cancels are taken `pending`; the processor's notification tells their outcome. */
  | 'notifications';

export interface CaptureHarness {
  readonly name: string;
  readonly capabilities: ReadonlySet<CaptureCapability>;
  readonly cards: { success: string; captureDeclined?: string };
  start(): Promise<void>;
  close(): Promise<void>;
  connector(): Connector;
  /** What the processor holds as captured of our payment, in minor units. */
  captured(paymentId: string, connectorReference: string): Promise<number>;
  /** Capability `notifications`: the processor settles the capture or cancel it took under `connectorReference` and sends its notification, read by the connector. */
  settle?(connectorReference: string, success: boolean): InboundEvent;
  /** A processor that records why an authorisation was voided: the reason it holds, in its words. */
  voidReason?(connectorReference: string): string | null;
}

const SECRET = 'capture-contract-secret';
const SIM = 'simulator_a';

export function simulatorCaptureHarness(): CaptureHarness {
  let host: SimulatorHost;
  let connector: Connector;
  return {
    name: SIM,
    capabilities: new Set<CaptureCapability>(['multiple_captures', 'capture_declined']),
    cards: { success: '4242424242424242', captureDeclined: '4000000000000366' },
    async start() {
      host = new SimulatorHost({ familySecret: SECRET, pendingDelayMs: 600_000 });
      connector = createSimulatorConnector({ name: SIM, transport: inProcessTransport(host), familySecret: SECRET });
    },
    async close() {
      host?.close();
    },
    connector: () => connector,
    captured: async (paymentId) => (await host.processors.get(SIM)!.charges.get(paymentId))?.captured_minor ?? 0,
  };
}

export function stripeCaptureHarness(): CaptureHarness {
  const fake = new FakeStripe();
  let connector: Connector;
  return {
    name: 'stripe',
    capabilities: new Set<CaptureCapability>(),
    cards: { success: STRIPE_CARDS.success },
    async start() {
      await fake.start();
      connector = createStripeConnector({ secretKey: 'sk_test_capture', webhookSecrets: ['whsec_capture'], livemode: false, apiBaseUrl: fake.url });
    },
    close: () => fake.close(),
    connector: () => connector,
    captured: async (_paymentId, intentId) => {
      const intent = fake.intents.get(intentId)!;
      return intent.status === 'succeeded' ? intent.amount_received : 0;
    },
    voidReason: (intentId) => fake.intents.get(intentId)!.cancellation_reason as string | null,
  };
}

const HMAC_KEY = '44782def547aaa06c910c43932b1eb0c71fc68d9d0c057550c48ec2acf6ba056';
const MERCHANT = 'PaymentOrchestratorECOM';

export function adyenCaptureHarness(): CaptureHarness {
  const fake = new FakeAdyen();
  let http: HttpClient;
  let connector: Connector;
  const opts = { hmacKeys: [HMAC_KEY], livemode: false, merchantAccount: MERCHANT };
  return {
    name: 'adyen',
    capabilities: new Set<CaptureCapability>(['multiple_captures', 'notifications']),
    cards: { success: ADYEN_CARDS.success },
    async start() {
      await fake.start();
      http = createHttpClient();
      connector = createAdyenConnector({ apiKey: 'AQE_test_key', ...opts, liveUrlPrefix: undefined, checkoutBaseUrl: fake.url, publicUrl: () => 'http://127.0.0.1:3000', http });
    },
    async close() {
      http?.close();
      await fake.close();
      if (fake.invalid.length) throw new Error(`requests off Adyen's schema: ${JSON.stringify(fake.invalid)}`);
    },
    connector: () => connector,
    captured: async (_paymentId, pspReference) => fake.payments.get(pspReference)?.captured ?? 0,
    settle(connectorReference, success) {
      const body = fake.settled(connectorReference, success, HMAC_KEY);
      return readAdyenWebhook(opts, { headers: {}, rawBody: body, now: new Date() });
    },
  };
}

export const CAPTURE_HARNESSES: readonly (() => CaptureHarness)[] = [simulatorCaptureHarness, stripeCaptureHarness, adyenCaptureHarness];

/** The report as a capture or void outcome (throws on anything else). */
export function authorizationReport(report: InboundEvent): Extract<InboundEvent, { object: 'capture' | 'void' }> {
  if (report.object !== 'capture' && report.object !== 'void') throw new Error(`not a capture or void report: ${JSON.stringify(report)}`);
  return report;
}
