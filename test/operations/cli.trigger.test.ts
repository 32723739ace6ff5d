// `npm run cli -- trigger <event-type>`: every type it lists happens through the public API of a
// running service (and its worker) and shows in GET /v1/events; the flows it drives emit
// only catalogued types, each event matching its type's schema in the served document.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTenant, createTestDatabase, startTestService, type TestDatabase, type TestService } from '../support/helpers.js';
import { documentValidator } from '../support/events.js';
import { runTrigger, TRIGGERABLE } from '../../src/cli/trigger.js';
import { NOT_TRIGGERABLE } from '../../src/cli/trigger-recipes.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { startWorker } from '../../src/worker/worker.js';
import { EVENT_TYPE_NAMES, EVENT_TYPES, isEventType } from '../../src/events/types.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let testDb: TestDatabase;
let service: TestService;
let api: ReturnType<typeof client>;
let testKey: string;

let runtime: Runtime;
let worker: { stop(): Promise<void> } | undefined;

/** The worker expires orders and sends payouts (the API leaves them to it here); stopped while a payout is cancelled. */
function startTestWorker() {
  worker = startWorker({ db: testDb.database.db, log: pino({ level: 'silent' }), payments: runtime, payouts: runtime }, 100);
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  service = await startTestService(testDb, { submitOnCreate: false });
  runtime = createRuntime(service.config, { db: testDb.database.db });
  runtime.connectors.setServiceUrl(service.url);
  startTestWorker();
  testKey = (await createTenant(testDb.database)).testKey;
  api = client(service.url, testKey);
});
afterAll(async () => {
  await worker?.stop();
  runtime?.close();
  await service?.close();
  await testDb?.drop();
});

async function trigger(args: string[], env: NodeJS.ProcessEnv = { API_KEY: testKey }) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runTrigger([...args, '--api-url', service.url], { env, stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('cli trigger', () => {
  it('lists every catalogued type: those it produces, and why not the others', async () => {
    expect([...TRIGGERABLE, ...Object.keys(NOT_TRIGGERABLE)].sort()).toEqual([...EVENT_TYPE_NAMES].sort());
    const { code, stdout } = await trigger(['--list']);
    expect(code).toBe(0);
    for (const type of EVENT_TYPE_NAMES) expect(stdout).toMatch(new RegExp(`^  ${type.replace('.', '\\.')} `, 'm'));
    expect(stdout.indexOf('refund.failed')).toBeGreaterThan(stdout.indexOf('Not produced by trigger'));
  });

  it.each(TRIGGERABLE)('%s: creates what causes it, and the event arrives', async (type) => {
    // A payout is cancellable only until something sends it: as documented, no worker meanwhile.
    const pauseWorker = type === 'payout.cancelled';
    if (pauseWorker) await worker!.stop();
    const { code, stdout, stderr } = await trigger([type]).finally(() => pauseWorker && startTestWorker());
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const [, eventId, objectId] = new RegExp(`^${type.replace('.', '\\.')} (evt_\\w+) \\((\\w+)\\)$`, 'm').exec(stdout) ?? [];
    expect(eventId, stdout).toBeDefined();
    const listed = await api.get(`/v1/events?type=${type}&limit=100`);
    const event = listed.body.data.find((e: any) => e.id === eventId);
    expect(event).toMatchObject({ type, data: { object: { id: objectId, object: EVENT_TYPES[type].object } } });
    expect(stdout).toContain(`-> ${objectId}`);
  });

  it('drove flows that emit only catalogued types, each event valid against its type\'s schema', async () => {
    const validate = documentValidator((await client(service.url).get('/v1/openapi.json')).body);
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = (await api.get(`/v1/events?limit=100${cursor ? `&starting_after=${cursor}` : ''}`)).body;
      for (const event of page.data) {
        expect(isEventType(event.type), event.type).toBe(true);
        expect(event.data.object.object, event.type).toBe(EVENT_TYPES[event.type as keyof typeof EVENT_TYPES].object);
        expect(validate(event), event.type).toEqual([]);
        seen.add(event.type);
      }
      cursor = page.has_more ? page.data.at(-1).id : undefined;
    } while (cursor);
    expect([...seen].sort()).toEqual([...TRIGGERABLE].sort());
  });

  it('refuses unknown and unproducible types, live keys and missing keys, with the reason', async () => {
    const typo = await trigger(['payment.succeded']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown event type "payment\.succeded"; did you mean "payment\.succeeded"\? It can produce: payment_order\.created, /);
    const never = await trigger(['mandate.expired']);
    expect(never).toMatchObject({ code: 2, stderr: expect.stringContaining('trigger cannot produce mandate.expired: only after MANDATE_DORMANCY_DAYS') });
    expect((await trigger(['payment.succeeded'], { API_KEY: 'sk_live_abc' })).stderr).toContain('test mode only');
    expect((await trigger(['payment.succeeded'], {})).stderr).toContain('set API_KEY');
    expect((await trigger([])).code).toBe(2);
  });

  it('says what the API answered when it refuses', async () => {
    const refused = await trigger(['payment.succeeded'], { API_KEY: 'sk_test_notakeyatall0000000000000000' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/POST \/v1\/payment-orders answered 401 api_key_invalid/);
  });

  it('is wired into the command line', () => {
    const list = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'trigger', '--list'], { cwd: ROOT, encoding: 'utf8' });
    expect(list.status).toBe(0);
    expect(list.stdout).toContain('payment.succeeded');
    const help = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', '--help'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, DATABASE_URL: '' } });
    expect(help.stdout).toContain('trigger <event-type>');
  });
});
