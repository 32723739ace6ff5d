// HTTP surface of captures and voids: taking a manual payment's authorised money, or releasing it (docs/authorise-and-capture.md).
import { Type } from 'typebox';
import type { App } from '../types.js';
import { registerMovementRoute } from './movements.js';
import type { Db } from '../../storage/db.js';
import { CancelPaymentBody } from '../../domain/voids/schema.js';
import { newVoid } from '../../domain/voids/service.js';
import { CapturePaymentBody, ListCapturesQuery } from '../../domain/captures/schema.js';
import { newCapture, listCaptures, retrieveCapture } from '../../domain/captures/service.js';
import type { Runtime } from '../../runtime.js';
import { registerReadRoutes } from './reads.js';

const PaymentParam = Type.Object({ id: Type.String({ description: 'The payment (pay_…).', examples: ['pay_01jd8x3v0pe7wbz0m4k6f2n9qa'] }) });
const tags = ['captures'];

export function registerCaptureRoutes(app: App, db: Db, rt: Runtime) {
  registerMovementRoute(app, db, rt, {
    path: '/v1/payments/:id/capture',
    tags,
    operationId: 'capturePayment',
    summary: 'Capture an authorised payment, fully or in part',
    description:
      'Takes money a manual payment holds (status requires_capture): the whole amount_capturable by default. Concurrent captures never take more than the authorisation holds (422 amount_above_capturable). The answer is the capture (cap_): succeeded, failed, or pending where the processor confirms later.',
    params: PaymentParam,
    body: CapturePaymentBody,
    answer: [201, 'Capture'],
    errors: ['resource_missing', 'invalid_state', 'amount_above_capturable', 'authorization_expired', 'capture_not_supported'],
    start: (ctx, body, params) => newCapture(db, rt, ctx, params.id, body),
  });

  registerMovementRoute(app, db, rt, {
    path: '/v1/payments/:id/cancel',
    bodyOptional: true,
    tags: ['payments'],
    operationId: 'cancelPayment',
    summary: 'Void an authorisation',
    description:
      'Releases the money a manual payment holds (requires_capture with nothing captured) or abandons one waiting for its customer (requires_action): the processor voids it, the payment becomes canceled with cancellation_reason and its order is open again. Where the processor confirms later (Adyen) the payment stays requires_capture, amount_capturable 0, until it does.',
    params: PaymentParam,
    body: CancelPaymentBody,
    answer: [200, 'Payment'],
    errors: ['resource_missing', 'invalid_state'],
    start: (ctx, body, params) => newVoid(db, rt, ctx, params.id, body ?? {}),
  });

  registerReadRoutes(app, {
    path: '/v1/captures', tags, schema: 'Capture', names: ['capture', 'captures'], idExample: 'cap_01jd8x3v0pe7wbz0m4k6f2n9qa',
    query: ListCapturesQuery, retrieve: (ctx, id) => retrieveCapture(db, ctx, id), list: (from, ctx, query) => listCaptures(from, ctx, query),
  });
}
