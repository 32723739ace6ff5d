// The HTTP application: fastify with the cross-cutting pieces every route shares, in request
// order — request id, authentication, rate limit, body parsing and validation, idempotency — and
// the single error renderer that gives every failure the same typed body.
import Fastify, { LogController, type FastifyError } from 'fastify';
import pino from 'pino';
import { DrizzleQueryError } from 'drizzle-orm';
import swagger from '@fastify/swagger';
import { apiDescription } from './docs/guides.js';
import { registerReference } from './docs/reference.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import type { Database } from '../storage/db.js';
import type { RateLimiter } from './rate-limiter.js';
import { newId } from '../kernel/ids.js';
import { ApiError } from '../kernel/errors.js';
import { addSharedSchema, validationError, validatorCompiler } from './validation.js';
import { ErrorResponse } from '../kernel/schemas.js';
import { authenticate, type Authenticator } from './auth.js';
import { applyRateLimit } from './rate-limit.js';
import { idempotencyHook, replayEvidenceHook } from './idempotency.js';
import { registerAccountRoutes } from './routes/account.js';
import { sendOutcome, type App } from './types.js';
import type { Outcome, RequestContext } from '../kernel/context.js';
import { databaseUnavailableError, isDatabaseUnavailable, outageCause } from '../kernel/outage.js';
import { keyAfterError } from './key-after-error.js';
import { createLifecycle, registerLifecycle, type Lifecycle } from './lifecycle.js';
import { PaymentOrder } from '../domain/payment-orders/schema.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerPaymentOrderRoutes } from './routes/payment-orders.js';
import { registerEventRoutes } from './routes/events.js';
import { registerWebhookRoutes } from './routes/webhook-endpoints.js';
import { WebhookDeliveryAttempt, WebhookEndpoint, WebhookEndpointWithSecret, WebhookTest } from '../domain/webhooks/schema.js';
import { Capture } from '../domain/captures/schema.js';
import { Dispute } from '../domain/disputes/schema.js';
import { createSender } from '../domain/webhooks/sender.js';
import { EVENT_SCHEMAS, EventSchema, EventTypeSchema, eventWebhooks } from './routes/events.js';
import { registerPaymentsModule } from './routes/payments-module.js';
import { registerPayoutsModule } from './routes/payouts-module.js';
import { registerCustomersModule } from './routes/customers-module.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { clientErrorHandler, routerErrorHandler } from './framework-errors.js';
import { countRequests, countUnrouted } from './metrics.js';
import { documentHeaders, documentRoute } from './contract.js';
import { registerDashboard } from './dashboard/index.js';
import { registerCheckoutRoutes } from './checkout/routes.js';
import { logRequest, requestLogger } from './request-log.js';
import { watchRequestBodies } from './body-deadline.js';
import { registerReadRouting } from './read-routing.js';
import type { ReadRouting } from '../storage/read-replica.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false for the few public routes (health, docs); everything else needs an API key. */
    auth?: boolean;
    /** required: money-moving POSTs; optional: honoured when the header is present. */
    idempotency?: 'required' | 'optional';
    /** What of the body the idempotency fingerprint sees (payments: card data as keyed digests). */
    idempotencyFingerprint?: (body: unknown) => unknown;
    /** The handler claims the key itself (one-statement creates); see claimDeferred. */
    idempotencyDeferred?: boolean;
  }
  interface FastifyRequest {
    ctx: RequestContext;
  }
}

export interface AppDeps {
  config: Config;
  database: Database;
  rateLimiter: RateLimiter;
  authenticator: Authenticator;
  logger?: boolean | object;
  /** The process's runtime (connectors, routing cache, clock, keys); built by the app when absent. */
  payments?: Runtime;
  /** Where a graceful shutdown stands (src/http/lifecycle.ts); the app's own when absent. */
  lifecycle?: Lifecycle;
  /** Where lists read (src/storage/read-replica.ts); all on the primary when absent. */
  reads?: ReadRouting;
}

/** The service's pino settings: secrets redacted, failed queries logged without their parameters. */
export function loggerOptions(config: Pick<Config, 'logLevel'>) {
  return {
    level: config.logLevel,
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        '*.secret',
        '*.api_key',
        '*.card',
        '*.cvc',
        '*.number',
        '*.bank_account',
        '*.iban',
        '*.account_number',
        // Connector accounts' credentials, whole and field by field.
        '*.credentials',
        '*.secret_key',
        '*.webhook_secret',
        '*.hmac_key',
        '*.access_token',
      ],
      censor: '[redacted]',
    },
    serializers: { err: serializeError },
  };
}

