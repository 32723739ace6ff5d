// HTTP surface of payouts and their test helper: validate, call one service function, shape the answer.
import { Type } from 'typebox';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { bodyOptional, errorResponses, IdempotencyHeader, IdParam, NoParameters } from '../../kernel/schemas.js';
import { CreatePayoutBody, ListPayoutsQuery, ResolvePayoutBody } from '../../domain/payouts/schema.js';
import { cancelPayout, createPayout, listPayouts, resolveTestPayout, retrievePayout } from '../../domain/payouts/service.js';
import { submitPayoutNow } from '../../domain/payouts/submission.js';
import type { Runtime } from '../../runtime.js';
import { registerReadRoutes } from './reads.js';

const PayoutRef = Type.Ref('Payout');
const tags = ['payouts'];
const PAYOUT_ID_EXAMPLE = 'po_01jd8x3v0pe7wbz0m4k6f2n9qa';
const PayoutId = IdParam(PAYOUT_ID_EXAMPLE);

export function registerPayoutRoutes(app: App, db: Db, rt: Runtime) {
  app.post(
    '/v1/payouts',
    {
      config: { idempotency: 'required' },
      schema: {
        tags,
        operationId: 'createPayout',
        summary: 'Send money from the available balance to a beneficiary',
        description:
          'Reserves the amount from the available balance in the same transaction as the payout (concurrent payouts never overdraw it) ' +
          'and answers 201 with the payout `pending`; it is then sent to the bank and moves to `processing`, then `paid` or `failed` ' +
          '(a bank refusal is not an HTTP error). Eligibility errors (422): payouts_not_enabled (live mode until onboarding enables ' +
          'payouts), beneficiary_disabled, currency_mismatch (the currency must be the beneficiary account\'s), amount_above_limit ' +
          "(the account's maximum payout), insufficient_balance.",
        body: CreatePayoutBody,
        headers: IdempotencyHeader(true),
        response: { 201: PayoutRef, ...errorResponses('resource_missing', 'payouts_not_enabled', 'beneficiary_disabled', 'currency_mismatch', 'insufficient_balance', 'amount_above_limit', 'routing_no_match') },
      },
    },
    async (req, reply) => {
      const onCreated = rt.payouts.submitOnCreate
        ? (payout: { accountId: string; id: string }) => {
            // In the background: the answer (already committed, replayed byte-for-byte) says `pending`.
            submitPayoutNow(db, rt, payout.accountId, payout.id).catch((err: unknown) =>
              req.log.error({ err }, 'payout submission after create failed; the worker retries it'),
            );
          }
        : undefined;
      return sendOutcome(reply, await createPayout(db, rt, req.ctx, req.body, { onCreated }));
    },
  );

  registerReadRoutes(app, {
    path: '/v1/payouts', tags, schema: 'Payout', names: ['payout', 'payouts'], idExample: PAYOUT_ID_EXAMPLE,
    query: ListPayoutsQuery, retrieve: (ctx, id) => retrievePayout(db, ctx, id), list: (from, ctx, query) => listPayouts(from, ctx, query),
  });

  app.post(
    '/v1/payouts/:id/cancel',
    {
      config: { idempotency: 'optional' },
      preValidation: bodyOptional,
      schema: {
        tags,
        operationId: 'cancelPayout',
        summary: 'Cancel a pending payout',
        description:
          'Only while `pending` (not yet sent to the bank): the reserved amount returns to the available balance. Once sending has ' +
          'started the answer is 422 invalid_state naming the current status.',
        params: PayoutId,
        body: NoParameters,
        headers: IdempotencyHeader(false),
        response: { 200: PayoutRef, ...errorResponses('resource_missing', 'invalid_state') },
      },
    },
    async (req, reply) => sendOutcome(reply, await cancelPayout(db, rt, req.ctx, req.params.id)),
  );

  app.post(
    '/v1/test-helpers/payouts/:id/resolve',
    {
      config: { idempotency: 'optional' },
      schema: {
        tags: ['test helpers'],
        operationId: 'resolveTestPayout',
        summary: 'Settle a test-mode payout at the simulated bank now',
        description:
          '`paid` or `failed` settle a payout the bank holds in transit (account ending 0003); `returned` has the bank send back a paid ' +
          'payout. A payout not sent yet is sent first. The bank also reports the change by webhook. A payout the bank had already ' +
          'settled keeps its true outcome.',
        params: PayoutId,
        body: ResolvePayoutBody,
        headers: IdempotencyHeader(false),
        response: { 200: PayoutRef, ...errorResponses('resource_missing', 'invalid_state', 'permission_denied', 'processor_unavailable') },
      },
    },
    async (req, reply) => sendOutcome(reply, await resolveTestPayout(db, rt, req.ctx, req.params.id, req.body.outcome as 'paid' | 'failed' | 'returned')),
  );
}
