// The contract between the runner (bench/run.ts) and each benchmark module.

export interface BenchOptions {
  /** Seconds of measured load per phase. */
  durationS: number;
  /** Seconds of unmeasured load before the first measured phase of each kind. */
  warmupS: number;
  /** Service and ceiling phases alternate this many times (A B A B …); figures are pooled. */
  rounds: number;
  /** Concurrent HTTP connections, and pgbench clients for the ceiling. */
  connections: number;
  pgbenchThreads: number;
  /** Unset: prepared, as the service sends every parameterised statement (src/storage/db.ts). */
  pgbenchProtocol: 'simple' | 'extended' | 'prepared' | undefined;
  /** Admin connection string; each benchmark creates and drops its own database through it. */
  adminUrl: string;
  /** Extra node flags for the service process (BENCH_SERVICE_NODE_ARGS), e.g. --cpu-prof. */
  serviceNodeArgs: string[];
  /** Service entry point relative to the repository root (BENCH_SERVICE_ENTRY). */
  serviceEntry: string;
  /** LOG_LEVEL of the service (BENCH_LOG_LEVEL, default warn; production default is info). */
  serviceLogLevel: string;
}

export interface Check {
  name: string;
  target: string;
  actual: string;
  pass: boolean;
}

export interface BenchResult {
  name: string;
  title: string;
  /** Rows of the printed table: label, value, optional target. */
  rows: { label: string; value: string; target?: string; pass?: boolean }[];
  checks: Check[];
  pass: boolean;
  /** Everything measured, for bench/results/latest.json. */
  details: Record<string, unknown>;
  notes?: string[];
}

export interface Benchmark {
  name: string;
  description: string;
  run(opts: BenchOptions): Promise<BenchResult>;
}
