// GET /metrics on a listener of its own (METRICS_HOST:METRICS_PORT, loopback by default), apart
// from the API's port so that it is not public by accident. /health and /ready answer here too, so
// that a worker-only process, which has no API port, can be probed like any other. A plain node:http server: no
// authentication, hooks or rate limits are wanted here. A port already taken costs the process its
// metrics, not its service: the error is logged and the process runs on.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './registry.js';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** The answer to a probe path (/health, /ready), or undefined when the path is none. */
export type Probes = (path: string) => Promise<{ status: number; body: string; headers?: Record<string, string> } | undefined>;

export interface MetricsListen {
  host: string;
  /** 0: no metrics listener. */
  port: number;
}

export async function startMetricsServer(
  metrics: Metrics,
  listen: MetricsListen,
  log: { error(obj: object, msg: string): void },
  probes?: Probes,
): Promise<MetricsServer | undefined> {
  if (listen.port === 0) return undefined;
  metrics.collectProcessMetrics();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const read = req.method === 'GET' || req.method === 'HEAD';
    if (path !== '/metrics' || !read) {
      const probe = read && probes ? probes(path ?? '') : Promise.resolve(undefined);
      probe.then(
        (answer) => {
          if (!answer) res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics are at GET /metrics; GET /health and /ready answer here too.\n');
          else res.writeHead(answer.status, { ...answer.headers, 'content-type': 'application/json; charset=utf-8' }).end(req.method === 'HEAD' ? undefined : answer.body);
        },
        (err: unknown) => {
          log.error({ err }, 'probe failed');
          res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('The probe failed.\n');
        },
      );
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => {
        log.error({ err }, 'metrics scrape failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('The metrics could not be collected.\n');
      },
    );
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listen.port, listen.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    log.error({ err, host: listen.host, port: listen.port }, `metrics listener could not start on ${listen.host}:${listen.port}; the service runs without /metrics`);
    return undefined;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
