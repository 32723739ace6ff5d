// HTTP surface of payments: validate, call one service function (a new payment: the engine with
// the payment's admit rule), shape the answer.
import { Type } from 'typebox';
import type { App } from '../types.js';
import { registerMovementRoute } from './movements.js';
import type { Db } from '../../storage/db.js';
import { errorResponses, IdParam, ListOf } from '../../kernel/schemas.js';
import { CreatePaymentBody, ListPaymentsQuery, RetrievePaymentQuery } from '../../domain/payments/schema.js';
import { listPayments, newPayment, retrievePayment } from '../../domain/payments/service.js';
import type { Config } from '../../config.js';
import { redactCardForFingerprint } from '../../domain/payments/cards.js';
import type { Runtime } from '../../runtime.js';

const PaymentRef = Type.Ref('Payment');
const tags = ['payments'];

export function registerPaymentRoutes(app: App, db: Db, rt: Runtime, config: Config) {
  registerMovementRoute(app, db, rt, {
    path: '/v1/payments',
    config: { idempotencyDeferred: true, idempotencyFingerprint: redactCardForFingerprint(rt.config.cardFingerprintKey) },
    tags,
    operationId: 'createPayment',
    summary: 'Pay an open payment order',
    description:
      'Routes the payment to a connector and answers 201 with the payment in whatever state it reached: `succeeded`, `failed` ' +
      '(a decline is not an HTTP error) or `pending` (the outcome comes later by webhook, `?refresh=true` or the worker). ' +
      'The card number and CVC are passed to the connector and never stored, logged or returned. ' +
      'With `payment_method: {type: "mandate", mandate}` the payment is a direct debit against an active mandate of the ' +
      "order's currency (422 mandate_not_active, currency_mismatch, amount_above_limit otherwise): it is sent to the " +
      'connector holding the mandate, starts `pending` and settles later (webhook, worker or test helper).',
    body: CreatePaymentBody,
    answer: [201, 'Payment'],
    errors: ['resource_missing', 'order_not_payable', 'routing_no_match', 'amount_above_limit', 'mandate_not_active', 'currency_mismatch', 'processor_unavailable'],
    start: (ctx, body) => newPayment(db, rt, ctx, body),
  });

  app.get(
    '/v1/payments/:id',
    {
      schema: {
        tags,
        operationId: 'retrievePayment',
        summary: 'Retrieve a payment',
        description: "The payment as recorded; with `refresh=true` a pending payment's connector is asked for its current state first.",
        params: IdParam('pay_01jd8x3v0pe7wbz0m4k6f2n9qa'),
        querystring: RetrievePaymentQuery,
        response: { 200: PaymentRef, ...errorResponses('resource_missing') },
      },
      // A refresh may apply the processor's answer: its key's lists then read the primary (src/http/read-routing.ts).
      config: { writes: (req) => String((req.query as { refresh?: unknown }).refresh) === 'true' },
    },
    async (req) => retrievePayment(db, rt, req.ctx, req.params.id, { refresh: req.query.refresh }),
  );

  app.get(
    '/v1/payments',
    {
      schema: {
        tags,
        operationId: 'listPayments',
        summary: 'List payments, newest first',
        querystring: ListPaymentsQuery,
        response: { 200: ListOf(PaymentRef), ...errorResponses() },
      },
    },
    async (req) => req.read((from) => listPayments(from, req.ctx, req.query)),
  );
}
