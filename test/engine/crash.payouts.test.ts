// Crash safety of payouts over every payout harness (docs/processors.md, crash recovery): a service process submitting a
// payout right after creating it is killed with SIGKILL between the phases (CRASH_AFTER
// payout_submitted: claimed and marked processing, no bank called; payout_connector_answered: the
// bank took it, the outcome not committed), and the worker of another process on the same database
// (started after the crash) takes the payout over once its lease ends: it asks every connector of
// the route whether it holds the payout, adopts it where one does, and sends it only where none
// does — one payout at the processor, never a second one anywhere. PostgreSQL only (several processes on one database).
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, eventually, isPostgres, type Api, type Tenant } from '../support/helpers.js';
import { startChild, type Child } from '../support/processes.js';
import { useDatabase } from '../support/fixtures.js';
import { balanceOf } from '../support/payments.js';
import { expectLedgerClean, newBeneficiary } from '../support/payouts.js';
import type { Connected } from '../connectors/contract/harness.js';
import { PAYOUT_HARNESSES } from '../connectors/contract/payout-harnesses.js';
import { routePayoutsThrough } from '../connectors/contract/payouts.js';
import { BACKUP } from '../connectors/contract/scenarios.js';

for (const make of PAYOUT_HARNESSES) {
  const harness = make();
  const { books } = harness;
  describe.skipIf(!isPostgres || !harness.capabilities.has('processes') || !books)(`a payout killed between its phases, over ${harness.name}`, () => {
    beforeAll(() => harness.start());
    afterAll(() => harness.close());
    const h = useDatabase({ postgresOnly: true });
    let tenant: Tenant;
    let survivor: Child;
    let api: Api;
    let processor: Connected;
    let beneficiary: string;
    const env = () => ({ DATABASE_URL: h.databaseUrl!, IDEMPOTENCY_LOCK_TIMEOUT_S: '3', CONNECTOR_TIMEOUT_MS: '700', STATUS_CHECK_INTERVAL_MS: '200', ...harness.processEnv() });
    beforeAll(async () => {
      tenant = await h.createTenant('Payout crash tenant');
      survivor = h.track(await startChild({ ...env(), PAYOUT_SUBMIT_ON_CREATE: 'false' }, 120_000));
      api = client(survivor.url, tenant.testKey);
      processor = await harness.connect(api, survivor.url);
      await routePayoutsThrough(api, processor);
      await api.post('/v1/test-helpers/balance/fund', { amount: 100_000, currency: 'EUR' });
      beneficiary = (await newBeneficiary(api, harness.account.ending, harness.account.format)).id;
    }, 300_000);

    /** Creates a payout on a process that submits it at once and dies at `crashAfter`; the payout's id. */
    async function crashing(crashAfter: string, amount: number): Promise<string> {
      const child = h.track(await startChild({ ...env(), CRASH_AFTER: crashAfter, PAYOUT_SUBMIT_ON_CREATE: 'true' }, 120_000));
      const reference = `crash-${crypto.randomUUID()}`;
      const body = { beneficiary, amount, currency: 'EUR', reference };
      // The answer (pending) may or may not leave before the submission behind it kills the process.
      await call(child.url, 'POST', '/v1/payouts', { key: tenant.testKey, idempotencyKey: reference, body }).catch(() => undefined);
      expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
      const listed = await api.get(`/v1/payouts?reference=${reference}`);
      expect(listed.body.data).toEqual([expect.objectContaining({ status: 'processing', connector: null })]);
      return listed.body.data[0].id;
    }

    // A worker runs only while no crashing process is submitting: it would otherwise claim the new
    // payout first (it submits pending payouts too) and the process would never reach its crash point.
    const withWorker = async <T>(work: () => Promise<T>): Promise<T> => {
      const worker = h.track(await startChild({ ...env(), ROLES: 'worker', WORKER_INTERVAL_MS: '100' }, 120_000));
      try {
        return await work();
      } finally {
        await worker.close();
      }
    };
    /** Another process's worker, once the lease of the crashed submission ends, settles where the payout is held. */
    const recovered = (id: string) => withWorker(() => eventually(async () => (await api.get(`/v1/payouts/${id}`)).body, (p) => p.connector !== null, 30_000));

    it('killed after the payout was marked processing, before any bank was called: sent once by the worker', async () => {
      const id = await crashing('payout_submitted', 1100);
      expect(await books!.requests(id)).toBe(0);
      const payout = await recovered(id);
      expect(payout).toMatchObject({ status: 'processing', connector: processor.connector, connector_reference: expect.any(String) });
      expect([await books!.held(id), await books!.requests(id)]).toEqual([1, 1]);
      await expectLedgerClean(h.db, tenant.accountId);
    }, 300_000);

    it('killed after the bank took the payout, before the outcome was committed: found, not sent again', async () => {
      const id = await crashing('payout_connector_answered', 1200);
      expect([await books!.held(id), await books!.requests(id)]).toEqual([1, 1]);
      const payout = await recovered(id);
      expect(payout).toMatchObject({ status: 'processing', connector: processor.connector, connector_reference: expect.any(String) });
      expect(payout.attempts).toEqual([expect.objectContaining({ connector: processor.connector, outcome: 'pending' })]);
      expect([await books!.held(id), await books!.requests(id)]).toEqual([1, 1]);
      await expectLedgerClean(h.db, tenant.accountId);
    }, 300_000);

    it.skipIf(!harness.faults || !harness.settle)('the processor refused, the backup paid, then killed: adopted at the backup, nothing at the processor', async () => {
      // The payouts in transit are settled first (a worker applies what the processor reports), so
      // that the refusal below meets the crashing process's request and not a status check.
      const inTransit = (await api.get('/v1/payouts?status=processing')).body.data as { id: string; connector_reference: string | null }[];
      for (const p of inTransit) await harness.settle!(p, 'paid');
      const settled = await withWorker(() => eventually(async () => (await api.get('/v1/payouts?status=processing')).body.data, (data) => data.length === 0, 30_000));
      expect(settled).toEqual([]);
      harness.faults!.refuseNext();
      const id = await crashing('payout_connector_answered', 1300);
      const payout = await recovered(id);
      expect(payout).toMatchObject({ connector: BACKUP });
      expect(await books!.held(id)).toBe(0);
      // The two earlier payouts paid; this one reserved until the backup's bank answers, and paid once.
      expect(await balanceOf(api)).toEqual({ available: 100_000 - 1100 - 1200 - 1300, reserved: payout.status === 'paid' ? 0 : 1300, pending: 0 });
      await expectLedgerClean(h.db, tenant.accountId);
    }, 300_000);
  });
}
