// One webhook HTTP request: POST with a whole-request deadline, redirects not followed (a 3xx is a
// failure like any non-2xx), keep-alive connections, and — in guarded mode — the SSRF check on
// every address the name resolves to, inside the connection's own lookup, so the address checked
// is the address connected to.
//
// The client is undici's Agent rather than node:http, whose request objects were most of a
// delivery's CPU in the worker (docs/benchmarks.md). Its connector hands `lookup` to
// net/tls.connect, where node:http's agent put it too, so the guard still runs in the connection's
// own lookup. Its own timers are off or bound to the deadline, so that every way of running out of
// time ends as the same 'timeout'.
import dns from 'node:dns';
import net from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { hostOf, isForbiddenAddress, PRIVATE_DESTINATION } from './ssrf.js';

export interface LookupAddress {
  address: string;
  family: number;
}

/** Name resolution, injectable so tests can play DNS rebinding. Default: the system resolver. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Refuse private, loopback and link-local destinations. */
  guarded: boolean;
}

export type SendErrorCode =
  | 'timeout'
  | 'connection_refused'
  | 'connection_reset'
  | 'dns_failure'
  | 'destination_forbidden'
  | 'tls_error'
  | 'connection_error'
  | 'invalid_url'
  | 'signing_failed';

export interface SendResult {
  /** The HTTP status, or null when no response arrived. */
  statusCode: number | null;
  /** Retry-After of the response, in seconds, when present and sensible. */
  retryAfterS: number | null;
  durationMs: number;
  errorCode: SendErrorCode | null;
  errorMessage: string | null;
}

export interface Sender {
  send(request: SendRequest): Promise<SendResult>;
  close(): void;
}

class ForbiddenDestination extends Error {
  readonly code = 'EFORBIDDEN';
}

