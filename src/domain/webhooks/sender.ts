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

function failure(started: number, errorCode: SendErrorCode, errorMessage: string): SendResult {
  return { statusCode: null, retryAfterS: null, durationMs: Math.round(performance.now() - started), errorCode, errorMessage };
}

// One request's handler. A class, and timers given their object as an argument, because a backlog
// sends thousands of requests a second and closures made per request were a visible share of it.
class Exchange implements Dispatcher.DispatchHandler {
  private settled = false;
  private controller: Dispatcher.DispatchController | undefined;
  private readonly deadline: NodeJS.Timeout;
  private drainTimer: NodeJS.Timeout | undefined;
  private received = 0;
  private readonly started = performance.now();

  constructor(
    private readonly timeoutMs: number,
    private readonly resolve: (result: SendResult) => void,
  ) {
    this.deadline = setTimeout(onDeadline, timeoutMs, this);
  }

  finish(result: SendResult) {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.deadline);
    this.resolve(result);
  }

  fail(errorCode: SendErrorCode, errorMessage: string) {
    this.finish(failure(this.started, errorCode, errorMessage));
  }

  timedOut() {
    this.fail('timeout', `No response within ${this.timeoutMs} ms.`);
    // Not yet on a connection: onRequestStart gives it up before a byte is written.
    this.controller?.abort(new Error('deadline'));
  }

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.controller = controller;
    if (this.settled) controller.abort(new Error('deadline'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>) {
    if (statusCode < 200) return;
    const retryAfter = headers['retry-after'];
    this.finish({
      statusCode,
      retryAfterS: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()),
      durationMs: Math.round(performance.now() - this.started),
      errorCode: null,
      errorMessage: null,
    });
    // The answer is known; the body is read and thrown away so the connection can be reused,
    // but never for longer than the deadline nor beyond 1 MiB.
    this.drainTimer = setTimeout(stopDraining, this.timeoutMs, controller).unref();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    this.received += chunk.length;
    if (this.received > MAX_DRAINED_BYTES) controller.abort(new Error('body too large'));
  }

  onResponseEnd() {
    clearTimeout(this.drainTimer);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error) {
    clearTimeout(this.drainTimer);
    if ((err as NodeJS.ErrnoException).code === 'UND_ERR_CONNECT_TIMEOUT') return this.timedOut();
    const { errorCode, errorMessage } = classify(err as NodeJS.ErrnoException);
    this.fail(errorCode, errorMessage);
  }
}

function onDeadline(exchange: Exchange) {
  exchange.timedOut();
}

function stopDraining(controller: Dispatcher.DispatchController) {
  controller.abort(new Error('drain deadline'));
}

interface Target {
  origin: string;
  path: string;
  host: string;
  /** An address literal, which no lookup will check. */
  literal: boolean;
  /** Credentials in the URL, sent as node:http sent them (stored endpoints refuse them; `listen --forward-to` may carry them). */
  headers: Record<string, string>;
}

// A backlog sends to the same few URLs over and over: each is parsed once. Bounded: dropped whole
// when full.
const TARGETS_CAP = 10_000;
const targets = new Map<string, Target | { invalid: string }>();

function targetOf(raw: string): Target | { invalid: string } {
  let target = targets.get(raw);
  if (!target) {
    target = parseTarget(raw);
    if (targets.size >= TARGETS_CAP) targets.clear();
    targets.set(raw, target);
  }
  return target;
}

function parseTarget(raw: string): Target | { invalid: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { invalid: 'The endpoint URL is not valid.' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { invalid: 'The endpoint URL must be http or https.' };
  const host = hostOf(url);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'payment-orchestrator-webhooks/1' };
  if (url.username || url.password) {
    const auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(auth).toString('base64')}`;
  }
  return { origin: url.origin, path: url.pathname + url.search, host, literal: net.isIP(host) !== 0, headers };
}

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
    const target = targetOf(request.url);
    if ('invalid' in target) return Promise.resolve(failure(performance.now(), 'invalid_url', target.invalid));
    // An address literal never goes through the lookup, so it is checked here.
    if (request.guarded && target.literal && isForbiddenAddress(target.host)) {
      return Promise.resolve(failure(performance.now(), 'destination_forbidden', `${target.host} is ${PRIVATE_DESTINATION}.`));
    }
    return new Promise<SendResult>((resolve) => {
      const exchange = new Exchange(request.timeoutMs, resolve);
      try {
        agentFor(request.guarded, request.timeoutMs).dispatch(
          {
            origin: target.origin,
            path: target.path,
            method: 'POST',
            headers: { ...request.headers, ...target.headers },
            body: request.body,
          },
          exchange,
        );
      } catch (err) {
        // Rejected before it was queued (e.g. a header value undici refuses).
        exchange.fail('connection_error', `The request failed (${(err as NodeJS.ErrnoException).code ?? (err as Error).name}).`);
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
