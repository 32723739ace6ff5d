// Assembles a running service from configuration: database, migrations, api and worker roles.
// Used by the process entry point and by tests that need a real server.
import pino from 'pino';
import type { Config } from './config.js';
import { openDatabase, runMigrations, type Database } from './storage/db.js';
import { buildApp, loggerOptions } from './http/app.js';
import type { App } from './http/types.js';
import { createAuthenticator } from './http/auth.js';
import { createRateLimiter, type RateLimiter } from './lib/rate-limiter.js';
import { startWorker } from './worker/worker.js';
import { createRuntime, type Runtime } from './runtime.js';
import { startMetricsServer } from './metrics/server.js';
import { poolUse } from './metrics/pool.js';

export interface Service {
  database: Database;
  app?: App;
  url?: string;
  /** Where GET /metrics answers (absent: METRICS_PORT=0, or its port was taken). */
  metricsUrl?: string;
  close(): Promise<void>;
}

export async function startService(
  config: Config,
  opts: { database?: Database; logger?: boolean | object; rateLimiter?: RateLimiter; payments?: Runtime } = {},
): Promise<Service> {
  const database = opts.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize }));
  await runMigrations(database);
  const rateLimiter = opts.rateLimiter ?? createRateLimiter(config.redisUrl);
  // One set of connectors (circuit breakers, in-process simulator) shared by the api and worker roles.
  const payments = opts.payments ?? createRuntime(config, { db: database.db });
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
    });
    url = await app.listen({ host: config.host, port: config.port });
    payments.setServiceUrl(url);
  }
  if (config.usingDevelopmentEncryptionKey && opts.logger !== false) {
    (app?.log ?? pino(loggerOptions(config))).warn(
      'ENCRYPTION_KEYS is not set: webhook secrets are encrypted with the built-in development key, which is public. Set ENCRYPTION_KEYS in production.',
    );
  }
  const worker = config.roles.includes('worker')
    ? startWorker(
        {
          db: database.db,
          log: app?.log ?? pino(loggerOptions(config)),
          webhooks: { config: config.webhooks, encryptor: payments.encryptor },
          webhookHistoryRetentionDays: config.webhooks.historyRetentionDays,
          payments,
          payouts: payments,
          metrics: payments.metrics,
        },
        config.workerIntervalMs,
      )
    : undefined;
  const pool = poolUse(database);
  if (pool) payments.metrics.watchPool(pool);
  const metricsServer = await startMetricsServer(payments.metrics, config.metrics, app?.log ?? pino(loggerOptions(config)));
  return {
    database,
    app,
    url,
    metricsUrl: metricsServer?.url,
    async close() {
      await app?.close();
      await worker?.stop();
      await metricsServer?.close();
      await rateLimiter.close();
      if (!opts.payments) payments.close();
      if (!opts.database) await database.close();
    },
  };
}
