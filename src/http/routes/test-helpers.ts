// Test helpers of payments and the balance (test-mode keys only; live keys get 403).
import { Type } from 'typebox';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { errorResponses, IdempotencyHeader, IdParam } from '../../kernel/schemas.js';
import { ResolvePaymentBody } from '../../domain/payments/schema.js';
import { resolveTestPayment } from '../../domain/payments/service.js';
import type { Runtime } from '../../runtime.js';
import { FundBalanceBody } from '../../ledger/schema.js';
import { fundTestBalance } from '../../ledger/balance.js';
import { resetTestRetryLimits, RetryLimitsReset } from '../../domain/payments/retry-limits.js';

const tags = ['test helpers'];

export function registerPaymentTestHelperRoutes(app: App, db: Db, rt: Runtime) {
  app.post(
    '/v1/test-helpers/payments/:id/resolve',
    {
      config: { idempotency: 'optional' },
      schema: {
        tags,
        operationId: 'resolveTestPayment',
        summary: 'Settle a pending test-mode payment now',
        description:
          'Tells the simulated processor to settle the pending charge with `outcome`; the processor also reports it by webhook. ' +
          'A charge the processor had already settled (the timeout card) keeps its true outcome.',
        params: IdParam('pay_01jd8x3v0pe7wbz0m4k6f2n9qa'),
        body: ResolvePaymentBody,
        headers: IdempotencyHeader(false),
        response: { 200: Type.Ref('Payment'), ...errorResponses('resource_missing', 'invalid_state', 'permission_denied', 'processor_unavailable') },
      },
    },
    async (req, reply) => sendOutcome(reply, await resolveTestPayment(db, rt, req.ctx, req.params.id, req.body.outcome as 'succeeded' | 'failed')),
  );

  app.post(
    '/v1/test-helpers/balance/fund',
    {
      config: { idempotency: 'required' },
      schema: {
        tags,
        operationId: 'fundTestBalance',
        summary: "Credit the test-mode balance's available amount",
        body: FundBalanceBody,
        headers: IdempotencyHeader(true),
        response: { 201: Type.Ref('BalanceTransaction'), ...errorResponses('permission_denied') },
      },
    },
    async (req, reply) => sendOutcome(reply, await fundTestBalance(db, req.ctx, req.body)),
  );

  app.post(
    '/v1/test-helpers/retry-limits/reset',
    {
      schema: {
        tags,
        operationId: 'resetTestRetryLimits',
        summary: "Clear the test mode's card reattempt counts",
        description:
          "Forgets every decline and reattempt counted for the card networks' reattempt limits in test mode (docs/declines.md), so that a card past them can be tried again.",
        response: { 200: RetryLimitsReset, ...errorResponses('permission_denied') },
      },
    },
    async (req) => resetTestRetryLimits(db, req.ctx),
  );
}
