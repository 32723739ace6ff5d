// GET /metrics on its own listener: after a short flow (an order, a payment, a refund, a webhook
// delivered) the counters have moved; METRICS_PORT=0 serves nothing; a port already taken is
// logged and the service runs on; two services in one process count apart.
import { rawRequest, freePort } from '../support/sockets.js';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createMetrics } from '../../src/metrics/registry.js';
import type { Db } from '../../src/storage/db.js';
import { startWorker } from '../../src/worker/worker.js';
import { client, createTenant, createTestDatabase, eventually, isPostgres, LogCapture, startTestService, type TestDatabase, type TestService } from '../support/helpers.js';
import { CARDS, orderAndPay } from '../support/payments.js';
import { fund, newBeneficiary, payout } from '../support/payouts.js';
import { newMandate } from '../support/mandates.js';
import { Receiver } from '../support/webhooks.js';

/** The scrape as `name{labels} value` lines, looked up by name and a subset of labels. */
async function scrape(url: string) {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const samples = text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)!;
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
  const value = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
  const has = (name: string) => samples.some((s) => s.name === name);
  return { text, value, has };
}

let testDb: TestDatabase;
let service: TestService;
let receiver: Receiver;
let api: ReturnType<typeof client>;
let logs: LogCapture;

beforeAll(async () => {
  testDb = await createTestDatabase();
  receiver = await Receiver.start();
  logs = new LogCapture();
  service = await startTestService(testDb, {
    overrides: { roles: ['api', 'worker'], metrics: { host: '127.0.0.1', port: await freePort() }, workerIntervalMs: 50 },
    logs,
  });
  api = client(service.url, (await createTenant(testDb.database)).testKey);
});
afterAll(async () => {
  await service?.close();
  await receiver?.close();
  await testDb?.drop();
});

