// The worker role: periodic jobs that move state without a request. Each job is safe to run in
// any number of processes at once (rows are claimed with SKIP LOCKED or deleted idempotently).
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../storage/db.js';
import { expireDuePaymentOrders } from '../domain/payment-orders/service.js';
import { sweepExpiredKeys } from '../idempotency/store.js';
import { sweepWebhookHistory } from '../domain/webhooks/delivery/retention.js';
import { sweepAppliedEvents } from '../movement/inbound.js';
import { ensurePartitions } from '../storage/partitions.js';
import { runStatusChecks } from '../domain/payments/status-checks.js';
import type { Runtime } from '../runtime.js';
import { runPayoutJobs } from '../domain/payouts/submission.js';
import { runMandateJobs } from '../domain/mandates/jobs.js';
import { runVerificationChecks } from '../domain/payment-methods/jobs.js';
import { runVoidJobs } from '../domain/voids/jobs.js';
import { runDisputeJobs } from '../domain/disputes/jobs.js';
import { runSettlements } from '../domain/terms/settlement-job.js';
import { runDailyReconciliations } from '../domain/reconciliation/daily.js';
import { resealConnectorAccounts } from '../connectors/account-credentials.js';
import type { WebhookConfig } from '../config.js';
import type { Encryptor } from '../kernel/encryption.js';
import { createSender, type Resolver, type Sender } from '../domain/webhooks/sender.js';
import { runDeliveryPass, startDeliveryEngine, type DeliveryDeps } from '../domain/webhooks/delivery/engine.js';
import { webhookBacklog } from '../domain/webhooks/delivery/queue.js';
import type { Metrics } from '../metrics/registry.js';
import { LONGEST_OUTAGE_BACKOFF_MS, outageCause } from '../kernel/outage.js';
import { settlesBy } from '../kernel/deadline.js';

export interface WorkerDeps {
  db: Db;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
  now?: () => Date;
  /** Webhook delivery; without it the worker does not deliver (tests of other jobs). */
  webhooks?: WebhookWorkerOptions;
  /** Status checks of pending payments and refunds; without it the worker does not check. */
  payments?: Runtime;
  /** Days of webhook delivery history to keep; unset: the worker deletes none. */
  webhookHistoryRetentionDays?: number;
  /** Days an applied processor event's id is kept; unset: the worker deletes none. */
  inboundEventRetentionDays?: number;
  /** Submission and status checks of payouts; without it the worker does not send payouts. */
  payouts?: Runtime;
  /** Pass durations and failures, webhook deliveries and backlog; without it nothing is counted. */
  metrics?: Metrics;
}

export interface WebhookWorkerOptions {
  config: WebhookConfig;
  encryptor: Encryptor;
  /** Injected by tests; by default one keep-alive sender per worker. */
  sender?: Sender;
  /** Name resolution for the sender (tests play DNS rebinding with it). */
  resolver?: Resolver;
  random?: () => number;
}

function deliveryDeps(deps: WorkerDeps, webhooks: WebhookWorkerOptions, sender: Sender): DeliveryDeps {
  return {
    db: deps.db,
    log: deps.log,
    config: webhooks.config,
    encryptor: webhooks.encryptor,
    sender,
    now: deps.now ?? (() => new Date()),
    random: webhooks.random ?? Math.random,
    metrics: deps.metrics,
  };
}

function ownSender(webhooks: WebhookWorkerOptions): { sender: Sender; owned: boolean } {
  if (webhooks.sender) return { sender: webhooks.sender, owned: false };
  return { sender: createSender({ maxSockets: webhooks.config.concurrency, resolver: webhooks.resolver }), owned: true };
}

