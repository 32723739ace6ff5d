// The Idempotency-Key header as a fastify hook: required on money-moving POSTs, honoured on other
// POSTs when present. A completed key replays its stored answer byte-for-byte before the handler
// runs; otherwise the request owns the key and the handler's transaction finishes it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../storage/db.js';
import { claimKey, fingerprint, IDEMPOTENCY_KEY_PATTERN } from '../idempotency/store.js';
import { ApiError } from './errors.js';

export function idempotencyHook(db: Db, config: Config) {
  const settings = { retentionS: config.idempotencyRetentionS, lockTimeoutS: config.idempotencyLockTimeoutS };
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
    const result = await claimKey(db, req.ctx, header, fingerprint(req.method, req.url, body), settings);
    if (result.kind === 'replay') {
      return reply
        .code(result.outcome.status)
        .header('idempotent-replayed', 'true')
        .type('application/json; charset=utf-8')
        .send(result.outcome.body);
    }
    req.ctx.idempotency = result.claim;
  };
}
