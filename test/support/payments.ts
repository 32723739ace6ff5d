// Helpers of the money-movement tests: test cards, orders and payments, the events of an object,
// the in-process simulated processors, a live-mode lab connector, and signed processor webhooks.
import { sendSimulatorWebhook, type SignOptions } from './connectors.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { DEVELOPMENT_SIMULATOR_SECRET } from '../../src/config.js';
import { createHttpClient, type HttpClient } from '../../src/connectors/http.js';
import { createSimulatorConnector, httpTransport, inProcessTransport } from '../../src/connectors/simulator/connector.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/connectors/simulator/server.js';
import type { TestControls } from '../../src/connectors/test-controls.js';
import { SimulatorHost } from '../../src/connectors/simulator/processor.js';
import type { Connector } from '../../src/connectors/types.js';
import { call, created, orderBody, type Api, type ApiResponse, type RequestOptions } from './helpers.js';

export const CARDS = {
  success: '4242424242424242',
  declined: '4000000000000002',
  insufficientFunds: '4000000000009995',
  pending: '4000000000000077',
  timeout: '4000000000000101',
  processorError: '4000000000000119',
  pendingCapture: '4000000000000580',
} as const;

/** A valid card that is no test card: refused in test mode, routed in live mode. */
export const LIVE_CARD = '5555555555554444';

export function cardMethod(number: string, overrides: Record<string, unknown> = {}) {
  return { type: 'card', card: { number, exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123', ...overrides } };
}

export const newOrder = (api: Api, overrides: Record<string, unknown> = {}) => created(api, '/v1/payment-orders', orderBody(overrides));

export async function pay(api: Api, orderId: string, number: string = CARDS.success, extra: Record<string, unknown> = {}, opts: RequestOptions = {}) {
  return api.post('/v1/payments', { payment_order: orderId, payment_method: cardMethod(number), ...extra }, opts);
}

/** Creates an order and pays it; expects a 201. */
export async function orderAndPay(api: Api, number: string = CARDS.success, order: Record<string, unknown> = {}) {
  const made = await newOrder(api, order);
  const res = await pay(api, made.id, number);
  expect(res.status, res.text).toBe(201);
  return { order: made, payment: res.body };
}

export async function eventTypesOf(api: Api, objectId: string): Promise<string[]> {
  const res = await api.get('/v1/events?limit=100');
  return (res.body.data as { type: string; data: { object: { id: string } } }[])
    .filter((e) => e.data.object.id === objectId)
    .map((e) => e.type)
    .reverse();
}

/** An amount of a balance list (`available`, `reserved`, `pending`) in one currency. */
export const amountIn = (list: { currency: string; amount: number }[], currency: string) => list.find((x) => x.currency === currency)?.amount ?? 0;

export async function balanceOf(api: Api, currency = 'EUR') {
  const res = await api.get('/v1/balance');
  expect(res.status, res.text).toBe(200);
  return { available: amountIn(res.body.available, currency), reserved: amountIn(res.body.reserved, currency), pending: amountIn(res.body.pending, currency) };
}

/** What is available in `currency`. */
export const availableOf = async (api: Api, currency = 'EUR') => (await balanceOf(api, currency)).available;

/** simulator_a and simulator_b in this process on one host of their own (pending answers wait ten minutes). */
export function inProcessSimulators() {
  const host = new SimulatorHost({ familySecret: DEVELOPMENT_SIMULATOR_SECRET, pendingDelayMs: 600_000 });
  const make = (name: string) => createSimulatorConnector({ name, transport: inProcessTransport(host), familySecret: DEVELOPMENT_SIMULATOR_SECRET });
  return { host, a: make('simulator_a'), b: make('simulator_b'), close: () => host.close() };
}

const accepted = async (r: { reference: string }) => ({ kind: 'succeeded' as const, connectorReference: `lab_${r.reference}` });

/**
 * A live-mode connector standing for a real processor (none exists here): cards succeed (and verify) at once
 * (or are authorised, and captured at once),
 * debits wait at the bank, mandates activate (pending for the 0003 ending), payouts stay in transit.
 */
export const labLive: Connector = {
  name: 'lab_live',
  modes: ['live'],
  paymentMethodTypes: ['card', 'mandate'],
  charge: async (r) => ({ kind: r.mandate ? 'pending' : r.captureMethod === 'manual' ? 'authorized' : 'succeeded', connectorReference: `lab_${r.reference}` }),
  chargeStatus: async (r) => ({ kind: 'pending', connectorReference: `lab_${r.reference}` }),
  refund: accepted,
  refundStatus: accepted,
  verifyCard: async (r) => ({ kind: 'succeeded', connectorReference: `lab_${r.reference}`, networkTransactionId: `lab_ntx_${r.reference}` }),
  verificationStatus: async (r) => ({ kind: 'succeeded', connectorReference: `lab_${r.reference}`, networkTransactionId: `lab_ntx_${r.reference}` }),
  setupMandate: async (r) => ({ kind: r.account.secret.endsWith('0003') ? 'pending' : 'active', connectorReference: `lab_${r.reference}` }),
  mandateStatus: async (r) => ({ kind: 'active', connectorReference: `lab_${r.reference}` }),
  cancelMandate: async (r) => ({ kind: 'revoked', by: 'merchant', connectorReference: `lab_${r.reference}` }),
  payout: async (r) => ({ kind: 'pending', connectorReference: `lab_${r.reference}` }),
  capture: accepted,
  captureStatus: accepted,
  cancelAuthorization: async (r) => ({ kind: 'canceled', connectorReference: `lab_${r.paymentReference}` }),
  payoutStatus: async (r) => ({ kind: 'pending', connectorReference: `lab_${r.reference}` }),
  parseWebhook: () => {
    throw new Error('no webhooks');
  },
};

/** Posts a processor's event to our inbound webhook route, signed as that processor (or as told). */
export const sendProcessorEvent = (url: string, connector: string, body: string, opts: SignOptions = {}): Promise<ApiResponse> =>
  sendSimulatorWebhook(url, `/v1/connectors/${connector}/webhooks`, connector, body, opts);

/**
 * The simulated processors for the connector contracts: both in process (one host) and both over
 * HTTP (one server of their own), started before the file's tests and stopped after them.
 */
export function useSimulatorFamily(secret: string) {
  const family = {} as { server: SimulatorServer; host: SimulatorHost; http: HttpClient };
  beforeAll(async () => {
    family.server = await startSimulatorServer({ familySecret: secret, pendingDelayMs: 60_000 });
    family.host = new SimulatorHost({ familySecret: secret, pendingDelayMs: 60_000 });
    family.http = createHttpClient();
  });
  afterAll(async () => {
    family.http?.close();
    family.host?.close();
    await family.server?.close();
  });
  const make = (name: string, over: 'in process' | 'over HTTP') => () =>
    createSimulatorConnector({ name, transport: over === 'in process' ? inProcessTransport(family.host) : httpTransport(family.server.url, family.http), familySecret: secret });
  const connectors = (['in process', 'over HTTP'] as const).flatMap((over) =>
    ['simulator_a', 'simulator_b'].map((name) => [`${name} ${over}`, make(name, over)] as [string, () => Connector & TestControls]),
  );
  return { family, connectors };
}
