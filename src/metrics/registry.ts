// The process's metrics, in Prometheus' conventional names: one registry per runtime (not
// prom-client's global one), so that the several services a test process runs never count into
// each other. The layers that count hold this object (through the Runtime, the worker's deps) and
// call its few methods; what is read rather than counted — circuit states, the webhook backlog,
// the database pool — is read at scrape time from the watchers the roles register.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export type MovementObject = 'payment' | 'refund' | 'payout' | 'mandate' | 'capture' | 'void' | 'payment_method' | 'dispute_response';

/** How a recorded webhook attempt left its delivery. */
export type WebhookResult = 'succeeded' | 'retrying' | 'failed' | 'cancelled';

export interface PoolUse {
  inUse: number;
  idle: number;
  waiting: number;
  max: number;
}

export interface Metrics {
  readonly registry: Registry;
  /** One answered HTTP request; `route` is the route's pattern (`/v1/payments/:id`), never the path. */
  http(route: string, method: string, status: number, seconds: number): void;
  /** A movement reached `status` (the movement core's apply step, or the one-statement success). */
  movement(object: MovementObject, status: string, connector: string | null): void;
  /** One guarded call to a connector: `result` is `ok` or our error code (timeout, processor_error, …). */
  connectorCall(connector: string, operation: string, result: string, seconds: number): void;
  /** A call not made: the connector's circuit was open. */
  connectorSkipped(connector: string): void;
  webhookRecorded(result: WebhookResult): void;
  /** From the event's commit to its first delivery attempt. */
  webhookLag(seconds: number): void;
  /** A read that could be answered by the replica (src/storage/read-replica.ts): the pool that answered it and why. */
  dbRead(pool: 'primary' | 'replica', reason: string): void;
  workerPass(job: string, seconds: number): void;
  workerFailure(job: string): void;
  watchCircuits(read: () => Iterable<[connector: string, state: string]>): void;
  watchWebhookBacklog(read: () => Promise<{ events: number; deliveries: number }>): void;
  /** Once per registry: the pool of the process's database. */
  watchPool(read: () => PoolUse): void;
  /** Node's own process metrics (CPU, memory, event loop lag, GC), for a process that serves them. */
  collectProcessMetrics(): void;
}

