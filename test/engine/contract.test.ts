// One contract for every money movement on the core (src/movement), through the public HTTP API
// against a real service: payments by card, direct debits, refunds, payouts and mandate set-ups
// (their rows are in test/support/movement.kinds.ts). For each: created once with its events and a byte-equal
// replay; killed with a real SIGKILL between the phases and resumed, the money moving once;
// located at the processor and adopted after a crash that followed its answer; abandoned by its
// request and settled by the worker past its deadline by the kind's rule; a duplicate inbound
// processor event applied once; and settled through its test helper. A step a kind lacks is named
// with its reason. All processes share one simulator server, whose counters outlive the crashes.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { DEVELOPMENT_SIMULATOR_SECRET, type CrashPoint } from '../../src/config.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/connectors/simulator/server.js';
import { claimForSubmission } from '../../src/domain/payouts/submission.js';
import { parseId } from '../../src/kernel/ids.js';
import { call, isPostgres, type Tenant, type Api } from '../support/helpers.js';
import { eventTypesOf, sendProcessorEvent } from '../support/payments.js';
import { startChild, sendWhileLocked } from '../support/processes.js';
import { isNone, MOVEMENTS, newest, type CrashStep, type MovementCase, type None, type Scenario } from '../support/movement.kinds.js';
import { expectLedgerClean } from '../support/payouts.js';
import { useService } from '../support/fixtures.js';

/** Past every deadline of every kind: abandonment, a refund's next check, a payout's lease. */
const LATER_MS = 10 * 60_000;
const PREFIX = { payments: 'pay', refunds: 'ref', payouts: 'po', mandates: 'mdt' } as const;

let simulator: SimulatorServer;
const h = useService({
  submitOnCreate: false,
  overrides: { idempotencyLockTimeoutS: 3 },
  // One simulator server for this process and the children: its books and counters outlive the crashes.
  late: async () => {
    simulator = h.track(await startSimulatorServer({ familySecret: DEVELOPMENT_SIMULATOR_SECRET, pendingDelayMs: 60_000 }));
    return { settings: { simulator: { url: simulator.url } } };
  },
});
beforeEach(() => h.service.clock.reset());
const now = () => h.service.clock.now();

const sim = () => simulator.host;
const workerPass = () => h.service.runWorker();
const title = (step: object, text: string) => (isNone(step) ? `${text} — not applicable: ${(step as None).none}` : text);

async function newTenant(): Promise<{ tenant: Tenant; api: Api }> {
  const tenant = await h.newTenant(`Contract ${crypto.randomUUID()}`);
  return { tenant, api: tenant.api };
}

const get = async (kind: MovementCase, api: Api, id: string) => (await api.get(`/v1/${kind.resource}/${id}`)).body;

/** Exactly once: sent `sent` times, no event and no journal entry twice, the ledger balanced. */
async function expectOnce(kind: MovementCase, tenant: Tenant, api: Api, id: string, sent = 1) {
  expect(await kind.sent(sim(), id), 'requests at the processors').toBe(sent);
  const types = await eventTypesOf(api, id);
  expect(types.length, types.join(',')).toBe(new Set(types).size);
  const entries = await h.query(sql`SELECT type, count(*)::int AS n FROM journal_entries WHERE source_id = ${parseId(PREFIX[kind.resource], id)!} GROUP BY type`);
  for (const entry of entries) expect(entry, 'journal entry written once').toMatchObject({ n: 1 });
  await expectLedgerClean(h.db, tenant.accountId);
}

/** A request killed at `point` in this process (its crash switch throwing): the movement it left, no connector. */
async function strandInProcess(kind: MovementCase, api: Api, point: CrashPoint, body: Record<string, unknown>) {
  expect((await h.service.crashingAt(point, () => api.post(`/v1/${kind.resource}`, body))).status).toBe(500);
  return newest(api, kind.resource);
}

/** A payout whose submitter claimed it (phase 1: processing, no connector) and died before the bank call. */
/** No connector took it: none recorded (a refund's connector is its payment's from the start: still pending). */
function expectUntaken(kind: MovementCase, view: Record<string, any>) {
  if (kind.resource === 'refunds') expect(view.status, 'no outcome was committed').toBe('pending');
  else expect(view.connector, 'no outcome was committed').toBeNull();
}

