// Crash safety of mandates and debits through GoCardless (docs/processors.md, crash recovery): a service runs as a real OS
// process against the fake GoCardless, is killed with SIGKILL between the phases of a mandate's
// set-up or a debit (CRASH_AFTER), and the same request is retried with the same Idempotency-Key
// on another process on the same database. It must resume and never set up or debit twice: the
// retry first asks GoCardless for an object under our id (by the metadata it carries), adopts
// one it finds, and sends only when there is none. PostgreSQL only (several processes).
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { call, client, isPostgres, orderBody, type Api, type Tenant } from '../support/helpers.js';
import { startChild, sendWhileLocked, type Child } from '../support/processes.js';
import { useDatabase } from '../support/fixtures.js';
import { expectLedgerClean } from '../support/payouts.js';
import { createConnectorAccount } from '../support/connectors.js';
import { FakeGoCardless, gocardlessWebhook } from '../support/fakes/gocardless.js';
import { mandateBody } from '../support/mandates.js';

const SECRET = 'gc-crash-webhook-secret';

describe.skipIf(!isPostgres)('a service killed between the phases of a GoCardless mandate or debit', () => {
  const fake = new FakeGoCardless();
  beforeAll(() => fake.start());
  afterAll(() => fake.close());
  const h = useDatabase({ postgresOnly: true });
  let tenant: Tenant;
  let survivor: Child;
  let api: Api;
  let webhookUrl: string;
  const env = () => ({ DATABASE_URL: h.databaseUrl!, IDEMPOTENCY_LOCK_TIMEOUT_S: '3', CONNECTOR_TIMEOUT_MS: '700', GOCARDLESS_API_BASE_URL: fake.url });
  beforeAll(async () => {
    tenant = await h.createTenant('GoCardless crash tenant');
    survivor = h.track(await startChild(env()));
    api = client(survivor.url, tenant.testKey);
    const account = await createConnectorAccount(api, 'gocardless', 'gc', { access_token: `sandbox_${'c'.repeat(30)}`, webhook_secret: SECRET });
    webhookUrl = account.webhook_url;
    const rules = await api.request('PUT', '/v1/routing', { body: { rules: [{ payment_method_types: ['mandate'], connectors: [{ name: 'gc' }, { name: 'simulator_b' }] }] } });
    expect(rules.status, rules.text).toBe(200);
  }, 120_000);

  async function crashing(crashAfter: string, path: string, body: unknown, idempotencyKey: string) {
    const child = h.track(await startChild({ ...env(), CRASH_AFTER: crashAfter }));
    const attempt = await call(child.url, 'POST', path, { key: tenant.testKey, idempotencyKey, body }).catch((err: Error) => err);
    expect(attempt).toBeInstanceOf(Error);
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
  }
  const retry = (path: string, body: unknown, idempotencyKey: string) => sendWhileLocked(() => call(survivor.url, 'POST', path, { key: tenant.testKey, idempotencyKey, body }));

  async function activeMandate() {
    const res = await call(survivor.url, 'POST', '/v1/mandates', { key: tenant.testKey, idempotencyKey: crypto.randomUUID(), body: mandateBody('sepa_core') });
    expect(res.status, res.text).toBe(201);
    const { body, headers } = gocardlessWebhook([fake.setMandate(res.body.connector_reference, 'active')], SECRET);
    expect((await fetch(webhookUrl, { method: 'POST', headers, body })).status).toBe(200);
    return res.body as { id: string };
  }

  it('killed after the mandate was committed, before GoCardless was called: set up once on retry', async () => {
    const body = mandateBody('sepa_core');
    const idempotencyKey = `mandate-crash-${crypto.randomUUID()}`;
    await crashing('mandate_created', '/v1/mandates', body, idempotencyKey);
    const [row] = await h.query(sql`SELECT id, status, connector FROM mandates WHERE reference = ${body.reference}`);
    expect(row).toMatchObject({ status: 'pending', connector: null });
    const res = await retry('/v1/mandates', body, idempotencyKey);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'pending', connector_reference: expect.stringMatching(/^MD/) });
    expect(fake.requests.get(res.body.id)).toBe(1);
    expect([...fake.objects.mandates.values()].filter((m) => m.metadata?.mandate_id === res.body.id)).toHaveLength(1);
  }, 120_000);

  it('killed after GoCardless took the debit, before the answer was committed: found and adopted, not debited again', async () => {
    const mandate = await activeMandate();
    const order = await call(survivor.url, 'POST', '/v1/payment-orders', { key: tenant.testKey, idempotencyKey: crypto.randomUUID(), body: orderBody({ amount: 3100 }) });
    const body = { payment_order: order.body.id, payment_method: { type: 'mandate', mandate: mandate.id } };
    const idempotencyKey = `debit-crash-${order.body.id}`;
    await crashing('payment_connector_answered', '/v1/payments', body, idempotencyKey);
    const res = await retry('/v1/payments', body, idempotencyKey);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'pending', connector_reference: expect.stringMatching(/^PM/) });
    expect(fake.requests.get(res.body.id)).toBe(1);
    expect(fake.paymentOf(res.body.id)).toMatchObject({ id: res.body.connector_reference, amount: 3100 });

    const { body: confirmed, headers } = gocardlessWebhook([fake.setPayment(res.body.connector_reference, 'confirmed')], SECRET);
    expect((await fetch(webhookUrl, { method: 'POST', headers, body: confirmed })).status).toBe(200);
    const entries = await h.query(sql`SELECT type FROM journal_entries WHERE source_id = ${parseId('pay', res.body.id)!}`);
    expect(entries).toEqual([{ type: 'payment' }]);
    await expectLedgerClean(h.db, tenant.accountId);
  }, 120_000);
});