/** Seconds from a Retry-After header (delta-seconds or HTTP-date), or null. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isFinite(at)) return Math.max(0, Math.ceil((at - nowMs) / 1000));
  return null;
}

function classify(err: NodeJS.ErrnoException): { errorCode: SendErrorCode; errorMessage: string } {
  const code = err.code ?? '';
  if (err instanceof ForbiddenDestination) return { errorCode: 'destination_forbidden', errorMessage: err.message };
  if (code === 'ECONNREFUSED') return { errorCode: 'connection_refused', errorMessage: 'The connection was refused.' };
  // UND_ERR_SOCKET: undici's name for the peer closing the connection before the answer was complete.
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') {
    return { errorCode: 'connection_reset', errorMessage: 'The connection was reset before a response arrived.' };
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return { errorCode: 'dns_failure', errorMessage: `The host name could not be resolved (${code}).` };
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL') || /SSL|TLS/.test(code)) {
    return { errorCode: 'tls_error', errorMessage: `TLS failed (${code}).` };
  }
  return { errorCode: 'connection_error', errorMessage: `The request failed (${code || err.name}).` };
}

const MAX_DRAINED_BYTES = 1024 * 1024;

export function createSender(opts: { maxSockets?: number; resolver?: Resolver } = {}): Sender {
  const resolver = opts.resolver ?? systemResolver;
  const connections = opts.maxSockets ?? 256;

  function lookupFor(guarded: boolean): net.LookupFunction {
    return (hostname, options, callback) => {
      resolver(hostname).then(
        (addresses) => {
          const family = (options as dns.LookupOptions).family;
          const usable = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
          if (usable.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
          const forbidden = guarded ? usable.find((a) => isForbiddenAddress(a.address)) : undefined;
          if (forbidden) {
            return callback(
              new ForbiddenDestination(`${hostname} resolves to ${forbidden.address}, ${PRIVATE_DESTINATION}.`),
              '',
              0,
            );
          }
          if ((options as dns.LookupAllOptions).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
          callback(null, usable[0]!.address, usable[0]!.family);
        },
        (err: NodeJS.ErrnoException) => callback(err, '', 0),
      );
    };
  }

  // Separate pools, so a connection opened without the guard is never reused by a guarded request;
  // and one per deadline, because a connection attempt is given up at its request's deadline (as
  // node:http's request destroyed its socket), not at undici's own 10 s.
  const agents = new Map<string, Agent>();
  function agentFor(guarded: boolean, timeoutMs: number): Agent {
    const key = `${guarded}/${timeoutMs}`;
    let agent = agents.get(key);
    if (!agent) {
      agent = new Agent({
        connections,
        pipelining: 1,
        headersTimeout: 0,
        bodyTimeout: 0,
        connect: { lookup: lookupFor(guarded), timeout: timeoutMs },
      });
      agents.set(key, agent);
    }
    return agent;
  }

  function send(request: SendRequest): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const fail = (errorCode: SendErrorCode, errorMessage: string): SendResult => ({
      statusCode: null,
      retryAfterS: null,
      durationMs: elapsed(),
      errorCode,
      errorMessage,
    });
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return Promise.resolve(fail('invalid_url', 'The endpoint URL is not valid.'));
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.resolve(fail('invalid_url', 'The endpoint URL must be http or https.'));
    const host = hostOf(url);
    // An address literal never goes through the lookup, so it is checked here.
    if (request.guarded && net.isIP(host) && isForbiddenAddress(host)) {
      return Promise.resolve(fail('destination_forbidden', `${host} is ${PRIVATE_DESTINATION}.`));
    }
    const timedOut = () => fail('timeout', `No response within ${request.timeoutMs} ms.`);

    return new Promise<SendResult>((resolve) => {
      let settled = false;
      let controller: Dispatcher.DispatchController | undefined;
      let drainTimer: NodeJS.Timeout | undefined;
      let received = 0;
      const finish = (result: SendResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const timer = setTimeout(() => {
        finish(timedOut());
        // Not yet on a connection: onRequestStart gives it up before a byte is written.
        controller?.abort(new Error('deadline'));
      }, request.timeoutMs);
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(c) {
          controller = c;
          if (settled) c.abort(new Error('deadline'));
        },
        onResponseStart(c, statusCode, headers) {
          if (statusCode < 200) return;
          const retryAfter = headers['retry-after'];
          finish({
            statusCode,
            retryAfterS: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()),
            durationMs: elapsed(),
            errorCode: null,
            errorMessage: null,
          });
          // The answer is known; the body is read and thrown away so the connection can be reused,
          // but never for longer than the deadline nor beyond 1 MiB.
          drainTimer = setTimeout(() => c.abort(new Error('drain deadline')), request.timeoutMs).unref();
        },
        onResponseData(c, chunk) {
          received += chunk.length;
          if (received > MAX_DRAINED_BYTES) c.abort(new Error('body too large'));
        },
        onResponseEnd() {
          clearTimeout(drainTimer);
        },
        onResponseError(_c, err) {
          clearTimeout(drainTimer);
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'UND_ERR_CONNECT_TIMEOUT') return finish(timedOut());
          const { errorCode, errorMessage } = classify(err as NodeJS.ErrnoException);
          finish(fail(errorCode, errorMessage));
        },
      };
      try {
        agentFor(request.guarded, request.timeoutMs).dispatch(
          {
            origin: url.origin,
            path: url.pathname + url.search,
            method: 'POST',
            headers: { ...request.headers, 'content-type': 'application/json', 'user-agent': 'payment-orchestrator-webhooks/1' },
            body: request.body,
          },
          handler,
        );
      } catch (err) {
        // Rejected before it was queued (e.g. a header value undici refuses).
        finish(fail('connection_error', `The request failed (${(err as NodeJS.ErrnoException).code ?? (err as Error).name}).`));
      }
    });
  }

  return {
    send,
    close() {
      for (const agent of agents.values()) void agent.destroy().catch(() => undefined);
      agents.clear();
    },
  };
}
