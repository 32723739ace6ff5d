// HTTP surface of saved payment methods: read, update and detach. Saving a card (POST
// /v1/payment-methods, or while paying) is not offered yet: methods are created inside the service
// only (attachPaymentMethod, src/domain/payment-methods/service.ts).
import { Type } from 'typebox';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { bodyOptional, errorResponses, IdempotencyHeader, IdParam, NoParameters } from '../../kernel/schemas.js';
import { ListPaymentMethodsQuery, UpdatePaymentMethodBody } from '../../domain/payment-methods/schema.js';
import { detachPaymentMethod, listPaymentMethods, retrievePaymentMethod, updatePaymentMethod } from '../../domain/payment-methods/service.js';
import type { Runtime } from '../../runtime.js';
import { registerReadRoutes } from './reads.js';

const PaymentMethodRef = Type.Ref('PaymentMethod');
const tags = ['payment methods'];
const PAYMENT_METHOD_ID_EXAMPLE = 'pm_01jd8x3v0pe7wbz0m4k6f2n9qa';
const PaymentMethodId = IdParam(PAYMENT_METHOD_ID_EXAMPLE);

export function registerPaymentMethodRoutes(app: App, db: Db, rt: Pick<Runtime, 'now' | 'vault'>) {
  registerReadRoutes(app, {
    path: '/v1/payment-methods', tags, schema: 'PaymentMethod', names: ['payment method', 'payment methods'], idExample: PAYMENT_METHOD_ID_EXAMPLE,
    query: ListPaymentMethodsQuery, retrieve: (ctx, id) => retrievePaymentMethod(db, ctx, id), list: (ctx, query) => listPaymentMethods(db, ctx, query),
  });

  app.patch(
    '/v1/payment-methods/:id',
    {
      schema: {
        tags,
        operationId: 'updatePaymentMethod',
        summary: "Change a saved card's expiry or metadata",
        description: 'A detached method cannot change: 422 payment_method_detached.',
        params: PaymentMethodId,
        body: UpdatePaymentMethodBody,
        response: { 200: PaymentMethodRef, ...errorResponses('resource_missing', 'payment_method_detached') },
      },
    },
    async (req, reply) => sendOutcome(reply, await updatePaymentMethod(db, req.ctx, req.params.id, req.body, rt.now())),
  );

  app.post(
    '/v1/payment-methods/:id/detach',
    {
      config: { idempotency: 'optional' },
      preValidation: bodyOptional,
      schema: {
        tags,
        operationId: 'detachPaymentMethod',
        summary: 'Detach a saved card and erase its card data',
        description:
          'The method stays, `detached`, and can no longer be used or changed (payment_method.detached). As at Stripe, detaching it again ' +
          'is an error (422 payment_method_detached); a retry that must see the first answer sends the same Idempotency-Key.',
        params: PaymentMethodId,
        body: NoParameters,
        headers: IdempotencyHeader(false),
        response: { 200: PaymentMethodRef, ...errorResponses('resource_missing', 'payment_method_detached') },
      },
    },
    async (req, reply) => sendOutcome(reply, await detachPaymentMethod(db, rt.vault, req.ctx, req.params.id, rt.now())),
  );
}
