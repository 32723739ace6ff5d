// What a dashboard form does, done the API's way: the body is checked by the API route's own
// schema, and the change runs through the same service function under an idempotency key. Each
// form is rendered with a fresh key, so a double click or a resubmitted page replays the first
// answer instead of refunding (or funding, or resolving) twice; a 4xx is stored for the key and a
// 5xx lets it go, by the API's own settler.
import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { Config } from '../../config.js';
import type { Db } from '../../storage/db.js';
import type { Encryptor } from '../../kernel/encryption.js';
import type { Outcome } from '../../kernel/context.js';
import { ApiError, type ErrorCode } from '../../kernel/errors.js';
import { claimKey, fingerprint, IDEMPOTENCY_KEY_PATTERN } from '../../idempotency/store.js';
import { validationError, validatorCompiler } from '../validation.js';
import type { KeyAfterError } from '../key-after-error.js';
import type { Runtime } from '../../runtime.js';
import type { WebhookSettings } from '../../domain/webhooks/service.js';

export interface DashboardDeps {
  db: Db;
  config: Config;
  rt: Runtime;
  webhooks: WebhookSettings;
  encryptor: Encryptor;
  settler: KeyAfterError;
}

/** The signed-in request's view (mode, account, CSRF token); only called behind the session guard. */
export const viewOf = (req: FastifyRequest) => req.dashboard!.view;

/** A fresh idempotency key for one rendering of a form. */
export const formKey = () => `dashboard_${crypto.randomBytes(18).toString('base64url')}`;

const compiled = new WeakMap<TSchema, (data: unknown) => boolean>();

/** `data` checked as the API checks a request's `part`: the same schema, the same typed 400. */
export function checked<T>(schema: TSchema, data: unknown, part: 'body' | 'querystring' = 'body'): T {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = (validatorCompiler as (route: { schema: unknown; httpPart: string }) => (data: unknown) => boolean)({ schema, httpPart: part });
    compiled.set(schema, validate);
  }
  if (!validate(data)) throw validationError((validate as unknown as { errors: never[] }).errors, part);
  return data as T;
}

/** Query parameters of a list page with the empty ones (a filter left at "any") dropped. */
export function filled(query: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (query && typeof query === 'object') for (const [k, v] of Object.entries(query)) if (typeof v === 'string' && v.trim() !== '') out[k] = v.trim();
  return out;
}

/**
 * Runs `run` for a signed-in request under the form's idempotency key (`idem`), and answers the
 * object it returned; an error answer (or a replayed one) is thrown as the ApiError it was.
 */
export async function act<T = Record<string, unknown>>(deps: DashboardDeps, req: FastifyRequest, key: string | undefined, body: unknown, run: () => Promise<Outcome>): Promise<T> {
  if (key === undefined || !IDEMPOTENCY_KEY_PATTERN.test(key)) throw new ApiError('idempotency_key_missing', { message: 'The form has no idempotency key; reload the page and try again.' });
  const settings = { retentionS: deps.config.idempotencyRetentionS, lockTimeoutS: deps.config.idempotencyLockTimeoutS, encryptor: deps.encryptor };
  const claim = await claimKey(deps.db, req.ctx, key, fingerprint('POST', req.url, body), settings);
  let outcome: Outcome;
  if (claim.kind === 'replay') {
    outcome = claim.outcome;
  } else {
    req.ctx.idempotency = claim.claim;
    try {
      outcome = await run();
    } catch (err) {
      const apiError = err instanceof ApiError ? err : new ApiError('internal_error');
      await deps.settler.settle(req, { status: apiError.status, body: JSON.stringify(apiError.body(req.id)) }, apiError, err);
      throw err;
    }
  }
  const parsed = JSON.parse(outcome.body) as T & { error?: { code: ErrorCode; message: string; param?: string } };
  if (outcome.status >= 400 && parsed.error) throw new ApiError(parsed.error.code, { message: parsed.error.message, param: parsed.error.param });
  return parsed;
}
