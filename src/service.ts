// Assembles a running service from configuration: database, migrations, api and worker roles.
// Used by the process entry point and by tests that need a real server.
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import { openDatabase, runMigrations, type Database } from './storage/db.js';
import { buildApp, loggerOptions } from './http/app.js';
import type { App } from './http/types.js';
import { createAuthenticator } from './http/auth.js';
import { closeListener, createLifecycle } from './http/lifecycle.js';
import { openAdminChannel } from './cli/admin-channel.js';
import { createRateLimiter, type RateLimiter } from './http/rate-limiter.js';
import { startWorker } from './worker/worker.js';
import { createRuntime, type Runtime } from './runtime.js';
import { startMetricsServer } from './metrics/server.js';
import { poolUse } from './metrics/pool.js';
import { probeAnswers } from './http/routes/health.js';
import { openReads } from './storage/read-replica.js';

export interface Service {
  database: Database;
  app?: App;
  url?: string;
  /** Where GET /metrics answers, with /health and /ready beside it (absent: METRICS_PORT=0, or its port was taken). */
  metricsUrl?: string;
  log: FastifyBaseLogger;
  /** Stops at once: in-flight requests are waited for until SHUTDOWN_GRACE_MS, then cut; webhook attempts without a bound. */
  close(): Promise<void>;
  /**
   * The graceful stop of a signal (SIGTERM, SIGINT): /ready answers 503 at once; after
   * SHUTDOWN_DELAY_MS the listener takes no new connections; requests and webhook attempts in
   * flight finish until SHUTDOWN_GRACE_MS from now (the rest are cut, their webhook leases handed
   * back); the worker claims nothing more; then everything closes. Each step is logged.
   */
  shutdown(signal: string): Promise<void>;
}

/**
 * Whether this start may create a first account and print its key: only a development start on
 * the embedded database that serves the API. On PostgreSQL or with NODE_ENV=production accounts
 * are onboarded with the CLI and no secret reaches stdout; a worker-only process has no port to try.
 */
export function createsFirstAccount(config: Pick<Config, 'roles'>, database: Pick<Database, 'kind'>, env: NodeJS.ProcessEnv = process.env): boolean {
  return database.kind === 'pglite' && env.NODE_ENV !== 'production' && config.roles.includes('api');
}

export async function startService(
  config: Config,
  opts: { database?: Database; logger?: boolean | object; rateLimiter?: RateLimiter; payments?: Runtime } = {},
): Promise<Service> {
  const database = opts.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize, connectTimeoutMs: config.databaseConnectTimeoutMs, preparedStatements: config.databasePreparedStatements }));
  await runMigrations(database);
  const rateLimiter = opts.rateLimiter ?? createRateLimiter(config.redisUrl);
  // One set of connectors (circuit breakers, in-process simulator) shared by the api and worker roles.
  const payments = opts.payments ?? createRuntime(config, { db: database.db });
  // Only the API reads through it: a worker-only process opens no replica pool.
  const reads = await openReads(
    database,
    {
      readUrl: config.roles.includes('api') ? config.databaseReadUrl : undefined,
      maxLagMs: config.databaseReadMaxLagMs,
      poolSize: config.databasePoolSize,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      preparedStatements: config.databasePreparedStatements,
    },
    (pool, reason) => payments.metrics.dbRead(pool, reason),
  );
  const lifecycle = createLifecycle();
  let app: App | undefined;
  let url: string | undefined;
  if (config.roles.includes('api')) {
    app = await buildApp({
      config,
      database,
      rateLimiter,
      authenticator: createAuthenticator(database.db, config.apiKeyCacheTtlMs),
      logger: opts.logger,
      payments,
      lifecycle,
      reads,
    });
    url = await app.listen({ host: config.host, port: config.port });
    payments.setServiceUrl(url);
  }
  const log: FastifyBaseLogger = app?.log ?? pino(loggerOptions(config));
  if (config.usingDevelopmentEncryptionKey && opts.logger !== false) {
    log.warn('ENCRYPTION_KEYS is not set: webhook secrets are encrypted with the built-in development key, which is public. Set ENCRYPTION_KEYS in production.');
  }
  if (config.usingDevelopmentVaultKey && opts.logger !== false) {
    log.warn('VAULT_KEYS is not set: the card vault wraps its data keys with the built-in development key, which is public. Set VAULT_KEYS in production (docs/vault.md).');
  }
  if (config.databaseReadUrl && database.kind === 'pglite' && opts.logger !== false) {
    log.warn('DATABASE_READ_URL is ignored: the embedded database has no replica; every read goes to it (docs/operations.md#a-read-replica).');
  }
  const worker = config.roles.includes('worker')
    ? startWorker(
        {
          db: database.db,
          log,
          webhooks: { config: config.webhooks, encryptor: payments.encryptor },
          webhookHistoryRetentionDays: config.webhooks.historyRetentionDays,
          inboundEventRetentionDays: config.inboundEventRetentionDays,
          payments,
          payouts: payments,
          metrics: payments.metrics,
        },
        config.workerIntervalMs,
      )
    : undefined;
  const pool = poolUse(database);
  if (pool) payments.metrics.watchPool(pool);
  const metricsServer = await startMetricsServer(payments.metrics, config.metrics, log, probeAnswers(database, lifecycle));
  // The embedded database is this process's alone: the CLI runs its commands through this channel.
  const adminChannel =
    database.kind === 'pglite' && !opts.database
      ? await openAdminChannel(
          // Links the commands print (dashboard session) point where this process really listens (PORT=0 too).
          { dataDir: config.dataDir, database, config: { ...config, publicBaseUrl: config.publicBaseUrl ?? url }, log },
          (await import('./cli/dispatch.js')).dispatch,
        )
      : undefined;
  const closeTheRest = async () => {
    await adminChannel?.close();
    await metricsServer?.close();
    await rateLimiter.close();
    if (!opts.payments) payments.close();
    await reads.close();
    if (!opts.database) await database.close();
  };
  return {
    database,
    app,
    url,
    metricsUrl: metricsServer?.url,
    log,
    async close() {
      // Bounded like a signal's stop: a response its client never reads must not hold the close.
      if (app) await closeListener(app, lifecycle, Date.now() + config.shutdownGraceMs, log);
      await worker?.stop();
      await closeTheRest();
    },
    async shutdown(signal) {
      const deadline = Date.now() + config.shutdownGraceMs;
      lifecycle.state = 'draining';
      log.info({ signal, delay_ms: config.shutdownDelayMs, grace_ms: config.shutdownGraceMs }, 'shutdown: started; /ready answers 503');
      if (app && config.shutdownDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
      await Promise.all([app && closeListener(app, lifecycle, deadline, log), worker?.stop(deadline)]);
      await closeTheRest();
      log.info('shutdown: done');
    },
  };
}