/** One pass over every job; returns what each did, for logs and tests. */
export async function runWorkerOnce(
  deps: WorkerDeps,
): Promise<{
  expiredOrders: number;
  /** Partitions of events and webhook attempts made ahead (src/storage/partitions.ts). */
  partitions: number;
  sweptKeys: number;
  sweptWebhookHistory?: { attempts: number; deliveries: number };
  /** Applied processor events forgotten past INBOUND_EVENT_RETENTION_DAYS. */
  sweptInboundEvents?: number;
  statusChecks?: { payments: number; refunds: number };
  /** Pending mandates checked with their connector, dormant ones expired (by `now`). */
  mandates?: { checked: number; expired: number };
  /** Pending voids and captures checked, lapsed authorisations voided or closed at what was captured (src/domain/voids/jobs.ts). */
  voids?: { checked: number; expired: number; captures: number; closed: number };
  /** Pending answers to disputes checked, coming evidence deadlines announced (src/domain/disputes/jobs.ts). */
  disputes?: { checked: number; warned: number };
  /** Pending card verifications checked (src/domain/payment-methods/jobs.ts). */
  cardVerifications?: number;
  /** Connector accounts whose credentials were sealed again with the active encryption key. */
  resealedConnectorAccounts?: number;
  /** Pending payouts sent to their bank, processing ones verified. */
  payouts?: { submitted: number; checked: number };
  webhooks?: { dispatchedEvents: number; attempts: number };
  /** Payments whose pending money became available (src/domain/terms/settlement-job.ts). */
  settlements: number;
  /** Yesterday's reconciliation runs made (RECONCILIATION_DAILY, src/domain/reconciliation/daily.ts). */
  reconciliations?: { runs: number; failed: number };
}> {
  const now = deps.now?.() ?? new Date();
  const partitions = await ensurePartitions(deps.db, now);
  let expiredOrders = 0;
  for (let n = await expireDuePaymentOrders(deps.db, now); n > 0; n = await expireDuePaymentOrders(deps.db, now)) expiredOrders += n;
  const sweptKeys = await sweepExpiredKeys(deps.db);
  const settlements = await runSettlements(deps.db, now);
  const history = {
    ...(deps.webhookHistoryRetentionDays ? { sweptWebhookHistory: await sweepWebhookHistory(deps.db, now, deps.webhookHistoryRetentionDays) } : {}),
    ...(deps.inboundEventRetentionDays ? { sweptInboundEvents: await sweepAppliedEvents(deps.db, now, deps.inboundEventRetentionDays) } : {}),
  };
  const statusChecks = deps.payments
    ? {
        statusChecks: await runStatusChecks(deps.db, deps.payments),
        mandates: await runMandateJobs(deps.db, deps.payments, now),
        cardVerifications: await runVerificationChecks(deps.db, deps.payments),
        voids: await runVoidJobs(deps.db, deps.payments),
        disputes: await runDisputeJobs(deps.db, deps.payments, now),
        resealedConnectorAccounts: await resealConnectorAccounts(deps.db, deps.payments.encryptor),
        ...(deps.payments.config.reconciliationDaily ? { reconciliations: await runDailyReconciliations(deps.db, deps.payments, now) } : {}),
      }
    : {};
  const payoutJobs = deps.payouts ? { payouts: await runPayoutJobs(deps.db, deps.payouts) } : {};
  if (!deps.webhooks) return { expiredOrders, partitions, sweptKeys, settlements, ...history, ...statusChecks, ...payoutJobs };
  const { sender, owned } = ownSender(deps.webhooks);
  try {
    return { expiredOrders, partitions, sweptKeys, settlements, ...history, ...statusChecks, ...payoutJobs, webhooks: await runDeliveryPass(deliveryDeps(deps, deps.webhooks, sender)) };
  } finally {
    if (owned) sender.close();
  }
}

/** Whether a pass's report counts anything done (any number above zero, at any depth). */
function didWork(report: object): boolean {
  return Object.values(report).some((v) => (typeof v === 'number' ? v > 0 : typeof v === 'object' && v !== null && didWork(v)));
}


export interface Worker {
  /**
   * Stops claiming; waits for the pass and the webhook attempts in flight until `deadlineMs`
   * (epoch ms), then hands back the webhook leases still held. A pass still running then is left
   * to die with the process: what it claimed is taken up again when its leases run out.
   */
  stop(deadlineMs?: number): Promise<void>;
}

export function startWorker(deps: WorkerDeps, intervalMs: number): Worker {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let failures = 0;
  // Webhooks run in their own continuous loop (low latency); the periodic pass does the rest.
  const webhookSender = deps.webhooks ? ownSender(deps.webhooks) : undefined;
  const engine = deps.webhooks && webhookSender ? startDeliveryEngine(deliveryDeps(deps, deps.webhooks, webhookSender.sender)) : undefined;
  const periodic = { ...deps, webhooks: undefined };
  if (deps.webhooks) deps.metrics?.watchWebhookBacklog(() => webhookBacklog(deps.db, deps.now?.() ?? new Date()));
  const pass = async () => {
    const started = performance.now();
    try {
      // The delivery engine runs on its own; what it did since the last pass is told with the pass.
      const done = { ...(await runWorkerOnce(periodic)), ...(engine ? { webhooks: engine.takeCounts() } : {}) };
      deps.metrics?.workerPass('periodic', (performance.now() - started) / 1000);
      if (failures > 0) deps.log.info({ failed_passes: failures }, 'worker pass succeeded again');
      failures = 0;
      if (didWork(done)) deps.log.info(done, 'worker pass');
    } catch (err) {
      failures++;
      deps.metrics?.workerFailure('periodic');
      const outage = outageCause(err);
      if (outage) deps.log.warn({ cause: outage.message, failed_passes: failures }, 'worker pass failed: database unavailable; backing off');
      else deps.log.error({ err, failed_passes: failures }, 'worker pass failed');
    }
  };
  const loop = async () => {
    while (!stopped) {
      running = pass();
      await running;
      const pause = failures === 0 ? intervalMs : Math.min(intervalMs * 2 ** failures, Math.max(intervalMs, LONGEST_OUTAGE_BACKOFF_MS));
      await new Promise((resolve) => setTimeout(resolve, pause).unref());
    }
  };
  void loop();
  return {
    async stop(deadlineMs = Infinity) {
      stopped = true;
      deps.log.info('shutdown: worker stopped claiming');
      const [passDone] = await Promise.all([settlesBy(running, deadlineMs), engine?.stop(deadlineMs)]);
      if (!passDone) deps.log.warn('shutdown: a worker pass is still running at the end of the grace period; what it claimed is taken up again when its leases run out');
      if (webhookSender?.owned) webhookSender.sender.close();
    },
  };
}
