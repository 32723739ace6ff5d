// Mandates with the simulated bank: every test-mode scenario (docs/test-mode.md) — settled by the test
// helper, by the processor's webhook or by the worker's status check — bank revocation, idempotent
// retries and resumption after a crash.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { eventTypesOf } from '../support/payments.js';
import { ENDINGS, mandateBody, newMandate, bookMandate, mandateIdByReference } from '../support/mandates.js';
import { eventually, expectError } from '../support/helpers.js';
import { usePendingServices } from '../support/fixtures.js';

// Pending mandates on `manual` wait a minute: only the helper or the worker settles them. On
// `automatic` they settle after 200 ms and are reported by webhook.
const { h, manual, automatic, api, autoApi } = usePendingServices(200, { settings: { statusCheckIntervalMs: 100 } });

describe('scenarios of the simulated bank', () => {
  it('0000: active at once', async () => {
    const mandate = await newMandate(api, 'sepa_core', ENDINGS.success, { max_amount: 5000, metadata: { plan: 'gold' } });
    expect(mandate).toMatchObject({
      status: 'active',
      connector: 'simulator_a',
      max_amount: 5000,
      metadata: { plan: 'gold' },
      failure_code: null,
      revoked_by: null,
      last_debit_at: null,
      version: 2,
    });
    expect(mandate.connector_reference).toMatch(/^simulator_a_md_/);
    expect(mandate.activated_at).not.toBeNull();
    expect(mandate.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'succeeded' })]);
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.active']);
    expect((await api.get(`/v1/mandates/${mandate.id}`)).body).toEqual(mandate);
  });

  it.each(['sepa_core', 'bacs', 'ach'] as const)('0002 (%s): failed, account_closed', async (scheme) => {
    const mandate = await newMandate(api, scheme, ENDINGS.closed);
    expect(mandate).toMatchObject({ status: 'failed', failure_code: 'account_closed', connector: 'simulator_a', activated_at: null });
    expect(mandate.failure_message).toMatch(/closed/);
    expect(mandate.attempts).toEqual([expect.objectContaining({ outcome: 'declined', error_code: 'account_closed' })]);
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.failed']);
  });

  it('0003: pending; the test helper activates it, once', async () => {
    const mandate = await newMandate(api, 'bacs', ENDINGS.pending);
    expect(mandate).toMatchObject({ status: 'pending', connector: 'simulator_a', version: 2 });
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.pending']);
    const resolved = await api.post(`/v1/test-helpers/mandates/${mandate.id}/resolve`, { outcome: 'active' });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.body).toMatchObject({ status: 'active', version: 3 });
    // The processor's webhook arrives as well, and changes nothing more.
    await eventually(
      () => h.query(sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${mandate.id}`),
      (rows) => Number(rows[0]!.n) >= 1,
    );
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.pending', 'mandate.active']);
    expect((await api.get(`/v1/mandates/${mandate.id}`)).body.version).toBe(3);
  });

  it('0003: the test helper can make it fail', async () => {
    const mandate = await newMandate(api, 'ach', ENDINGS.pending);
    const resolved = await api.post(`/v1/test-helpers/mandates/${mandate.id}/resolve`, { outcome: 'failed' });
    expect(resolved.body).toMatchObject({ status: 'failed', failure_code: 'mandate_declined' });
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.pending', 'mandate.failed']);
  });

  it('0003: activates by itself after the configured delay, through the inbound webhook', async () => {
    const mandate = await newMandate(autoApi, 'sepa_core', ENDINGS.pending);
    expect(mandate.status).toBe('pending');
    const settled = await eventually(
      () => autoApi.get(`/v1/mandates/${mandate.id}`),
      (res) => res.body.status !== 'pending',
    );
    expect(settled.body).toMatchObject({ status: 'active', version: 3 });
    const events = (await autoApi.get('/v1/events?type=mandate.active')).body.data.filter((e: any) => e.data.object.id === mandate.id);
    expect(events).toHaveLength(1);
    expect(events[0].request).toEqual({ id: null, idempotency_key: null });
  });

  it('0004: times out and stays pending with no fallback; the worker learns it is active', async () => {
    const mandate = await newMandate(api, 'sepa_core', ENDINGS.timeout);
    expect(mandate).toMatchObject({ status: 'pending', connector: 'simulator_a', connector_reference: null });
    expect(mandate.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'timeout', error_code: 'timeout' })]);
    expect(manual.service.simulator('simulator_b').mandates.setupRequests.has(mandate.id)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const pass = await manual.service.runWorker();
    expect(pass.mandates!.checked).toBeGreaterThanOrEqual(1);
    const after = (await api.get(`/v1/mandates/${mandate.id}`)).body;
    expect(after).toMatchObject({ status: 'active', connector: 'simulator_a' });
    expect(after.connector_reference).toMatch(/^simulator_a_md_/);
    expect(await eventTypesOf(api, mandate.id)).toEqual(['mandate.created', 'mandate.pending', 'mandate.active']);
    const [row] = await h.query(sql`SELECT next_status_check_at FROM mandates WHERE connector_reference = ${after.connector_reference}`);
    expect(row!.next_status_check_at).toBeNull();
  });

  it("0004: the processor's webhook reports the outcome", async () => {
    const mandate = await newMandate(autoApi, 'bacs', ENDINGS.timeout);
    // The webhook (after 200 ms) may even beat our own timeout (300 ms): then the answer is active already.
    expect(['pending', 'active']).toContain(mandate.status);
    expect(mandate.attempts).toEqual([expect.objectContaining({ outcome: 'timeout' })]);
    const settled = await eventually(
      () => autoApi.get(`/v1/mandates/${mandate.id}`),
      (res) => res.body.status !== 'pending',
    );
    expect(settled.body.status).toBe('active');
  });

  it('0004: the test helper cannot change the outcome the processor already holds', async () => {
    const mandate = await newMandate(api, 'ach', ENDINGS.timeout);
    // Pending on our side without a reference; the processor has it active already.
    const resolved = await api.post(`/v1/test-helpers/mandates/${mandate.id}/resolve`, { outcome: 'failed' });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.body.status).toBe('active');
  });

  it('0005: simulator_a fails with a processor error; the router falls back to simulator_b', async () => {
    const mandate = await newMandate(api, 'sepa_core', ENDINGS.processorError);
    expect(mandate).toMatchObject({ status: 'active', connector: 'simulator_b' });
    expect(mandate.attempts).toEqual([
      expect.objectContaining({ connector: 'simulator_a', outcome: 'error', error_code: 'processor_error' }),
      expect.objectContaining({ connector: 'simulator_b', outcome: 'succeeded' }),
    ]);
  });

  it('the bank revokes an active mandate: reported through the inbound webhook, mandate.revoked', async () => {
    const mandate = await newMandate(autoApi, 'bacs');
    const revoked = await autoApi.post(`/v1/test-helpers/mandates/${mandate.id}/resolve`, { outcome: 'revoked' });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({ status: 'revoked', revoked_by: 'bank', version: mandate.version + 1 });
    await eventually(
      () => h.query(sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${mandate.id}`),
      (rows) => Number(rows[0]!.n) >= 1,
    );
    expect(await eventTypesOf(autoApi, mandate.id)).toEqual(['mandate.created', 'mandate.active', 'mandate.revoked']);
  });

  it('the simulated bank alone revoking (no helper answer applied) still reaches us by webhook', async () => {
    const mandate = await newMandate(autoApi, 'sepa_core');
    const sim = automatic.service.simulator();
    sim.mandates.settle(mandate.id, 'REVOKED_BY_PAYER');
    const after = await eventually(
      () => autoApi.get(`/v1/mandates/${mandate.id}`),
      (res) => res.body.status === 'revoked',
    );
    expect(after.body).toMatchObject({ status: 'revoked', revoked_by: 'bank' });
  });
});

