// The Idempotency-Key header as a fastify hook: required on money-moving POSTs, honoured on other
// POSTs when present. A completed key replays its stored answer byte-for-byte before the handler
// runs; otherwise the request owns the key and the handler's transaction finishes it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../storage/db.js';
import { claimKey, fingerprint, IDEMPOTENCY_KEY_PATTERN } from '../idempotency/store.js';
import { ApiError } from '../kernel/errors.js';
import { createEncryptor } from '../lib/encryption.js';

type Settings = Parameters<typeof claimKey>[4];
// One set per configuration (one encryptor), shared by the hook and claimDeferred.
const settingsByConfig = new WeakMap<Config, Settings>();

function settingsOf(config: Config): Settings {
  let settings = settingsByConfig.get(config);
  if (!settings) {
    settings = { retentionS: config.idempotencyRetentionS, lockTimeoutS: config.idempotencyLockTimeoutS, encryptor: createEncryptor(config.encryptionKeys) };
    settingsByConfig.set(config, settings);
  }
  return settings;
}

/** Claims the key: a finished one is replayed (true: the answer was sent); otherwise the request owns it. */
async function claim(db: Db, settings: Settings, req: FastifyRequest, reply: FastifyReply, key: string, print: string): Promise<boolean> {
  const result = await claimKey(db, req.ctx, key, print, settings);
  if (result.kind === 'replay') {
    await reply.code(result.outcome.status).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(result.outcome.body);
    return true;
  }
  req.ctx.idempotency = result.claim;
  return false;
}

export function idempotencyHook(db: Db, config: Config) {
  const settings = settingsOf(config);
  return async function idempotency(req: FastifyRequest, reply: FastifyReply) {
    const mode = req.routeOptions.config.idempotency;
    if (!mode || req.method !== 'POST' || !req.ctx) return;
    const header = req.headers['idempotency-key'];
    if (header === undefined) {
      if (mode === 'required') throw new ApiError('idempotency_key_missing');
      return;
    }
    if (typeof header !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(header)) throw new ApiError('idempotency_key_invalid');
    // A route may show the fingerprint less than the body (payments: card data as keyed digests).
    const fingerprintOf = req.routeOptions.config.idempotencyFingerprint;
    const body = fingerprintOf ? fingerprintOf(req.body) : req.body;
    const print = fingerprint(req.method, req.url, body);
    if (req.routeOptions.config.idempotencyDeferred) {
      // The handler claims the key itself, in the statement that does the work (see claimDeferred).
      req.ctx.deferredIdempotency = { key: header, fingerprint: print, retentionS: settings.retentionS };
      return;
    }
    if (await claim(db, settings, req, reply, header, print)) return reply;
  };
}

/**
 * For routes with `idempotencyDeferred`, after their one-statement attempt found the key taken:
 * claims it the general way. Returns true when the answer was sent (a replay); otherwise the
 * request now owns the key (or threw 409/422) and the handler goes on with its general path.
 */
export async function claimDeferred(db: Db, config: Config, req: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  const deferred = req.ctx.deferredIdempotency;
  if (!deferred) return false;
  req.ctx.deferredIdempotency = undefined;
  return claim(db, settingsOf(config), req, reply, deferred.key, deferred.fingerprint);
}
