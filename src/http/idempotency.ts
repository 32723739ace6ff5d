// The Idempotency-Key header as a fastify hook: required on money-moving POSTs, honoured on other
// POSTs when present. A completed key replays its stored answer byte-for-byte before the handler
// runs; otherwise the request owns the key and the handler's transaction finishes it. Routes with
// a one-statement path (order and card payment creates) have the claim deferred: the statement
// claims the key itself, and `ctx.deferredIdempotency.claim()` claims it the general way when it
// wrote nothing — the one mechanism either way.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../storage/db.js';
import { claimKey, fingerprint, IDEMPOTENCY_KEY_PATTERN } from '../idempotency/store.js';
import { ApiError } from '../kernel/errors.js';
import { isDatabaseUnavailable } from '../kernel/outage.js';
import type { Encryptor } from '../kernel/encryption.js';
import type { Outcome } from '../kernel/context.js';
import { sendOutcome } from './types.js';
import { recordReplay } from '../domain/accounts/integration.js';

/** `oneStatementPaths`: whether deferred routes defer their claim (Runtime.oneStatementPaths); off, every key is claimed here. */
export function idempotencyHook(db: Db, config: Config, encryptor: Encryptor, oneStatementPaths: boolean) {
  const settings = { retentionS: config.idempotencyRetentionS, lockTimeoutS: config.idempotencyLockTimeoutS, encryptor };
  const claim = async (req: FastifyRequest, key: string, print: string): Promise<Outcome | undefined> => {
    let result;
    try {
      result = await claimKey(db, req.ctx, key, print, settings);
    } catch (err) {
      // The claim may have committed without our hearing it (the connection broke after the
      // statement went out): the error path lets the key go if it is ours, so a retry is not
      // kept waiting for the lock timeout.
      if (isDatabaseUnavailable(err)) req.ctx.idempotency = { key, recoveryPoint: 'started' };
      throw err;
    }
    if (result.kind === 'replay') return { ...result.outcome, replayed: true };
    req.ctx.idempotency = result.claim;
    return undefined;
  };
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
    if (oneStatementPaths && req.routeOptions.config.idempotencyDeferred) {
      req.ctx.deferredIdempotency = {
        key: header,
        fingerprint: print,
        retentionS: settings.retentionS,
        claim: () => {
          req.ctx.deferredIdempotency = undefined;
          return claim(req, header, print);
        },
      };
      return;
    }
    const replay = await claim(req, header, print);
    if (replay) return sendOutcome(reply, replay);
  };
}

/**
 * A test-mode answer replayed from its key is the implementation plan's evidence that the
 * integration retries with the same key; recorded after the answer is sent, so it costs the
 * request nothing, and once per account and process.
 */
export function replayEvidenceHook(db: Db) {
  // A callback hook: every answer passes it, and only a replay has anything to wait for.
  return function replayEvidence(req: FastifyRequest, reply: FastifyReply, done: () => void) {
    if (!req.ctx || req.ctx.livemode || reply.getHeader('idempotent-replayed') !== 'true') return done();
    recordReplay(db, req.ctx.accountId, req.ctx.requestId).then(
      () => done(),
      (err: unknown) => {
        try {
          req.log.warn({ err }, 'could not record the replay for the implementation plan');
        } finally {
          done();
        }
      },
    );
  };
}
