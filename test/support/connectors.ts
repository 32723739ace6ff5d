// Helpers of the inbound-webhook tests: a simulated processor's charge event as it sends it, and
// sending one signed the way that processor signs.
import crypto from 'node:crypto';
import { DEVELOPMENT_SIMULATOR_SECRET } from '../../src/config.js';
import { SIM_SIGNATURE_HEADER } from '../../src/connectors/simulator/protocol.js';
import { processorSecret, signPayload } from '../../src/connectors/simulator/signing.js';
import { expect } from 'vitest';
import { CircuitBreaker } from '../../src/kernel/circuit-breaker.js';
import type { CallDeps } from '../../src/connectors/router.js';
import type { Connector } from '../../src/connectors/types.js';
import { call, client, createTenant, type Api, type ApiResponse, type TestDatabase } from './helpers.js';

export function chargeEvent(
  payment: { id: string; amount: number; currency: string },
  state: 'CAPTURED' | 'REFUSED' | 'PENDING',
  eventId = `evt_${crypto.randomUUID()}`,
  chargeId = 'simulator_a_ch_test',
) {
  return JSON.stringify({
    event_id: eventId,
    event_type: 'charge.state_changed',
    occurred_at: new Date().toISOString(),
    charge: {
      charge_id: chargeId,
      merchant_reference: payment.id,
      amount_minor: payment.amount,
      currency: payment.currency,
      state,
      refusal: state === 'REFUSED' ? 'NOT_ENOUGH_BALANCE' : null,
      refunded_minor: 0,
      created_at: new Date().toISOString(),
    },
  });
}

export interface SignOptions {
  /** Whose secret signs (default: the processor itself). */
  secretOf?: string;
  timestampS?: number;
  /** The signature header as sent; null: none. */
  header?: string | null;
  authorization?: string;
}

/** The headers of `body` signed as the simulated processor `processor` signs its webhooks (or as told). */
export function simulatorWebhookHeaders(processor: string, body: string, opts: SignOptions = {}): Record<string, string> {
  const secret = processorSecret(DEVELOPMENT_SIMULATOR_SECRET, opts.secretOf ?? processor);
  const header = opts.header === undefined ? signPayload(secret, opts.timestampS ?? Math.floor(Date.now() / 1000), body) : opts.header;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (header !== null) headers[SIM_SIGNATURE_HEADER] = header;
  if (opts.authorization) headers.authorization = opts.authorization;
  return headers;
}

/** POSTs `body` to `path` signed as the simulated processor `processor` signs its webhooks. */
export function sendSimulatorWebhook(baseUrl: string, path: string, processor: string, body: string, opts: SignOptions = {}): Promise<ApiResponse> {
  return call(baseUrl, 'POST', path, { rawBody: body, headers: simulatorWebhookHeaders(processor, body, opts) });
}

/** A new tenant of `service` (live mode activated), with a client per mode. */
export async function newTenantClients(testDb: TestDatabase, serviceUrl: string) {
  const tenant = await createTenant(testDb.database);
  return { test: client(serviceUrl, tenant.testKey), live: client(serviceUrl, tenant.liveKey) };
}

/** Creates a connector account; expects a 201. */
export async function createConnectorAccount(api: Api, connector: string, name: string, credentials?: Record<string, string>) {
  const res = await api.post('/v1/connector-accounts', { connector, name, ...(credentials ? { credentials } : {}) }, { idempotencyKey: undefined });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; webhook_url: string };
}

/** The core's call rules around one connector alone (a breaker that never opens), for connector-level tests. */
export function callDepsFor(connector: Connector, timeoutMs = 300): CallDeps {
  return {
    registry: { get: (name) => (name === connector.name ? connector : undefined), names: () => [connector.name] },
    breaker: new CircuitBreaker({ failureThreshold: 100, openMs: 1000 }),
    timeoutMs,
    now: () => new Date(),
  };
}