async function strandClaimedPayout(tenant: Tenant, api: Api, body: Record<string, unknown>) {
  const created = await api.post('/v1/payouts', body);
  expect(created.status, created.text).toBe(201);
  const only = { accountId: parseId('acct', tenant.accountId)!, id: parseId('po', created.body.id)! };
  expect(await claimForSubmission(h.db, h.service.payments, { only })).toHaveLength(1);
  return get(MOVEMENTS.find((k) => k.resource === 'payouts')!, api, created.body.id);
}

async function strand(kind: MovementCase, tenant: Tenant, api: Api) {
  const body = await kind.body(api, 'success');
  const at = kind.abandon.strandedAt;
  const stranded = at === 'payout_claimed' ? await strandClaimedPayout(tenant, api, body) : await strandInProcess(kind, api, at, body);
  expectUntaken(kind, stranded);
  return stranded;
}

/** Created with the scenario's answer; a payout also sent by one worker pass. */
async function create(kind: MovementCase, api: Api, scenario: Scenario, idempotencyKey = crypto.randomUUID()) {
  const body = await kind.body(api, scenario);
  const res = await api.post(`/v1/${kind.resource}`, body, { idempotencyKey });
  expect(res.status, res.text).toBe(201);
  if (kind.sentByWorker) {
    expect(res.body.status).toBe('pending');
    await workerPass();
  }
  return { body, res, after: await get(kind, api, res.body.id) };
}

async function pendingOne(kind: MovementCase, tenant: Tenant, api: Api) {
  const pending = kind.pendingBy === 'crash' ? await strand(kind, tenant, api) : (await create(kind, api, 'pending')).after;
  expect(['pending', 'processing']).toContain(pending.status);
  return pending;
}

// Several processes on one database: PostgreSQL only.
const childEnv = () => ({ DATABASE_URL: h.databaseUrl!, SIMULATOR_URL: simulator.url, IDEMPOTENCY_LOCK_TIMEOUT_S: '3', CONNECTOR_TIMEOUT_MS: '700' });

const retryUntilUnlocked = (tenant: Tenant, kind: MovementCase, idempotencyKey: string, body: unknown) =>
  sendWhileLocked(() => call(h.url, 'POST', `/v1/${kind.resource}`, { key: tenant.testKey, idempotencyKey, body }));

/** Kills a child service with SIGKILL between the phases, then resumes in this process; the processor's count before the resume. */
async function crashAndResume(kind: MovementCase, step: CrashStep) {
  const { tenant, api } = await newTenant();
  const body = await kind.body(api, step.scenario);
  const idempotencyKey = `contract-${crypto.randomUUID()}`;
  const child = h.track(await startChild({ ...childEnv(), ...(step.crashAfter ? { CRASH_AFTER: step.crashAfter } : {}) }));
  const before = step.requestsSoFar?.(sim());
  const request = call(child.url, 'POST', `/v1/${kind.resource}`, { key: tenant.testKey, idempotencyKey, body }).catch((err: Error) => err);
  if (!step.crashAfter) {
    // No crash point: killed by the test once its connector call has reached the processor.
    while (step.requestsSoFar!(sim()) === before && child.process.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
    child.process.kill('SIGKILL');
  }
  // At a crash point the connection dies with the process; a payout's answer (pending) precedes its submission.
  const answer = await request;
  if (step.crashAfter) expect(answer).toBeInstanceOf(Error);
  expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });

  const stranded = await newest(api, kind.resource);
  expectUntaken(kind, stranded);
  await step.book?.(sim(), stranded.id, body);
  const sentBefore = await kind.sent(sim(), stranded.id);

  let resumed;
  if (step.resumedBy === 'retry') {
    const res = await retryUntilUnlocked(tenant, kind, idempotencyKey, body);
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    const replay = await call(h.url, 'POST', `/v1/${kind.resource}`, { key: tenant.testKey, idempotencyKey, body });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(res.text);
    resumed = res.body;
  } else {
    h.service.clock.advance(LATER_MS);
    await workerPass();
    resumed = await get(kind, api, stranded.id);
    const replay = await call(h.url, 'POST', `/v1/${kind.resource}`, { key: tenant.testKey, idempotencyKey, body });
    if (!(answer instanceof Error)) expect(replay.text, 'the stored answer, byte for byte').toBe(answer.text);
  }
  expect(resumed).toMatchObject({ id: stranded.id, status: step.status });
  await expectOnce(kind, tenant, api, stranded.id);
  return { sentBefore, resumed };
}

