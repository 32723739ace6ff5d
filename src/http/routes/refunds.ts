// HTTP surface of refunds.
import { runMovement } from '../../movement/engine.js';
import { Type } from 'typebox';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { errorResponses, IdempotencyHeader } from '../../kernel/schemas.js';
import { CreateRefundBody, ListRefundsQuery } from '../../domain/refunds/schema.js';
import { newRefund, listRefunds, retrieveRefund } from '../../domain/refunds/service.js';
import type { Runtime } from '../../runtime.js';
import { registerReadRoutes } from './reads.js';

const RefundRef = Type.Ref('Refund');
const tags = ['refunds'];

export function registerRefundRoutes(app: App, db: Db, rt: Runtime) {
  app.post(
    '/v1/refunds',
    {
      config: { idempotency: 'required' },
      schema: {
        tags,
        operationId: 'createRefund',
        summary: 'Refund a succeeded payment, fully or in part',
        description: 'The refunds of a payment never add up to more than its amount, even when requested concurrently (422 amount_above_refundable).',
        body: CreateRefundBody,
        headers: IdempotencyHeader(true),
        response: { 201: RefundRef, ...errorResponses('resource_missing', 'invalid_state', 'amount_above_refundable', 'insufficient_balance', 'charge_disputed') },
      },
    },
    async (req, reply) => sendOutcome(reply, await runMovement(db, rt, req.ctx, newRefund(db, rt, req.ctx, req.body))),
  );

  registerReadRoutes(app, {
    path: '/v1/refunds', tags, schema: 'Refund', names: ['refund', 'refunds'], idExample: 'ref_01jd8x3v0pe7wbz0m4k6f2n9qa',
    query: ListRefundsQuery, retrieve: (ctx, id) => retrieveRefund(db, ctx, id), list: (from, ctx, query) => listRefunds(from, ctx, query),
  });
}
