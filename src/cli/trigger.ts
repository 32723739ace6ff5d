// `npm run cli -- trigger <event-type>`: makes one event of that type happen in test mode, like
// `stripe trigger`, by creating through the public API the objects that cause it (recipes in
// trigger-recipes.ts), then waits until GET /v1/events shows it. Every endpoint subscribed to the
// type, and `listen`, receive it as they would a real one. It talks to a running service with a
// test key, like `listen`: no database access.
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import { EVENT_TYPE_NAMES, isEventType, type EventType } from '../events/types.js';
import { closest } from '../kernel/closest.js';
import { UsageError, apiTarget, requireInteger } from './args.js';
import { NOT_TRIGGERABLE, RECIPES, type TriggerApi } from './trigger-recipes.js';

export interface TriggerIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

export type TriggerCommand = { list: true } | { list: false; type: EventType; apiUrl: string; apiKey: string; timeoutMs: number };

/** The event types trigger can produce, in catalogue order. */
export const TRIGGERABLE = EVENT_TYPE_NAMES.filter((type) => RECIPES[type] !== undefined);

/** An answer of the API other than 2xx, or no answer: exit code 1. */
export class TriggerFailure extends Error {}

export const TRIGGER_USAGE =
  'usage: API_KEY=sk_test_… npm run cli -- trigger <event-type> [--api-url URL] [--timeout-s N]\n' +
  '       npm run cli -- trigger --list\n' +
  '  <event-type>  what to make happen (trigger --list shows them)\n' +
  '  --api-key     the test key to act with (default: $API_KEY; the variable keeps it out of shell history)\n' +
  '  --api-url     the service (default: $API_URL or http://127.0.0.1:3000)\n' +
  '  --timeout-s   how long to wait for the event once the objects exist (default: 10, 30 for those the worker or a bank produce)\n';

export function parseTriggerArgs(argv: string[], env: NodeJS.ProcessEnv): TriggerCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { list: { type: 'boolean' }, 'api-key': { type: 'string' }, 'api-url': { type: 'string' }, 'timeout-s': { type: 'string' } },
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    throw new UsageError(String((err as Error).message).split('\n')[0]!);
  }
  const { values: v, positionals } = parsed;
  if (v.list) {
    if (positionals.length > 0) throw new UsageError('--list takes no event type');
    return { list: true };
  }
  if (positionals.length !== 1) throw new UsageError(positionals.length ? 'give one event type' : 'which event type? (trigger --list shows them)');
  const type = checkType(positionals[0]!);
  const { apiKey, apiUrl } = apiTarget(v, env);
  if (!apiKey.startsWith('sk_test_')) throw new UsageError('trigger works in test mode only: use a test key (sk_test_…)');
  const timeoutMs = v['timeout-s'] === undefined ? (RECIPES[type]!.waitMs ?? 10_000) : requireInteger('timeout-s', v['timeout-s'], 1, 600) * 1000;
  return { list: false, type, apiUrl, apiKey, timeoutMs };
}

function checkType(name: string): EventType {
  if (isEventType(name) && RECIPES[name]) return name;
  if (isEventType(name)) throw new UsageError(`trigger cannot produce ${name}: ${NOT_TRIGGERABLE[name] ?? 'no recipe'}`);
  throw new UsageError(`unknown event type ${JSON.stringify(name)}; did you mean ${JSON.stringify(closest(name, TRIGGERABLE))}? It can produce: ${TRIGGERABLE.join(', ')}`);
}

export function listText(): string {
  const width = Math.max(...TRIGGERABLE.map((t) => t.length));
  const rows = TRIGGERABLE.map((type) => `  ${type.padEnd(width)}  ${RECIPES[type]!.does}`);
  const others = Object.entries(NOT_TRIGGERABLE).map(([type, why]) => `  ${type.padEnd(width)}  ${why}`);
  return `Event types trigger can produce (test mode):\n${rows.join('\n')}\n\nNot produced by trigger:\n${others.join('\n')}\n`;
}

/** The API with the key, saying each call; POSTs carry a fresh Idempotency-Key, as money-moving ones must. */
function apiClient(apiUrl: string, apiKey: string, io: TriggerIo): TriggerApi {
  return {
    async call(method, path, body) {
      const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (method === 'POST') headers['idempotency-key'] = `cli-trigger-${crypto.randomUUID()}`;
      const res = await request(`${apiUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      const answer = parse(text);
      if (res.status < 200 || res.status > 299) {
        const error = (answer as { error?: { code?: string; message?: string } } | undefined)?.error;
        throw new TriggerFailure(`${method} ${path} answered ${res.status}${error ? ` ${error.code}: ${error.message}` : `: ${text.slice(0, 300)}`}`);
      }
      const object = answer as { id: string; status?: string };
      io.stdout(`  ${method} ${path} -> ${object.id}${object.status ? ` (${object.status})` : ''}\n`);
      return object;
    },
  };
}

async function request(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  } catch (err) {
    throw new TriggerFailure(`cannot reach the service at ${new URL(url).origin}: ${(err as Error).message}`);
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

interface ListedEvent {
  id: string;
  type: string;
  data: { object: { id: string } };
}

/** Polls GET /v1/events for the type until an event about `objectId` shows; its id, or undefined at the deadline. */
async function waitForEvent(opts: { apiUrl: string; apiKey: string; type: EventType; timeoutMs: number }, objectId: string, since: Date): Promise<string | undefined> {
  const deadline = Date.now() + opts.timeoutMs;
  const query = new URLSearchParams({ type: opts.type, limit: '100', 'created[gte]': since.toISOString() });
  for (;;) {
    const res = await request(`${opts.apiUrl}/v1/events?${query}`, { headers: { authorization: `Bearer ${opts.apiKey}` } });
    const text = await res.text();
    if (res.status !== 200) throw new TriggerFailure(`GET /v1/events answered ${res.status}: ${text.slice(0, 300)}`);
    const found = (JSON.parse(text) as { data: ListedEvent[] }).data.find((e) => e.data.object.id === objectId);
    if (found) return found.id;
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Runs `trigger`; answers the exit code (0 the event happened, 1 it did not or the API refused, 2 usage). */
export async function runTrigger(argv: string[], io: TriggerIo & { env: NodeJS.ProcessEnv }): Promise<number> {
  let command: TriggerCommand;
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      io.stdout(TRIGGER_USAGE);
      return 0;
    }
    command = parseTriggerArgs(argv, io.env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr(`error: ${err.message}\n${TRIGGER_USAGE}`);
    return 2;
  }
  if (command.list) {
    io.stdout(listText());
    return 0;
  }
  // Margin for a service clock behind this one: the event is also matched by its object's id.
  const since = new Date(Date.now() - 60_000);
  try {
    io.stdout(`Triggering ${command.type} at ${command.apiUrl}\n`);
    const objectId = await RECIPES[command.type]!.run(apiClient(command.apiUrl, command.apiKey, io), command.type);
    const eventId = await waitForEvent(command, objectId, since);
    if (!eventId) {
      io.stderr(`error: no ${command.type} event about ${objectId} within ${command.timeoutMs / 1000} s\n`);
      return 1;
    }
    io.stdout(`${command.type} ${eventId} (${objectId})\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof TriggerFailure)) throw err;
    io.stderr(`error: ${err.message}\n`);
    return 1;
  }
}
