// The simulated processors as their own HTTP server, so that timeouts, refused connections and a
// processor that outlives a crashed service are real network behaviour. `npm run simulator` runs
// it on its own (main.ts); tests start it in their own process. Its books are in its own memory
// unless a store is given (store.ts): it is the processor's own process, which outlives service
// restarts, and stopping it resets the sandbox.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimulatorHost, type SimulatorOptions } from './processor.js';
import { HOLD_LIMIT_MS } from './wire.js';

export interface SimulatorServer {
  url: string;
  host: SimulatorHost;
  close(): Promise<void>;
}

export async function startSimulatorServer(options: SimulatorOptions & { port?: number; hostname?: string }): Promise<SimulatorServer> {
  const host = new SimulatorHost(options);
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown = undefined;
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'BAD_REQUEST', detail: 'invalid JSON' } }));
        return;
      }
      host.dispatch(req.method ?? 'GET', req.url ?? '/', body).then(
        (answer) => {
          if (answer.hang) {
            // Held open until the client gives up (its timeout) or the server closes; the
            // processor reports the outcome its delay after that.
            const { hang } = answer;
            const cut = setTimeout(() => res.destroy(), HOLD_LIMIT_MS);
            hanging.add(res);
            res.on('close', () => {
              clearTimeout(cut);
              hanging.delete(res);
              hang.hungUp().catch(() => undefined);
            });
            return;
          }
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
        },
        () => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'INTERNAL_ERROR', detail: 'simulator failure' } })),
      );
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.hostname ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.hostname ?? '127.0.0.1'}:${port}`,
    host,
    async close() {
      host.close();
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
