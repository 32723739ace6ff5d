// `npm run cli -- listen`: forwards one mode's events to a local URL while you develop, like
// `stripe listen`. It polls GET /v1/events with an API key (so it works against any running
// service, local or remote, without database access) and POSTs each new event to --forward-to,
// signed exactly like real deliveries (Standard Webhooks headers, the same body), with a secret
// of its own that it prints at start (or --secret). It forwards once, without retries: a webhook
// your code refused can be sent again with POST /v1/events/{id}/redeliver to a real endpoint, or by
// triggering the change again.
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { newWebhookSecret, signedHeaders, SECRET_PREFIX } from '../domain/webhooks/signing.js';
import { createSender, type Sender } from '../domain/webhooks/sender.js';
import { UsageError, apiTarget, requireInteger } from './args.js';

export interface ListenOptions {
  apiUrl: string;
  apiKey: string;
  forwardTo: string;
  /** Event type filter with `*` wildcards, as GET /v1/events?type=. */
  events?: string;
  secret: string;
  intervalMs: number;
  /** The key came from --api-key, where `ps` shows it to every user of the machine. */
  keyOnCommandLine?: boolean;
}

export interface ListenIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

interface Event {
  id: string;
  type: string;
  created_at: string;
}

/** Events older than the newest seen by this much are looked at again, for commits that land late. */
const LOOKBACK_MS = 60_000;

export const LISTEN_USAGE =
  'usage: npm run cli -- listen --forward-to URL [--api-key sk_test_…] [--api-url URL] [--events TYPE] [--secret whsec_…] [--interval-ms N]\n' +
  '  --forward-to   where to POST each event, e.g. http://localhost:4242/webhooks\n' +
  '  --api-key      the key whose account and mode to listen to; prefer $API_KEY, which wins\n' +
  '                 (a key on the command line is visible to every user of the machine in `ps`)\n' +
  '  --api-url      the service (default: $API_URL or http://127.0.0.1:3000)\n' +
  '  --events       only these event types, `*` wildcards allowed (payment_order.*)\n' +
  '  --secret       the signing secret to use (default: a new one, printed at start)\n' +
  '  --interval-ms  how often to poll (default 1000)\n';

export function parseListenArgs(argv: string[], env: NodeJS.ProcessEnv): ListenOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        'forward-to': { type: 'string' },
        'api-key': { type: 'string' },
        'api-url': { type: 'string' },
        events: { type: 'string' },
        secret: { type: 'string' },
        'interval-ms': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    throw new UsageError(String((err as Error).message).split('\n')[0]!);
  }
  const v = parsed.values;
  const forwardTo = v['forward-to'];
  if (!forwardTo) throw new UsageError('--forward-to is required');
  if (!/^https?:\/\//.test(forwardTo) || !URL.canParse(forwardTo)) throw new UsageError('--forward-to must be an http or https URL');
  const { apiKey, apiUrl } = apiTarget(v, env);
  const secret = v.secret ?? newWebhookSecret();
  if (!secret.startsWith(SECRET_PREFIX) || Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64').length < 24) {
    throw new UsageError('--secret must look like whsec_<base64 of at least 24 bytes>');
  }
  if (v.events !== undefined && !/^[a-z_.*]{1,100}$/.test(v.events)) throw new UsageError('--events must be an event type, with * wildcards');
  return {
    apiUrl,
    apiKey,
    forwardTo,
    events: v.events,
    secret,
    intervalMs: v['interval-ms'] === undefined ? 1000 : requireInteger('interval-ms', v['interval-ms'], 50, 3_600_000),
    keyOnCommandLine: !env.API_KEY,
  };
}

class ApiFailure extends Error {}

