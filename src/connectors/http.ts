// The core's HTTP call to a processor: JSON over keep-alive connections, bounded by the caller's
// abort signal, with failures sorted by whether the request can have reached the processor —
// before the connection opened (refused, connect timeout: safe to try elsewhere) or after (timeout,
// connection lost: the processor may have acted). Request and response bodies are never logged.
import http from 'node:http';
import https from 'node:https';
import { TransportError } from './types.js';

export interface HttpAnswer {
  status: number;
  body: unknown;
}

const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'EADDRNOTAVAIL']);

export function createHttpClient(opts: { maxSockets?: number } = {}) {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 256 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 256 }),
  };

  function request(method: string, url: string, body: unknown, signal: AbortSignal, headers: Record<string, string> = {}): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      const target = new URL(url);
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const transport = target.protocol === 'https:' ? https : http;
      let connected = false;
      let settled = false;
      const fail = (err: TransportError) => {
        if (settled) return;
        settled = true;
        reject(err);
      };
      if (signal.aborted) return fail(new TransportError('connect_timeout', `no connection to ${target.host} in time`));
      const req = transport.request(
        target,
        {
          method,
          agent: agents[target.protocol as 'http:' | 'https:'],
          headers: {
            accept: 'application/json',
            ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
            ...headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', () => fail(new TransportError('connection_lost', `the connection to ${target.host} broke during the answer`)));
          res.on('end', () => {
            if (settled) return;
            settled = true;
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = undefined;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = undefined;
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
        },
      );
      req.on('socket', (socket) => {
        // A reused keep-alive socket is connected already.
        if (!socket.connecting) connected = true;
        else socket.once('connect', () => (connected = true));
      });
      const onAbort = () => {
        const err = connected
          ? new TransportError('timeout', `${target.host} did not answer in time`)
          : new TransportError('connect_timeout', `no connection to ${target.host} in time`);
        fail(err);
        req.destroy();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      req.on('close', () => signal.removeEventListener('abort', onAbort));
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (!connected && err.code && NOT_CONNECTED.has(err.code)) {
          fail(new TransportError('connection_refused', `could not connect to ${target.host} (${err.code})`));
        } else if (!connected) {
          fail(new TransportError('connection_refused', `could not connect to ${target.host} (${err.code ?? err.message})`));
        } else {
          fail(new TransportError('connection_lost', `the connection to ${target.host} broke (${err.code ?? 'closed'})`));
        }
      });
      req.end(payload);
    });
  }

  return {
    request,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

export type HttpClient = ReturnType<typeof createHttpClient>;