describe.each(MOVEMENTS)('the movement contract: $name', (kind) => {
  it('create: reaches its state, writes its events once, and a replay answers the same bytes', async () => {
    const { tenant, api } = await newTenant();
    const idempotencyKey = crypto.randomUUID();
    const { body, res, after } = await create(kind, api, 'success', idempotencyKey);
    expect(after.status).toBe(kind.created.status);
    const replay = await api.post(`/v1/${kind.resource}`, body, { idempotencyKey });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(res.text);
    expect(await eventTypesOf(api, after.id)).toEqual(kind.created.events);
    for (const type of kind.created.events) {
      const listed = (await api.get(`/v1/events?type=${type}`)).body.data.filter((e: any) => e.data.object.id === after.id);
      expect(listed, type).toHaveLength(1);
    }
    await expectOnce(kind, tenant, api, after.id);
  });

  it.skipIf(!isPostgres || isNone(kind.crash))(title(kind.crash, 'crash: killed between the phases (SIGKILL), resumed, the money moves once'), async () => {
    const step = kind.crash as CrashStep;
    const { sentBefore } = await crashAndResume(kind, step);
    // Killed before the call (a crash point) nothing was sent; killed during it, the processor had it.
    expect(sentBefore).toBe(step.crashAfter ? 0 : 1);
  }, 120_000);

  it.skipIf(!isPostgres || isNone(kind.adopt))(title(kind.adopt, 'locate and adopt: the processor holds it after the crash, the resume adopts it without sending again'), async () => {
    const { sentBefore, resumed } = await crashAndResume(kind, kind.adopt as CrashStep);
    expect(sentBefore).toBe(1);
    if (resumed.attempts) expect(resumed.attempts, 'the status check stands for the lost attempt').toHaveLength(1);
  }, 120_000);

  const rule = kind.abandon.failureCode ? `fails as ${kind.abandon.failureCode}` : 'is sent again';
  it(`abandon: stranded with no connector, past its deadline the worker ${rule}`, async () => {
    const { tenant, api } = await newTenant();
    const stranded = await strand(kind, tenant, api);
    expect(await kind.sent(sim(), stranded.id)).toBe(0);
    await workerPass();
    expect((await get(kind, api, stranded.id)).status, 'not before its deadline').toBe(stranded.status);
    h.service.clock.advance(LATER_MS);
    await workerPass();
    const after = await get(kind, api, stranded.id);
    expect(after).toMatchObject({ status: kind.abandon.status, ...(kind.abandon.failureCode ? { failure_code: kind.abandon.failureCode } : {}) });
    await expectOnce(kind, tenant, api, stranded.id, kind.abandon.sent);
  });

  it('duplicate inbound event: the same signed processor event twice is applied once', async () => {
    const { tenant, api } = await newTenant();
    const pending = await pendingOne(kind, tenant, api);
    const connector = pending.connector ?? 'simulator_a';
    const body = JSON.stringify({
      event_id: `evt_${crypto.randomUUID()}`,
      event_type: `${kind.simObject}.state_changed`,
      occurred_at: now().toISOString(),
      [kind.simObject]: await kind.settledAtProcessor(sim(), pending.id, connector),
    });
    const deliver = () => sendProcessorEvent(h.url, connector, body, { timestampS: Math.floor(now().getTime() / 1000) });
    const first = await deliver();
    expect(first.body, first.text).toEqual({ received: true, duplicate: false, applied: true });
    const settled = await get(kind, api, pending.id);
    expect(settled.status).toBe(kind.settledStatus);
    expect((await deliver()).body).toEqual({ received: true, duplicate: true, applied: false });
    expect(await get(kind, api, pending.id)).toEqual(settled);
    const [row] = await h.query(sql`SELECT count(*)::int AS n FROM connector_webhook_events WHERE object_id = ${pending.id}`);
    expect(row!.n).toBe(1);
    expect((await eventTypesOf(api, pending.id)).filter((t) => t.endsWith(`.${kind.settledStatus}`))).toHaveLength(1);
    await expectOnce(kind, tenant, api, pending.id, await kind.sent(sim(), pending.id));
  });

  it.skipIf(isNone(kind.helper))(title(kind.helper, 'test helper: a pending one resolves through its test helper'), async () => {
    const { outcome, status } = kind.helper as { outcome: string; status: string };
    const { tenant, api } = await newTenant();
    const pending = await pendingOne(kind, tenant, api);
    const res = await api.post(`/v1/test-helpers/${kind.resource}/${pending.id}/resolve`, { outcome });
    expect(res.status, res.text).toBeLessThan(300);
    expect(res.body).toMatchObject({ id: pending.id, status });
    expect(await get(kind, api, pending.id)).toEqual(res.body);
    await expectOnce(kind, tenant, api, pending.id);
  });
});