async function fetchWindow(opts: ListenOptions, since: string | undefined, maxPages = 100): Promise<Event[]> {
  const found: Event[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const query = new URLSearchParams({ limit: '100' });
    if (since) query.set('created[gte]', since);
    if (opts.events) query.set('type', opts.events);
    if (cursor) query.set('starting_after', cursor);
    const res = await fetch(`${opts.apiUrl}/v1/events?${query}`, {
      headers: { authorization: `Bearer ${opts.apiKey}` },
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    if (res.status !== 200) {
      let message = text.slice(0, 300);
      try {
        message = JSON.parse(text).error.message;
      } catch {
        // not our error body: show the start of it
      }
      throw new ApiFailure(`GET /v1/events answered ${res.status}: ${message}`);
    }
    const list = JSON.parse(text) as { data: Event[]; has_more: boolean };
    // keep the raw objects: what is forwarded is exactly what the API returned
    found.push(...list.data);
    if (!list.has_more || list.data.length === 0) break;
    cursor = list.data[list.data.length - 1]!.id;
  }
  return found;
}

/** Polls and forwards until `signal` aborts. Resolves with the number of events forwarded. */
export async function listen(opts: ListenOptions, io: ListenIo, signal: AbortSignal, sender: Sender = createSender({ maxSockets: 4 })): Promise<number> {
  const seen = new Map<string, number>();
  let newestMs: number | undefined;
  let forwarded = 0;
  const sinceIso = () => (newestMs === undefined ? undefined : new Date(newestMs - LOOKBACK_MS).toISOString());
  const remember = (events: Event[]) => {
    for (const e of events) {
      const at = Date.parse(e.created_at);
      seen.set(e.id, at);
      if (newestMs === undefined || at > newestMs) newestMs = at;
    }
    if (newestMs !== undefined) for (const [id, at] of seen) if (at < newestMs - 2 * LOOKBACK_MS) seen.delete(id);
  };

  // What already happened is not forwarded: only events from now on.
  remember(await fetchWindow(opts, undefined, 1));
  if (newestMs !== undefined) remember(await fetchWindow(opts, sinceIso()));
  io.stderr(
    `Ready. Forwarding ${opts.events ?? 'all'} events of this key's account and mode to ${opts.forwardTo}\n` +
      `Your webhook signing secret is ${opts.secret} (verify with it as with a real endpoint)\n`,
  );
  try {
    while (!signal.aborted) {
      // timers/promises takes its abort listener off the long-lived signal when the timer fires
      // (one added per poll and never removed would pile up: MaxListenersExceededWarning).
      await sleep(opts.intervalMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) break;
      let fresh: Event[];
      try {
        fresh = (await fetchWindow(opts, sinceIso())).filter((e) => !seen.has(e.id)).reverse();
      } catch (err) {
        io.stderr(`warning: ${(err as Error).message}; retrying\n`);
        continue;
      }
      for (const event of fresh) {
        const body = JSON.stringify(event);
        const result = await sender.send({
          url: opts.forwardTo,
          headers: { ...signedHeaders([opts.secret], event.id, Math.floor(Date.now() / 1000), body) },
          body,
          timeoutMs: 15_000,
          guarded: false,
        });
        remember([event]);
        forwarded++;
        const outcome = result.statusCode !== null ? `[${result.statusCode}]` : `[${result.errorCode}: ${result.errorMessage}]`;
        io.stdout(`${new Date().toISOString()}  --> ${event.type} ${event.id}  <-- ${outcome} ${result.durationMs} ms\n`);
      }
    }
  } finally {
    sender.close();
  }
  return forwarded;
}

/** The command: parses flags and listens until Ctrl-C. Exit code 0 on Ctrl-C, 2 on usage errors. */
export async function runListen(argv: string[], io: ListenIo & { env: NodeJS.ProcessEnv }): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout(LISTEN_USAGE);
    return 0;
  }
  let opts: ListenOptions;
  try {
    opts = parseListenArgs(argv, io.env);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`error: ${err.message}\n${LISTEN_USAGE}`);
      return 2;
    }
    throw err;
  }
  if (opts.keyOnCommandLine) {
    io.stderr('warning: a key given with --api-key is visible to every user of this machine (ps); set API_KEY in the environment instead\n');
  }
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await listen(opts, io, controller.signal);
    return 0;
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\n`);
    return 1;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