const CIRCUIT_STATES = ['closed', 'half_open', 'open'] as const;
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** The backlog is read from the database at scrape time; a scrape never waits on it longer. */
const BACKLOG_READ_TIMEOUT_MS = 2000;

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) => new Counter({ name, help, labelNames, registers });
  const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets = SECONDS_BUCKETS) =>
    new Histogram({ name, help, labelNames, buckets, registers });

  const httpRequests = counter('http_requests_total', 'HTTP requests answered, by route pattern, method and status.', ['route', 'method', 'status']);
  const httpDuration = histogram('http_request_duration_seconds', 'Time from a request arriving to its answer, by route pattern, method and status.', [
    'route',
    'method',
    'status',
  ]);
  const movements = {
    payment: counter('payments_total', 'Payments reaching a status (the outcome), by connector.', ['outcome', 'connector']),
    refund: counter('refunds_total', 'Refunds reaching a status (the outcome), by connector.', ['outcome', 'connector']),
    payout: counter('payouts_total', 'Payouts reaching a status (the outcome), by connector.', ['outcome', 'connector']),
    mandate: counter('mandates_total', 'Mandates reaching a status (the outcome), by connector.', ['outcome', 'connector']),
    capture: counter('captures_total', 'Captures of authorisations reaching a status (the outcome), by connector.', ['outcome', 'connector']),
    void: counter('voids_total', 'Voids of authorisations reaching a status (the outcome), by connector.', ['outcome', 'connector']),
    dispute_response: counter('dispute_responses_total', "Merchants' answers to disputes (evidence submitted, disputes accepted) reaching a status (the outcome), by connector.", ['outcome', 'connector']),
    payment_method: counter('card_verifications_total', 'Card verifications (cards saved without paying) reaching a status (the outcome), by connector.', ['outcome', 'connector']),
  };
  const connectorDuration = histogram('connector_request_duration_seconds', 'Calls to connectors, by connector, operation and result (ok or our error code).', [
    'connector',
    'operation',
    'result',
  ]);
  const connectorSkipped = counter('connector_requests_skipped_total', 'Calls not made because the circuit of the connector was open.', ['connector']);
  const webhookDeliveries = counter('webhook_deliveries_total', 'Recorded webhook delivery attempts, by what became of the delivery.', ['result']);
  const webhookLag = histogram('webhook_delivery_lag_seconds', 'From the commit of an event to the first attempt to deliver it.', [], [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
  ]);
  const dbReads = counter('db_reads_total', 'Reads a replica may answer (DATABASE_READ_URL), by the pool that answered and why.', ['pool', 'reason']);
  const workerDuration = histogram('worker_pass_duration_seconds', 'Duration of the periodic passes of the worker.', ['job']);
  const workerFailures = counter('worker_pass_failures_total', 'Worker passes and webhook delivery loop steps that failed.', ['job']);

  let circuits: (() => Iterable<[string, string]>) | undefined;
  new Gauge({
    name: 'connector_circuit_state',
    help: 'Circuit breaker state per connector: 1 for the current state (closed, half_open, open), 0 for the others.',
    labelNames: ['connector', 'state'],
    registers,
    collect() {
      this.reset();
      for (const [connector, current] of circuits?.() ?? []) {
        for (const state of CIRCUIT_STATES) this.set({ connector, state }, state === current ? 1 : 0);
      }
    },
  });

  let backlog: (() => Promise<{ events: number; deliveries: number }>) | undefined;
  new Gauge({
    name: 'webhook_backlog',
    help: 'Webhook work waiting in the database (the same figure from every worker process): events not yet fanned out, deliveries due now.',
    labelNames: ['queue'],
    registers,
    async collect() {
      this.reset();
      if (!backlog) return;
      try {
        const read = await withTimeout(backlog(), BACKLOG_READ_TIMEOUT_MS);
        this.set({ queue: 'events' }, read.events);
        this.set({ queue: 'deliveries' }, read.deliveries);
      } catch {
        // The database does not answer: the series is absent from this scrape rather than wrong.
      }
    },
  });

  // Registered by the first watchPool: a process without a pool (the embedded database) shows none.
  const watchPool = (read: () => PoolUse) => {
    const poolGauge = (name: string, help: string, values: (use: PoolUse) => [Record<string, string>, number][], labelNames: string[] = []) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        collect() {
          for (const [labels, value] of values(read())) this.set(labels, value);
        },
      });
    poolGauge('db_pool_connections', 'Database pool connections, by state (in_use, idle).', (use) => [[{ state: 'in_use' }, use.inUse], [{ state: 'idle' }, use.idle]], ['state']);
    poolGauge('db_pool_max_connections', 'The database pool size (DATABASE_POOL_SIZE).', (use) => [[{}, use.max]]);
    poolGauge('db_pool_waiting_requests', 'Queries waiting for a free connection of the pool.', (use) => [[{}, use.waiting]]);
  };

  let processMetrics = false;
  return {
    registry,
    http(route, method, status, seconds) {
      const labels = { route, method, status: String(status) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, seconds);
    },
    movement(object, status, connector) {
      movements[object].inc({ outcome: status, connector: connector ?? 'none' });
    },
    connectorCall(connector, operation, result, seconds) {
      connectorDuration.observe({ connector, operation, result }, seconds);
    },
    connectorSkipped(connector) {
      connectorSkipped.inc({ connector });
    },
    webhookRecorded(result) {
      webhookDeliveries.inc({ result });
    },
    webhookLag(seconds) {
      webhookLag.observe(Math.max(0, seconds));
    },
    dbRead(pool, reason) {
      dbReads.inc({ pool, reason });
    },
    workerPass(job, seconds) {
      workerDuration.observe({ job }, seconds);
    },
    workerFailure(job) {
      workerFailures.inc({ job });
    },
    watchCircuits(read) {
      circuits = read;
    },
    watchWebhookBacklog(read) {
      backlog = read;
    },
    watchPool,
    collectProcessMetrics() {
      if (processMetrics) return;
      processMetrics = true;
      collectDefaultMetrics({ register: registry });
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
