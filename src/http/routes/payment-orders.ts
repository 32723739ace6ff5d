// HTTP surface of payment orders: validate, call one service function, shape the answer.
import { Type } from 'typebox';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import type { Config } from '../../config.js';
import type { Runtime } from '../../runtime.js';
import { registerReadRoutes } from './reads.js';
import { bodyOptional, errorResponses, IdempotencyHeader, IdParam, NoParameters } from '../../kernel/schemas.js';
import { CreatePaymentOrderBody, ListPaymentOrdersQuery } from '../../domain/payment-orders/schema.js';
import { cancelOrderVoidingFirst } from '../../domain/voids/service.js';
import { createPaymentOrder, listPaymentOrders, retrievePaymentOrder } from '../../domain/payment-orders/service.js';

const PaymentOrderRef = Type.Ref('PaymentOrder');
const tags = ['payment orders'];

export function registerPaymentOrderRoutes(app: App, db: Db, config: Config, rt: Runtime) {
  app.post(
    '/v1/payment-orders',
    {
      config: { idempotency: 'required', idempotencyDeferred: true },
      schema: {
        tags,
        operationId: 'createPaymentOrder',
        summary: 'Create a payment order',
        body: CreatePaymentOrderBody,
        headers: IdempotencyHeader(true),
        response: { 201: PaymentOrderRef, ...errorResponses() },
      },
    },
    async (req, reply) => sendOutcome(reply, await createPaymentOrder(db, req.ctx, req.body, rt.publicUrl(), rt.now())),
  );

  registerReadRoutes(app, {
    path: '/v1/payment-orders', tags, schema: 'PaymentOrder', names: ['payment order', 'payment orders'], idExample: 'ord_01jd8x3v0pe7wbz0m4k6f2n9qa',
    query: ListPaymentOrdersQuery, retrieve: (ctx, id) => retrievePaymentOrder(db, ctx, id), list: (from, ctx, query) => listPaymentOrders(from, ctx, query),
  });

  app.post(
    '/v1/payment-orders/:id/cancel',
    {
      config: { idempotency: 'optional' },
      preValidation: bodyOptional,
      schema: {
        tags,
        operationId: 'cancelPaymentOrder',
        summary: 'Cancel an open payment order',
        description: 'An order whose payment holds an authorisation (requires_capture) has it voided first (the payment canceled), then is cancelled.',
        params: IdParam('ord_01jd8x3v0pe7wbz0m4k6f2n9qa'),
        body: NoParameters,
        headers: IdempotencyHeader(false),
        response: { 200: PaymentOrderRef, ...errorResponses('resource_missing', 'invalid_state') },
      },
    },
    async (req, reply) => sendOutcome(reply, await cancelOrderVoidingFirst(db, rt, req.ctx, req.params.id)),
  );
}
