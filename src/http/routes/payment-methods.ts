// HTTP surface of saved payment methods: save a card without paying (verified by a zero-amount
// authorisation, src/domain/payment-methods/verification.ts), read, update and detach.
import { Type } from 'typebox';
import type { App } from '../types.js';
import { registerMovementRoute } from './movements.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { bodyOptional, errorResponses, IdempotencyHeader, IdParam, NoParameters } from '../../kernel/schemas.js';
import { CreatePaymentMethodBody, ListPaymentMethodsQuery, UpdatePaymentMethodBody } from '../../domain/payment-methods/schema.js';
import { newPaymentMethod } from '../../domain/payment-methods/verification.js';
import { returnFromVerification } from '../../domain/payment-methods/actions.js';
import { redactCardForFingerprint } from '../../domain/payments/cards.js';
import { detachPaymentMethod, listPaymentMethods, retrievePaymentMethod, updatePaymentMethod } from '../../domain/payment-methods/service.js';
import type { Runtime } from '../../runtime.js';
import { registerReadRoutes } from './reads.js';
import { formFields, requestParams } from '../pages.js';

const PaymentMethodRef = Type.Ref('PaymentMethod');
const tags = ['payment methods'];
const PAYMENT_METHOD_ID_EXAMPLE = 'pm_01jd8x3v0pe7wbz0m4k6f2n9qa';
const PaymentMethodId = IdParam(PAYMENT_METHOD_ID_EXAMPLE);

export function registerPaymentMethodRoutes(app: App, db: Db, rt: Runtime) {
  registerMovementRoute(app, db, rt, {
    path: '/v1/payment-methods',
    config: { idempotencyDeferred: true, idempotencyFingerprint: redactCardForFingerprint(rt.fingerprintKey) },
    tags,
    operationId: 'createPaymentMethod',
    summary: 'Save a card for a customer without paying',
    description:
      'Verifies the card with a zero-amount authorisation at a connector of the route (routed as a payment of 0 in `currency`) ' +
      'and answers 201 with the method: `active` (payment_method.attached), `requires_action` with `next_action` (3-D Secure: ' +
      'send the customer to next_action.url; they come back to return_url and the method is then active or failed), or ' +
      '`failed` with `failure_code` (nothing usable is saved). The card number is sealed in the vault; the CVC is sent to the ' +
      'processor and never stored.',
    body: CreatePaymentMethodBody,
    answer: [201, 'PaymentMethod'],
    errors: ['resource_missing', 'routing_no_match', 'processor_unavailable'],
    start: (ctx, body) => newPaymentMethod(db, rt, ctx, body),
  });

  app.register(async (scope) => {
    // Processors may post their form back; its fields are handed to the processor, never read as an outcome.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, formFields);
    scope.route({
      method: ['GET', 'POST'],
      url: '/v1/payment-methods/:id/return/:token',
      config: { auth: false },
      // Not part of the API (processors send the customer here, at the URL we gave them): docs/customers.md describes it.
      schema: { hide: true, params: Type.Object({ id: Type.String({ maxLength: 64 }), token: Type.String({ minLength: 1, maxLength: 128 }) }) },
      handler: async (req, reply) => {
        const { id, token } = req.params as { id: string; token: string };
        return reply.redirect(await returnFromVerification(db, rt, id, token, requestParams(req.query, req.body)), 303);
      },
    });
  });

  registerReadRoutes(app, {
    path: '/v1/payment-methods', tags, schema: 'PaymentMethod', names: ['payment method', 'payment methods'], idExample: PAYMENT_METHOD_ID_EXAMPLE,
    query: ListPaymentMethodsQuery, retrieve: (ctx, id) => retrievePaymentMethod(db, ctx, id), list: (from, ctx, query) => listPaymentMethods(from, ctx, query),
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