describe('idempotency and crash safety', () => {
  it('the same key and body replays the mandate; another body with it is 422; the bank saw one request', async () => {
    const key = `mdt-${Date.now()}`;
    const body = mandateBody('sepa_core');
    const [a, b] = await Promise.all([api.post('/v1/mandates', body, { idempotencyKey: key }), api.post('/v1/mandates', body, { idempotencyKey: key })]);
    // Concurrent: one creates, the other is told to wait (409) or, if later, replays.
    expect([a.status, b.status]).toContain(201);
    expect([201, 409]).toContain(a.status === 201 ? b.status : a.status);
    const created = a.status === 201 ? a : b;
    const replay = await api.post('/v1/mandates', body, { idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(created.text);
    expectError(await api.post('/v1/mandates', { ...body, reference: 'other' }, { idempotencyKey: key }), 422, 'idempotency_key_reused');
    const sim = manual.service.simulator();
    expect(sim.mandates.setupRequests.get(created.body.id)).toBe(1);
    const rows = await h.query(sql`SELECT count(*)::int AS n FROM mandates WHERE reference = ${body.reference}`);
    expect(rows[0]!.n).toBe(1);
  });

  it('a request that dies after the first phase is resumed by its retry: one mandate, registered once', async () => {
    const key = `crash-${Date.now()}`;
    const body = mandateBody('bacs');
    const crashed = await manual.service.crashingAt('mandate_created', () => api.post('/v1/mandates', body, { idempotencyKey: key }));
    expect(crashed.status).toBe(500);
    const [row] = await h.query(sql`SELECT id, status, connector FROM mandates WHERE reference = ${body.reference}`);
    expect(row).toMatchObject({ status: 'pending', connector: null });

    const retried = await api.post('/v1/mandates', body, { idempotencyKey: key });
    expect(retried.status, retried.text).toBe(201);
    expect(retried.body).toMatchObject({ status: 'active', connector: 'simulator_a', version: 2 });
    expect(await eventTypesOf(api, retried.body.id)).toEqual(['mandate.created', 'mandate.active']);
    const rows = await h.query(sql`SELECT count(*)::int AS n FROM mandates WHERE reference = ${body.reference}`);
    expect(rows[0]!.n).toBe(1);
    const sim = manual.service.simulator();
    expect(sim.mandates.setupRequests.get(retried.body.id)).toBe(1);
    // A later retry replays.
    const replay = await api.post('/v1/mandates', body, { idempotencyKey: key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(retried.text);
  });

  it('a retry after the processor registered the mandate but the answer was lost adopts it, without registering again', async () => {
    const key = `lost-${Date.now()}`;
    const body = mandateBody('ach');
    const crashed = await manual.service.crashingAt('mandate_created', () => api.post('/v1/mandates', body, { idempotencyKey: key }));
    expect(crashed.status).toBe(500);
    // The processor registered it, and the answer was lost.
    const id = await mandateIdByReference(h, body.reference);
    const sim = manual.service.simulator();
    await bookMandate(sim, id, body);
    const retried = await api.post('/v1/mandates', body, { idempotencyKey: key });
    expect(retried.body).toMatchObject({ id, status: 'active', connector: 'simulator_a' });
    expect(retried.body.attempts).toHaveLength(1);
    expect(sim.mandates.setupRequests.get(id)).toBe(1);
  });
});
