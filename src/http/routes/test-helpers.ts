// Test helpers of payments, captures and the balance (test-mode keys only; live keys get 403).
import { Type, type TSchema } from 'typebox';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { errorResponses, IdempotencyHeader, IdParam } from '../../kernel/schemas.js';
import { ResolvePaymentBody } from '../../domain/payments/schema.js';
import { resolveTestPayment } from '../../domain/payments/service.js';
import { ResolveCaptureBody } from '../../domain/captures/schema.js';
import { resolveTestCapture } from '../../domain/captures/service.js';
import type { Runtime } from '../../runtime.js';
import { FundBalanceBody } from '../../ledger/schema.js';
import { fundTestBalance } from '../../ledger/balance.js';
import { resetTestRetryLimits, RetryLimitsReset } from '../../domain/payments/retry-limits.js';

const tags = ['test helpers'];

export function registerPaymentTestHelperRoutes(app: App, db: Db, rt: Runtime) {
  resolveHelper(app, '/v1/test-helpers/payments/:id/resolve', {
    operationId: 'resolveTestPayment',
    summary: 'Settle a pending test-mode payment now',
    description:
      'Tells the simulated processor to settle the pending charge with `outcome`; the processor also reports it by webhook. ' +
      'A charge the processor had already settled (the timeout card) keeps its true outcome.',
    example: 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa',
    body: ResolvePaymentBody,
    answer: 'Payment',
    settle: (ctx, id, outcome) => resolveTestPayment(db, rt, ctx, id, outcome),
  });

  resolveHelper(app, '/v1/test-helpers/captures/:id/resolve', {
    operationId: 'resolveTestCapture',
    summary: 'Settle a pending test-mode capture now',
    description:
      'Has the simulated processor confirm (`succeeded`) or refuse (`failed`, capture_declined) a capture it holds pending (card 4000000000000580), ' +
      'applied as a processor confirming a capture later is: the capture event, the ledger entry and, for a final capture, the payment and its order. ' +
      'The processor also reports it by webhook.',
    example: 'cap_01jd8x3v0pe7wbz0m4k6f2n9qa',
    body: ResolveCaptureBody,
    answer: 'Capture',
    settle: (ctx, id, outcome) => resolveTestCapture(db, rt, ctx, id, outcome),
  });

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

/** A resolve helper: the simulated processor settles the object `:id` now with the body's outcome. */
function resolveHelper(
  app: App,
  path: string,
  doc: { operationId: string; summary: string; description: string; example: string; body: TSchema; answer: string; settle: (ctx: RequestContext, id: string, outcome: 'succeeded' | 'failed') => Promise<Outcome> },
) {
  app.post<{ Params: { id: string }; Body: { outcome: string } }>(
    path,
    {
      config: { idempotency: 'optional' },
      schema: {
        tags,
        operationId: doc.operationId,
        summary: doc.summary,
        description: doc.description,
        params: IdParam(doc.example),
        body: doc.body,
        headers: IdempotencyHeader(false),
        response: { 200: Type.Ref(doc.answer), ...errorResponses('resource_missing', 'invalid_state', 'permission_denied', 'processor_unavailable') },
      },
    },
    async (req, reply) => sendOutcome(reply, await doc.settle(req.ctx, req.params.id, req.body.outcome as 'succeeded' | 'failed')),
  );
}
