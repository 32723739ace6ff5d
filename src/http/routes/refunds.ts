// HTTP surface of refunds.
import type { App } from '../types.js';
import { registerMovementRoute } from './movements.js';
import type { Db } from '../../storage/db.js';
import { CreateRefundBody, ListRefundsQuery } from '../../domain/refunds/schema.js';
import { newRefund, listRefunds, retrieveRefund } from '../../domain/refunds/service.js';
import type { Runtime } from '../../runtime.js';
import { registerReadRoutes } from './reads.js';

export function registerRefundRoutes(app: App, db: Db, rt: Runtime) {
  registerMovementRoute(app, db, rt, {
    path: '/v1/refunds',
    tags: ['refunds'],
    operationId: 'createRefund',
    summary: 'Refund a succeeded payment, fully or in part',
    description: 'The refunds of a payment never add up to more than its amount, even when requested concurrently (422 amount_above_refundable).',
    body: CreateRefundBody,
    answer: [201, 'Refund'],
    errors: ['resource_missing', 'invalid_state', 'amount_above_refundable', 'insufficient_balance', 'charge_disputed'],
    start: (ctx, body) => newRefund(db, rt, ctx, body),
  });

  registerReadRoutes(app, {
    path: '/v1/refunds', tags: ['refunds'], schema: 'Refund', names: ['refund', 'refunds'], idExample: 'ref_01jd8x3v0pe7wbz0m4k6f2n9qa',
    query: ListRefundsQuery, retrieve: (ctx, id) => retrieveRefund(db, ctx, id), list: (from, ctx, query) => listRefunds(from, ctx, query),
  });
}
