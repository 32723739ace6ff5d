// HTTP load with autocannon, programmatically. Every response's exact latency is kept (autocannon's
// own histogram rounds to whole milliseconds) so p50/p99 are exact, and every status is counted.
import autocannon, { type Result } from 'autocannon';
import { withTimeout } from './cleanup.js';
import { summarise, type LatencySummary } from './stats.js';

export interface HttpLoadOptions {
  url: string;
  method: 'POST' | 'GET';
  connections: number;
  durationS: number;
  headers: Record<string, string>;
  /** `[<id>]` in body or headers is replaced by a fresh unique id in every request. */
  body?: string;
}

export interface HttpLoadResult {
  durationS: number;
  requests: number;
  /** Completed requests per second (all statuses). */
  rps: number;
  /** 2xx responses per second: the useful throughput. */
  okPerS: number;
  latencyMs: LatencySummary;
  statuses: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Every response's latency in ms (for pooling rounds). */
  latencies: number[];
}

export async function runHttpLoad(opts: HttpLoadOptions): Promise<HttpLoadResult> {
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  const result = await withTimeout(
    new Promise<Result>((resolve, reject) => {
      const instance = autocannon(
        {
          url: opts.url,
          method: opts.method,
          connections: opts.connections,
          duration: opts.durationS,
          headers: opts.headers,
          body: opts.body,
          idReplacement: true,
          timeout: 10,
        },
        (err, res) => (err ? reject(err) : resolve(res)),
      );
      instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTimeMs: number) => {
        latencies.push(responseTimeMs);
      });
    }),
    (opts.durationS + 60) * 1000,
    'autocannon',
  );
  const elapsedS = Number(process.hrtime.bigint() - started) / 1e9;
  const statuses: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statuses[code] = count;
  const ok = result['2xx'];
  const durationS = result.duration || elapsedS;
  return {
    durationS,
    requests: latencies.length,
    rps: latencies.length / durationS,
    okPerS: ok / durationS,
    latencyMs: summarise(latencies),
    statuses,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latencies,
  };
}