/**
 * pino's error serialiser minus the bind parameters of failed queries: drizzle repeats them in the
 * message, the stack and a `params` field, and they hold API-key hashes and customer data.
 */
export function serializeError(err: Error): ReturnType<typeof pino.stdSerializers.err> {
  const serialized = pino.stdSerializers.err(err);
  if (!serialized || typeof serialized !== 'object') return serialized;
  const out = serialized as unknown as Record<string, unknown>;
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (!(e instanceof DrizzleQueryError)) continue;
    const shown = `\nparams: ${String(e.params)}`;
    for (const field of ['message', 'stack'] as const) {
      const text = out[field];
      if (typeof text === 'string') out[field] = text.split(shown).join('\nparams: [redacted]');
    }
  }
  if ('params' in out) out.params = '[redacted]';
  return serialized;
}


const VERSION_PREFIX = /^\/v(\d+)(\/|$)/;

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config, database } = deps;
  const rt = deps.payments ?? createRuntime(config, { db: database.db });
  const unrouted = countUnrouted(rt.metrics);
  const app = Fastify({
    // A caller's logger settings (a test's capture stream) add to the defaults, never drop the redaction.
    logger: typeof deps.logger === 'object' ? { ...loggerOptions(config), ...deps.logger } : (deps.logger ?? loggerOptions(config)),
    genReqId: () => newId('req').id,
    childLoggerFactory: requestLogger,
    // One line per request is written by the onResponse hook below, with account and duration.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    // Requests arriving while closing get our typed 503 (src/http/lifecycle.ts), not fastify's body.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true },
    // What fails before any route matches gets the typed body too (framework-errors.ts).
    frameworkErrors: routerErrorHandler(unrouted),
    clientErrorHandler: clientErrorHandler(unrouted),
  }).withTypeProvider<TypeBoxTypeProvider>();

  if (!deps.payments) app.addHook('onClose', async () => rt.close());
  const stopWatchingBodies = watchRequestBodies(app.server, { timeoutMs: config.requestBodyTimeoutMs, minRate: config.requestBodyMinRate });
  app.addHook('onClose', async () => stopWatchingBodies());
  app.setValidatorCompiler(validatorCompiler);
  app.setSchemaErrorFormatter((errors, context) => validationError(errors, context) as unknown as Error);
  app.addSchema(ErrorResponse);
  app.addSchema(PaymentOrder);
  // Events are answered, never validated: their schemas are for the document only.
  for (const schema of [EventSchema, ...EVENT_SCHEMAS, EventTypeSchema, WebhookTest, Capture, Dispute]) app.addSchema(schema);
  for (const schema of [WebhookEndpoint, WebhookEndpointWithSecret, WebhookDeliveryAttempt]) {
    app.addSchema(schema);
    addSharedSchema(schema);
  }
  for (const schema of [ErrorResponse, PaymentOrder]) addSharedSchema(schema);

  // An empty body on a JSON POST (a bare `/cancel`) means "no parameters", not a parse error.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') return done(null, undefined);
    jsonParser(req, body as string, (err, parsed) => {
      if (!err) return done(null, parsed);
      // Valid JSON keyed `__proto__` (or constructor.prototype) is refused against prototype
      // pollution; say so, naming where. (JSON.parse makes `__proto__` an own property, so walking
      // its result is harmless, and the result is dropped.)
      let value: unknown;
      try {
        value = JSON.parse(body as string);
      } catch {
        return done(new ApiError('body_invalid_json'), undefined);
      }
      const param = forbiddenKeyPath(value);
      done(
        new ApiError('parameter_invalid', {
          message: 'The body may not use "__proto__" or "constructor.prototype" as a key, at any depth.',
          ...(param === undefined ? {} : { param }),
        }),
        undefined,
      );
    });
  });

  // Collected to tell "wrong method" (405) from "no such route" (404).
  const routePatterns: { regex: RegExp; method: string }[] = [];
  app.addHook('onRoute', (route) => {
    const pattern = route.url.replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*');
    for (const method of [route.method].flat()) routePatterns.push({ regex: new RegExp(`^${pattern}/?$`), method });
    // The documentation page is public, like the OpenAPI document it renders.
    if (route.url.startsWith('/docs')) route.config = { ...route.config, auth: false };
  });

  const lifecycle = deps.lifecycle ?? createLifecycle();
  registerLifecycle(app, lifecycle);
  registerReadRouting(app, deps.reads, database.db);
  app.addHook('onRequest', async (req, reply) => {
    reply.header('request-id', req.id);
    (req as { startedAtNs?: bigint }).startedAtNs = process.hrtime.bigint();
    if (req.routeOptions.config.auth === false || req.routeOptions.url === undefined) return;
    const principal = await authenticate(deps.authenticator, req.headers.authorization);
    req.ctx = { accountId: principal.accountId, livemode: principal.livemode, requestId: req.id };
    req.identifyWriter(`key:${principal.keyId}`);
    await applyRateLimit(deps.rateLimiter, config, principal, reply, req.log);
  });

  app.addHook('preHandler', idempotencyHook(database.db, config, rt.encryptor, rt.oneStatementPaths));
  app.addHook('onResponse', replayEvidenceHook(database.db));
  countRequests(app, rt.metrics);

  app.addHook('onResponse', (req, reply, done) => {
    logRequest(req, reply);
    done();
  });

  const settler = keyAfterError(database.db, config.idempotencyLockTimeoutS);
  app.addHook('onClose', () => settler.close());
  app.setErrorHandler(async (error: FastifyError | ApiError, req, reply) => {
    const apiError = toApiError(error);
    // An outage or a shutdown is expected and says all in its code: no stack trace per request.
    if (apiError.code === 'service_unavailable') req.log.warn({ cause: outageCause(error)?.message ?? apiError.message }, 'request refused: service unavailable');
    else if (apiError.status >= 500) req.log.error({ err: error }, 'request failed');
    const outcome: Outcome = { status: apiError.status, body: JSON.stringify(apiError.body(req.id)) };
    await settler.settle(req, outcome, apiError, error);
    for (const [name, value] of Object.entries(apiError.headers)) reply.header(name, value);
    return sendOutcome(reply, outcome);
  });

  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split('?')[0]!;
    const version = VERSION_PREFIX.exec(path);
    let error: ApiError;
    if (version && version[1] !== '1') {
      error = new ApiError('unsupported_api_version', { message: `API version v${version[1]} is not supported; use /v1.` });
    } else {
      const allowed = [...new Set(routePatterns.filter((r) => r.regex.test(path)).map((r) => r.method))];
      error = allowed.length
        ? new ApiError('method_not_allowed', {
            message: `${req.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.`,
            headers: { allow: allowed.join(', ') },
          })
        : new ApiError('route_missing', { message: `No route ${req.method} ${path}.` });
    }
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    return sendOutcome(reply, { status: error.status, body: JSON.stringify(error.body(req.id)) });
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Payment orchestration API',
        version: '1.0.0',
        contact: { name: 'Payment orchestration maintainers' },
        description: apiDescription(),
      },
      servers: [{ url: '/' }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'sk_test_… or sk_live_…' } } },
      security: [{ bearerAuth: [] }],
      webhooks: eventWebhooks(),
    },
    transform: documentRoute,
    transformObject: documentHeaders(),
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await registerReference(app);

  registerHealthRoutes(app, database, lifecycle);
  registerPaymentOrderRoutes(app, database.db, config, rt);
  registerEventRoutes(app, database.db);
  // The API process sends only the test-mode delivery scenarios; the worker delivers events.
  const webhookSender = createSender({ maxSockets: 16 });
  app.addHook('onClose', async () => webhookSender.close());
  const webhookSettings = { config: config.webhooks, encryptor: rt.encryptor, sender: webhookSender };
  registerWebhookRoutes(app, database.db, webhookSettings);
  registerPaymentsModule(app, database.db, config, rt, deps.rateLimiter);
  registerPayoutsModule(app, database.db, rt);
  registerCustomersModule(app, database.db, rt);
  registerAccountRoutes(app, database.db);
  registerDashboard(app, database.db, config, rt, webhookSettings);
  registerCheckoutRoutes(app, database.db, rt, { idempotencyRetentionS: config.idempotencyRetentionS });
  app.get('/v1/openapi.json', { config: { auth: false }, schema: { hide: true } }, async () => app.swagger());

  return app;
}

function toApiError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error;
  if ((error as unknown) instanceof ApiError) return error as unknown as ApiError;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('body_too_large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('body_invalid_json', { message: 'The Content-Length header does not match the body.' });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('body_missing');
  }
  if (error.validation) return validationError(error.validation, error.validationContext ?? 'body');
  if (error.statusCode === 400 && error instanceof SyntaxError) return new ApiError('body_invalid_json');
  if (isDatabaseUnavailable(error)) return databaseUnavailableError();
  return new ApiError('internal_error');
}

/**
 * Names where the first `__proto__` key (or `constructor` holding `prototype`) sits the way other
 * bad keys are named: by the object holding it, or by the key itself at the top level.
 */
function forbiddenKeyPath(value: unknown, path: string[] = []): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    const forbidden = key === '__proto__' || (key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype'));
    if (forbidden) return path.length > 0 ? path.join('.') : key;
    const found = forbiddenKeyPath(child, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
}
