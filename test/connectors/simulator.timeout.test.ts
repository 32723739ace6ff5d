// The timeout test card (4000000000000101) in the default configuration: docs/test-mode.md says it
// answers `pending` (the processor charged but did not answer in time), and the outcome comes
// later by the processor's webhook or a refresh. With the defaults (CONNECTOR_TIMEOUT_MS 10 s,
// SIMULATOR_PENDING_DELAY_MS 5 s) the in-process simulator must neither report the outcome before
// the caller's deadline nor make the caller wait for it. Over HTTP (its own server) the deadline
// is really waited for, and the report still comes only after the caller gave up.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/connectors/simulator/server.js';
import { CARDS, orderAndPay } from '../support/payments.js';
import { eventually } from '../support/helpers.js';
import { useService, useDatabase } from '../support/fixtures.js';

const h = useDatabase();

const webhooksAbout = async (id: string) =>
  Number((await h.query(sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${id}`))[0]!.n);

describe('the timeout card with the default settings, simulator in process', () => {
  // Only what a test needs (database, free port, no rate limit) differs from loadConfig({}).
  const inProcess = useService({ on: h, settings: 'production' });

  it('uses the defaults the defect was seen with', () => {
    const defaults = loadConfig({}).payments;
    expect(inProcess.service.config.payments).toEqual(defaults);
    expect(defaults.connectorTimeoutMs).toBe(10_000);
    expect(defaults.simulator.pendingDelayMs).toBe(5000);
  });

  it('answers pending at once with a timeout attempt; the processor reports succeeded by webhook after its delay', async () => {
    const { payments } = inProcess.service.config;
    const { api } = inProcess;
    const started = Date.now();
    const { order, payment } = await orderAndPay(api, CARDS.timeout);
    // Well before both the connector timeout and the processor's report.
    expect(Date.now() - started).toBeLessThan(payments.simulator.pendingDelayMs / 2);
    expect(payment).toMatchObject({ status: 'pending', connector: 'simulator_a', connector_reference: null });
    expect(payment.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'timeout', error_code: 'timeout' })]);
    expect((await api.get(`/v1/payments/${payment.id}`)).body.status).toBe('pending');
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('processing');

    // No worker runs here and nobody refreshes: only the processor's webhook can tell.
    const settled = await eventually(() => api.get(`/v1/payments/${payment.id}`), (res) => res.body.status !== 'pending', 15_000);
    expect(settled.body).toMatchObject({ status: 'succeeded', connector: 'simulator_a' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(payments.simulator.pendingDelayMs - 50);
    expect(await webhooksAbout(payment.id)).toBe(1);
    expect((await api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
  }, 30_000);

  it('?refresh=true learns the outcome at once', async () => {
    const { api } = inProcess;
    const { payment } = await orderAndPay(api, CARDS.timeout);
    expect(payment.status).toBe('pending');
    const refreshed = await api.get(`/v1/payments/${payment.id}?refresh=true`);
    expect(refreshed.body).toMatchObject({ status: 'succeeded', connector: 'simulator_a' });
    expect(refreshed.body.connector_reference).toMatch(/^simulator_a_ch_/);
  });
});

describe('the timeout card over HTTP (npm run simulator)', () => {
  let server: SimulatorServer;
  // The processor's delay is shorter than the deadline: it still reports only after the caller hung up.
  const timeoutMs = 800;
  const delayMs = 300;
  beforeAll(async () => {
    const { webhookSecret } = loadConfig({}).payments.simulator;
    server = h.track(await startSimulatorServer({ familySecret: webhookSecret, pendingDelayMs: delayMs }));
  });
  const overHttp = useService({ on: h, late: () => ({ settings: { connectorTimeoutMs: timeoutMs, simulator: { url: server.url } } }) });
  beforeAll(() => server.host.setWebhookBaseUrl(overHttp.url));

  it('waits for the deadline, answers pending, and the report comes after the caller gave up', async () => {
    const { api } = overHttp;
    const started = Date.now();
    const { payment } = await orderAndPay(api, CARDS.timeout);
    expect(Date.now() - started).toBeGreaterThanOrEqual(timeoutMs);
    expect(payment).toMatchObject({ status: 'pending', connector: 'simulator_a' });
    expect(payment.attempts).toEqual([expect.objectContaining({ outcome: 'timeout', error_code: 'timeout' })]);
    const settled = await eventually(() => api.get(`/v1/payments/${payment.id}`), (res) => res.body.status !== 'pending', 10_000);
    expect(settled.body.status).toBe('succeeded');
    expect(await webhooksAbout(payment.id)).toBe(1);
  });
});
