// Just enough of autocannon's programmatic API for the benchmarks (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    total: number;
  }

  export interface Result {
    duration: number;
    latency: Histogram;
    requests: Histogram & { sent: number };
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    mismatches: number;
    statusCodeStats: Record<string, { count: number }>;
    '1xx': number;
    '2xx': number;
    '3xx': number;
    '4xx': number;
    '5xx': number;
  }

  export interface Options {
    url: string;
    method?: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    timeout?: number;
    headers?: Record<string, string>;
    body?: string;
    idReplacement?: boolean;
    excludeErrorStats?: boolean;
    workers?: number;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
  }

  function autocannon(opts: Options, cb: (err: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
