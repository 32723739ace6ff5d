// HTTP requests in the metrics: one count and one latency observation per answer, labelled by the
// route's pattern (`/v1/payments/:id`), never the path, so that ids cannot multiply the series.
// Answers given before any route matched (404, 405, the router's and the HTTP parser's refusals)
// share the route label `unmatched`.
import type { Metrics } from '../metrics/registry.js';
import type { App } from './types.js';

export const UNMATCHED_ROUTE = 'unmatched';

export function countRequests(app: App, metrics: Pick<Metrics, 'http'>): void {
  // A callback hook: every answer passes it, and an async one costs a promise each.
  app.addHook('onResponse', (req, reply, done) => {
    metrics.http(req.routeOptions.url ?? UNMATCHED_ROUTE, req.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/** For the answers no hook sees (framework-errors.ts); a request the parser refused has no method. */
export function countUnrouted(metrics: Pick<Metrics, 'http'>) {
  return (method: string | undefined, status: number, seconds = 0): void => metrics.http(UNMATCHED_ROUTE, method ?? 'unknown', status, seconds);
}
