// GET /metrics on a listener of its own (METRICS_HOST:METRICS_PORT, loopback by default), apart
// from the API's port so that it is not public by accident. A plain node:http server: no
// authentication, hooks or rate limits are wanted here. A port already taken costs the process its
// metrics, not its service: the error is logged and the process runs on.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './registry.js';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export interface MetricsListen {
  host: string;
  /** 0: no metrics listener. */
  port: number;
}

export async function startMetricsServer(
  metrics: Metrics,
  listen: MetricsListen,
  log: { error(obj: object, msg: string): void },
): Promise<MetricsServer | undefined> {
  if (listen.port === 0) return undefined;
  metrics.collectProcessMetrics();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics are at GET /metrics.\n');
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
