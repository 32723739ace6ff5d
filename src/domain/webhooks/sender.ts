// One webhook HTTP request: POST with a whole-request deadline, redirects not followed (a 3xx is a
// failure like any non-2xx), keep-alive connections, and — in guarded mode — the SSRF check on
// every address the name resolves to, inside the connection's own lookup, so the address checked
// is the address connected to.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
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
  if (code === 'ECONNRESET' || code === 'EPIPE') return { errorCode: 'connection_reset', errorMessage: 'The connection was reset before a response arrived.' };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return { errorCode: 'dns_failure', errorMessage: `The host name could not be resolved (${code}).` };
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL') || /SSL|TLS/.test(code)) {
    return { errorCode: 'tls_error', errorMessage: `TLS failed (${code}).` };
  }
  return { errorCode: 'connection_error', errorMessage: `The request failed (${code || err.name}).` };
}

export function createSender(opts: { maxSockets?: number; resolver?: Resolver } = {}): Sender {
  const resolver = opts.resolver ?? systemResolver;
  const agentOptions = { keepAlive: true, maxSockets: opts.maxSockets ?? 256, maxFreeSockets: opts.maxSockets ?? 256, scheduling: 'lifo' as const };
  // Separate pools, so a connection opened without the guard is never reused by a guarded request.
  const agents = {
    guarded: { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) },
    open: { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) },
  };

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
  const lookups = { guarded: lookupFor(true), open: lookupFor(false) };

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
    const pool = request.guarded ? agents.guarded : agents.open;
    const module = url.protocol === 'https:' ? https : http;
    const agent = url.protocol === 'https:' ? pool.https : pool.http;
    const body = Buffer.from(request.body, 'utf8');

    return new Promise<SendResult>((resolve) => {
      let settled = false;
      const finish = (result: SendResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const req = module.request(
        url,
        {
          method: 'POST',
          agent,
          lookup: request.guarded ? lookups.guarded : lookups.open,
          headers: {
            ...request.headers,
            'content-type': 'application/json',
            'content-length': String(body.length),
            'user-agent': 'payment-orchestrator-webhooks/1',
          },
        },
        (res) => {
          const statusCode = res.statusCode ?? 0;
          const retryAfter = res.headers['retry-after'];
          finish({
            statusCode,
            retryAfterS: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()),
            durationMs: elapsed(),
            errorCode: null,
            errorMessage: null,
          });
          // The answer is known; the body is read and thrown away so the connection can be reused,
          // but never for longer than the deadline nor beyond 1 MiB.
          let received = 0;
          const drainTimer = setTimeout(() => res.destroy(), request.timeoutMs).unref();
          res.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (received > 1024 * 1024) res.destroy();
          });
          res.on('close', () => clearTimeout(drainTimer));
          res.on('error', () => {});
        },
      );
      const timer = setTimeout(() => {
        finish(fail('timeout', `No response within ${request.timeoutMs} ms.`));
        req.destroy();
      }, request.timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => {
        const { errorCode, errorMessage } = classify(err);
        finish(fail(errorCode, errorMessage));
      });
      req.end(body);
    });
  }

  return {
    send,
    close() {
      for (const pool of Object.values(agents)) {
        pool.http.destroy();
        pool.https.destroy();
      }
    },
  };
}
