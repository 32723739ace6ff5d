// HTTP surface of captures: taking a manual payment's authorised money (docs/authorise-and-capture.md).
import { Type } from 'typebox';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { errorResponses, IdempotencyHeader } from '../../kernel/schemas.js';
import { CapturePaymentBody, ListCapturesQuery } from '../../domain/captures/schema.js';
import { capturePayment, listCaptures, retrieveCapture } from '../../domain/captures/service.js';
import type { Runtime } from '../../runtime.js';
import { registerReadRoutes } from './reads.js';

const CaptureRef = Type.Ref('Capture');
const tags = ['captures'];

export function registerCaptureRoutes(app: App, db: Db, rt: Runtime) {
  app.post<{ Params: { id: string }; Body: CapturePaymentBody }>(
    '/v1/payments/:id/capture',
    {
      config: { idempotency: 'required' },
      schema: {
        tags,
        operationId: 'capturePayment',
        summary: 'Capture an authorised payment, fully or in part',
        description:
          'Takes money a manual payment holds (status requires_capture): the whole amount_capturable by default. Concurrent captures never take more than the authorisation holds (422 amount_above_capturable). The answer is the capture (cap_): succeeded, failed, or pending where the processor confirms later.',
        params: Type.Object({ id: Type.String({ description: 'The payment (pay_…).', examples: ['pay_01jd8x3v0pe7wbz0m4k6f2n9qa'] }) }),
        body: CapturePaymentBody,
        headers: IdempotencyHeader(true),
        response: {
          201: CaptureRef,
          ...errorResponses('resource_missing', 'invalid_state', 'amount_above_capturable', 'authorization_expired', 'capture_not_supported'),
        },
      },
    },
    async (req, reply) => sendOutcome(reply, await capturePayment(db, rt, req.ctx, req.params.id, req.body)),
  );

  registerReadRoutes(app, {
    path: '/v1/captures', tags, schema: 'Capture', names: ['capture', 'captures'], idExample: 'cap_01jd8x3v0pe7wbz0m4k6f2n9qa',
    query: ListCapturesQuery, retrieve: (ctx, id) => retrieveCapture(db, ctx, id), list: (ctx, query) => listCaptures(db, ctx, query),
  });
}
