// Helpers of the payments, refunds, connectors and ledger tests: a service with payment settings
// of its own (short connector timeout, slow pending resolution unless asked), test cards, orders.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { loadConfig, type Config, type PaymentsConfig } from '../src/config.js';
import { startService } from '../src/service.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../src/runtime.js';
import { MemoryRateLimiter } from '../src/lib/rate-limiter.js';
import { client, orderBody, type LogCapture, type TestDatabase, type TestService } from './helpers.js';

export const CARDS = {
  success: '4242424242424242',
  declined: '4000000000000002',
  insufficientFunds: '4000000000009995',
  pending: '4000000000000077',
  timeout: '4000000000000101',
  processorError: '4000000000000119',
} as const;

export function cardMethod(number: string, overrides: Record<string, unknown> = {}) {
  return { type: 'card', card: { number, exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123', ...overrides } };
}

export type PaymentsSettings = Partial<Omit<PaymentsConfig, 'simulator' | 'circuitBreaker'>> & {
  simulator?: Partial<PaymentsConfig['simulator']>;
  circuitBreaker?: Partial<PaymentsConfig['circuitBreaker']>;
};

export interface PaymentsTestService extends TestService {
  payments: Runtime;
}

/** Payment settings for tests: a 300 ms connector timeout; pending charges wait a minute unless told otherwise. */
export function testPaymentsConfig(settings: PaymentsSettings = {}): PaymentsConfig {
  const base = loadConfig({}).payments;
  return {
    ...base,
    connectorTimeoutMs: 300,
    ...settings,
    simulator: { ...base.simulator, pendingDelayMs: 60_000, ...settings.simulator },
    circuitBreaker: { ...base.circuitBreaker, ...settings.circuitBreaker },
  };
}

export async function startPaymentsService(
  testDb: TestDatabase,
  opts: { settings?: PaymentsSettings; overrides?: Partial<Config>; runtime?: RuntimeOptions; logs?: LogCapture } = {},
): Promise<PaymentsTestService> {
  const config: Config = {
    ...loadConfig({}),
    databaseUrl: testDb.url,
    port: 0,
    metrics: { host: '127.0.0.1', port: 0 },
    roles: ['api'],
    rateLimit: { live: { perSecond: 10_000, burst: 10_000 }, test: { perSecond: 10_000, burst: 10_000 } },
    ...opts.overrides,
  };
  config.payments = testPaymentsConfig(opts.settings);
  const payments = createRuntime(config, { db: testDb.database.db, ...opts.runtime });
  const service = await startService(config, {
    database: testDb.database,
    logger: opts.logs ? { level: 'info', stream: opts.logs } : false,
    rateLimiter: new MemoryRateLimiter(),
    payments,
  });
  return {
    ...service,
    url: service.url!,
    config,
    payments,
    async close() {
      await service.close();
      payments.close();
    },
  };
}

export type Api = ReturnType<typeof client>;

export async function newOrder(api: Api, overrides: Record<string, unknown> = {}) {
  const res = await api.post('/v1/payment-orders', orderBody(overrides));
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function pay(api: Api, orderId: string, number: string = CARDS.success, extra: Record<string, unknown> = {}) {
  return api.post('/v1/payments', { payment_order: orderId, payment_method: cardMethod(number), ...extra });
}

/** Creates an order and pays it; expects a 201. */
export async function orderAndPay(api: Api, number: string = CARDS.success, order: Record<string, unknown> = {}) {
  const created = await newOrder(api, order);
  const res = await pay(api, created.id, number);
  expect(res.status, res.text).toBe(201);
  return { order: created, payment: res.body };
}

export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function query(testDb: TestDatabase, q: ReturnType<typeof sql>): Promise<Record<string, unknown>[]> {
  return ((await testDb.database.db.execute(q)) as unknown as { rows: Record<string, unknown>[] }).rows;
}

export async function eventTypesOf(api: Api, objectId: string): Promise<string[]> {
  const res = await api.get('/v1/events?limit=100');
  return (res.body.data as { type: string; data: { object: { id: string } } }[])
    .filter((e) => e.data.object.id === objectId)
    .map((e) => e.type)
    .reverse();
}

export const idempotencyKey = () => crypto.randomUUID();