describe('GET /metrics', () => {
  it('is served on its own loopback listener, not on the API port', async () => {
    expect(service.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(service.metricsUrl!).port).not.toBe(new URL(service.url).port);
    expect((await fetch(`${service.url}/metrics`)).status).toBe(404);
    expect((await fetch(service.metricsUrl!.replace('/metrics', '/other'))).status).toBe(404);
  });

  it('after an order, a payment, a refund and a webhook delivery, their counters have moved', async () => {
    const endpoint = await api.post('/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['refund.*'] });
    expect(endpoint.status, endpoint.text).toBe(201);
    const before = await scrape(service.metricsUrl!);

    const { payment } = await orderAndPay(api);
    expect(payment.status).toBe('succeeded');
    const refund = await api.post('/v1/refunds', { payment: payment.id, amount: 500 });
    expect(refund.status, refund.text).toBe(201);
    expect(refund.body.status).toBe('succeeded');
    await receiver.waitFor(() => receiver.requests.some((r) => r.body.includes(refund.body.id)));
    expect((await rawRequest(service.url, 'GET /v1/%ff HTTP/1.1\r\nHost: localhost')).status).toBe(400);
    // The delivery is counted when its attempt is recorded, just after the receiver answered.
    let after = await scrape(service.metricsUrl!);
    for (let i = 0; i < 100 && after.value('webhook_deliveries_total', { result: 'succeeded' }) === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = await scrape(service.metricsUrl!);
    }
    const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);

    expect(moved('http_requests_total', { route: '/v1/payment-orders', method: 'POST', status: '201' })).toBe(1);
    expect(moved('http_requests_total', { route: '/v1/payments', method: 'POST', status: '201' })).toBe(1);
    expect(moved('http_request_duration_seconds_count', { route: '/v1/refunds', method: 'POST', status: '201' })).toBe(1);
    expect(moved('http_request_duration_seconds_bucket', { route: '/v1/refunds', method: 'POST', status: '201', le: '+Inf' })).toBe(1);
    expect(moved('http_requests_total', { route: 'unmatched', status: '400' })).toBe(1);
    // No path, id or query in a route label.
    expect(after.text).not.toMatch(/route="[^"]*(pay_|ord_|re_|%)/);

    expect(moved('payments_total', { outcome: 'succeeded', connector: payment.connector })).toBe(1);
    expect(moved('refunds_total', { outcome: 'succeeded', connector: payment.connector })).toBe(1);
    expect(moved('connector_request_duration_seconds_count', { connector: payment.connector, operation: 'payment.send', result: 'ok' })).toBe(1);
    expect(moved('connector_request_duration_seconds_count', { connector: payment.connector, operation: 'refund.send', result: 'ok' })).toBe(1);
    expect(after.value('connector_circuit_state', { connector: payment.connector, state: 'closed' })).toBe(1);
    expect(after.value('connector_circuit_state', { connector: payment.connector, state: 'open' })).toBe(0);

    expect(moved('webhook_deliveries_total', { result: 'succeeded' })).toBeGreaterThanOrEqual(1);
    expect(moved('webhook_delivery_lag_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(after.has('webhook_backlog')).toBe(true);
    expect(after.value('webhook_backlog', { queue: 'events' })).toBeGreaterThanOrEqual(0);
    expect(after.value('worker_pass_duration_seconds_count', { job: 'periodic' })).toBeGreaterThan(0);

    // The pool is node-postgres'; the embedded database has none.
    if (isPostgres) {
      expect(after.value('db_pool_max_connections')).toBe(service.config.databasePoolSize);
      expect(after.has('db_pool_connections')).toBe(true);
    } else {
      expect(after.has('db_pool_connections')).toBe(false);
    }
    expect(after.has('process_cpu_user_seconds_total')).toBe(true);
  });

  it('mandates and payouts are counted by outcome and connector', async () => {
    const before = await scrape(service.metricsUrl!);
    const mandate = await newMandate(api);
    expect(mandate.status).toBe('active');
    expect((await api.post(`/v1/mandates/${mandate.id}/revoke`)).status).toBe(200);
    await fund(api, 10_000);
    const created = await payout(api, (await newBeneficiary(api)).id, 1000);
    expect(created.status, created.text).toBe(201);
    const settled = await eventually(
      () => api.get(`/v1/payouts/${created.body.id}`),
      (res) => !['pending', 'processing'].includes(res.body.status),
    );
    const after = await scrape(service.metricsUrl!);
    const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);
    expect(moved('mandates_total', { outcome: 'active', connector: mandate.connector })).toBe(1);
    expect(moved('mandates_total', { outcome: 'revoked', connector: mandate.connector })).toBe(1);
    expect(moved('connector_request_duration_seconds_count', { operation: 'mandate.revoke' })).toBe(1);
    expect(moved('payouts_total', { outcome: settled.body.status, connector: settled.body.connector })).toBe(1);
  });

  it('an open circuit shows in connector_circuit_state, and the calls it skips are counted', async () => {
    const fragile = await startTestService(testDb, {
      settings: { circuitBreaker: { failureThreshold: 1, openMs: 60_000 } },
      overrides: { metrics: { host: '127.0.0.1', port: await freePort() } },
    });
    try {
      const fragileApi = client(fragile.url, (await createTenant(testDb.database)).testKey);
      await orderAndPay(fragileApi, CARDS.processorError);
      await orderAndPay(fragileApi);
      const scraped = await scrape(fragile.metricsUrl!);
      expect(scraped.value('connector_circuit_state', { connector: 'simulator_a', state: 'open' })).toBe(1);
      expect(scraped.value('connector_circuit_state', { connector: 'simulator_a', state: 'closed' })).toBe(0);
      expect(scraped.value('connector_request_duration_seconds_count', { connector: 'simulator_a', result: 'processor_error' })).toBe(1);
      expect(scraped.value('connector_requests_skipped_total', { connector: 'simulator_a' })).toBe(1);
    } finally {
      await fragile.close();
    }
  });

  it('a second service in the same process counts its own requests only', async () => {
    const other = await startTestService(testDb, { overrides: { metrics: { host: '127.0.0.1', port: await freePort() } } });
    try {
      const scraped = await scrape(other.metricsUrl!);
      expect(scraped.value('http_requests_total', { route: '/v1/payment-orders' })).toBe(0);
      expect(scraped.value('payments_total')).toBe(0);
      expect((await scrape(service.metricsUrl!)).value('http_requests_total', { route: '/v1/payment-orders' })).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });
});

describe('worker_pass_failures_total', () => {
  it('counts the periodic passes that failed', async () => {
    const metrics = createMetrics();
    const unreachable = new Proxy({}, {
      get() {
        throw new Error('database unreachable');
      },
    }) as Db;
    const worker = startWorker({ db: unreachable, log: { info() {}, warn() {}, error() {} }, metrics }, 10);
    try {
      const failures = async () => (await metrics.registry.getSingleMetric('worker_pass_failures_total')!.get()).values.find((v) => v.labels.job === 'periodic')?.value ?? 0;
      expect(await eventually(failures, (n) => n >= 2)).toBeGreaterThanOrEqual(2);
    } finally {
      await worker.stop();
    }
  });
});

describe('a worker-only process', () => {
  it('answers /health and /ready on its metrics listener, having no API port', async () => {
    const worker = await startTestService(testDb, { overrides: { roles: ['worker'], metrics: { host: '127.0.0.1', port: await freePort() } } });
    try {
      expect(worker.app).toBeUndefined();
      const base = worker.metricsUrl!.replace(/\/metrics$/, '');
      const health = await fetch(`${base}/health`);
      expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
      const ready = await fetch(`${base}/ready`);
      expect([ready.status, ready.headers.get('content-type'), await ready.json()]).toEqual([200, 'application/json; charset=utf-8', { status: 'ready' }]);
      expect((await fetch(`${base}/ready`, { method: 'HEAD' })).status).toBe(200);
      expect((await fetch(`${base}/ready`, { method: 'POST' })).status).toBe(404);
      expect((await fetch(`${base}/v1/events`)).status).toBe(404);
      expect((await fetch(worker.metricsUrl!)).status).toBe(200);
    } finally {
      await worker.close();
    }
  });
});

describe('METRICS_PORT and METRICS_HOST', () => {
  it('default to 9464 on 127.0.0.1; 0 is accepted', () => {
    expect(loadConfig({}).metrics).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(loadConfig({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' }).metrics).toEqual({ host: '0.0.0.0', port: 0 });
    expect(() => loadConfig({ METRICS_PORT: 'nine' })).toThrow(/METRICS_PORT/);
  });

  it('0 turns the listener off', async () => {
    const off = await startTestService(testDb, { overrides: { metrics: { host: '127.0.0.1', port: 0 } } });
    try {
      expect(off.metricsUrl).toBeUndefined();
      expect((await fetch(`${off.url}/health`)).status).toBe(200);
    } finally {
      await off.close();
    }
  });

  it('a port already taken is logged as an error, and the service runs on without /metrics', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    const capture = new LogCapture();
    try {
      const started = await startTestService(testDb, { overrides: { metrics: { host: '127.0.0.1', port } }, logs: capture });
      try {
        expect(started.metricsUrl).toBeUndefined();
        expect((await fetch(`${started.url}/health`)).status).toBe(200);
        const line = capture.lines.map((l) => JSON.parse(l)).find((l) => /metrics listener could not start/.test(l.msg));
        expect(line, capture.text).toMatchObject({ level: 50, port, err: { code: 'EADDRINUSE' } });
      } finally {
        await started.close();
      }
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});
