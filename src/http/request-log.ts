// Each request's line in the log (what it shows of the path, written when the answer is done) and each request's logger.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { toPublicId } from '../kernel/ids.js';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

/** Path parameters that open something by themselves (a checkout's or a customer action's token). */
const SECRET_PATH_PARAMS = ['token', 'challenge'];

// `_`, or `%5F` as a client that escapes more than it must sends it.
const U = '(?:_|%5[Ff])';
/**
 * Secrets by their shape, wherever a client puts them in the path: our API keys (sk_test_,
 * sk_live_, src/kernel/secrets.ts), the processors' keys a connector account holds (Stripe's sk_, pk_
 * and rk_ keys), webhook signing secrets (whsec_, src/domain/webhooks/signing.ts) and dashboard sign-in
 * codes (dsc_, src/domain/dashboard/sessions.ts). The prefix stays: it tells what was sent where.
 */
const KEY_SHAPED = new RegExp(`((?:sk|pk|rk)${U}(?:test|live)${U}|whsec${U}|dsc${U})[^/?#]+`, 'g');

/** The path for the request log: secret path parameters by their name, key-shaped segments redacted. */
export function loggedPath(url: string, params: unknown): string {
  let path = url.split('?')[0]!;
  for (const name of SECRET_PATH_PARAMS) {
    const value = (params as Record<string, unknown> | undefined)?.[name];
    if (typeof value === 'string' && value !== '') path = path.split(`/${encodeURIComponent(value)}`).join(`/:${name}`);
  }
  return path.replace(KEY_SHAPED, '$1[redacted]');
}

const LOGS_INFO = new Set(['info', 'debug', 'trace']);

/** The one line per request, with account and duration (written when the response is done). */
export function logRequest(req: FastifyRequest, reply: FastifyReply): void {
  // Below info (the bench's and many deployments' warn), the line is not built at all.
  if (!LOGS_INFO.has(req.log.level)) return;
  const started = (req as { startedAtNs?: bigint }).startedAtNs;
  const durationMs = started ? Number(process.hrtime.bigint() - started) / 1e6 : undefined;
  req.log.info(
    {
      account: req.ctx ? toPublicId('acct', req.ctx.accountId) : undefined,
      livemode: req.ctx?.livemode,
      method: req.method,
      path: loggedPath(req.url, req.params),
      status: reply.statusCode,
      duration_ms: durationMs === undefined ? undefined : Math.round(durationMs * 100) / 100,
    },
    'request',
  );
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Write = (...args: unknown[]) => void;

/**
 * A request's logger that becomes the pino child holding its id only when it first writes. Fastify
 * makes that child for every request, a measurable share of a small request's CPU, and at warn (the
 * bench's and many deployments' level) most requests never write a line.
 */
class RequestLogger {
  #real?: Logger;
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;

  constructor(parent: Logger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  private real(): Logger {
    return (this.#real ??= this.#parent.child(this.#bindings, this.#options));
  }

  bindings(): Bindings {
    return { ...this.#parent.bindings(), ...this.#bindings };
  }

  get level(): string {
    return this.#real?.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  private write(level: Level, args: unknown[]): void {
    if (this.#real || this.#parent.isLevelEnabled(level)) (this.real()[level] as Write)(...args);
  }

  fatal(...args: unknown[]) { this.write('fatal', args); }
  error(...args: unknown[]) { this.write('error', args); }
  warn(...args: unknown[]) { this.write('warn', args); }
  info(...args: unknown[]) { this.write('info', args); }
  debug(...args: unknown[]) { this.write('debug', args); }
  trace(...args: unknown[]) { this.write('trace', args); }
  silent() {}

  isLevelEnabled(level: string): boolean {
    return (this.#real ?? this.#parent).isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: each request's logger, made lazily (RequestLogger). */
export function requestLogger(this: unknown, parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  // Fastify's logger is the pino instance made from loggerOptions (src/http/app.ts), or with
  // `logger: false` its own silent stand-in, which knows no levels and writes nothing anyway. A
  // route with a level of its own (`logLevel`) gets its child at once: only the child knows it.
  if (!('isLevelEnabled' in parent) || options.level) return parent.child(bindings, options);
  return new RequestLogger(parent as Logger, bindings, options) as unknown as FastifyBaseLogger;
}
