// HTTP surface of disputes: cardholders' chargebacks as the processors report them, and the
// merchant's answers to them (docs/disputes.md).
import { Type } from 'typebox';
import type { App } from '../types.js';
import { registerMovementRoute } from './movements.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { bodyOptional, errorResponses, IdempotencyHeader } from '../../kernel/schemas.js';
import { DisputeEvidenceBody, ListDisputesQuery } from '../../domain/disputes/schema.js';
import { listDisputes, retrieveDispute } from '../../domain/disputes/service.js';
import { newAcceptance, answerWithEvidence } from '../../domain/disputes/answers.js';
import type { Runtime } from '../../runtime.js';
import { registerReadRoutes } from './reads.js';

const tags = ['disputes'];
const params = Type.Object({ id: Type.String({ description: 'The dispute (dp_…).', examples: ['dp_01jd8x3v0pe7wbz0m4k6f2n9qa'] }) });

export function registerDisputeRoutes(app: App, db: Db, rt: Runtime) {
  app.post<{ Params: { id: string }; Body: DisputeEvidenceBody }>(
    '/v1/disputes/:id/evidence',
    {
      config: { idempotency: 'required' },
      schema: {
        tags,
        operationId: 'saveDisputeEvidence',
        summary: "Save a dispute's evidence, and submit it",
        description:
          "Saves text evidence (Stripe's text evidence fields; a field given again replaces its text) while the dispute waits for it (warning_needs_response, needs_response) and before evidence_due_by (422 dispute_evidence_closed otherwise). With submit: true the evidence is sent to the processor (Stripe: the dispute updated with submit; Adyen: the text as a PDF with supplyDefenseDocument, then defendDispute with defense_reason or the first applicable one) and the dispute goes under_review. A processor's refusal answers 422 dispute_response_refused, the dispute unchanged.",
        params,
        body: DisputeEvidenceBody,
        headers: IdempotencyHeader(true),
        response: {
          200: Type.Ref('Dispute'),
          ...errorResponses('resource_missing', 'parameter_missing', 'invalid_state', 'dispute_evidence_closed', 'dispute_response_refused'),
        },
      },
    },
    async (req, reply) => sendOutcome(reply, await answerWithEvidence(db, rt, req.ctx, req.params.id, req.body)),
  );

  registerMovementRoute(app, db, rt, {
    path: '/v1/disputes/:id/accept',
    bodyOptional: true,
    tags,
    operationId: 'acceptDispute',
    summary: 'Accept a dispute',
    description:
      'Gives the dispute up at the processor (Stripe: close; Adyen: acceptDispute) while it waits for an answer: it becomes accepted (dispute.closed) and its funds stay out of the balance. A processor\'s refusal answers 422 dispute_response_refused, the dispute unchanged.',
    params,
    body: Type.Object({}, { additionalProperties: false }),
    answer: [200, 'Dispute'],
    errors: ['resource_missing', 'invalid_state', 'dispute_response_refused'],
    start: (ctx, _body, p) => newAcceptance(db, rt, ctx, p.id),
  });

  registerReadRoutes(app, {
    path: '/v1/disputes', tags, schema: 'Dispute', names: ['dispute', 'disputes'], idExample: 'dp_01jd8x3v0pe7wbz0m4k6f2n9qa',
    query: ListDisputesQuery, retrieve: (ctx, id) => retrieveDispute(db, ctx, id), list: (from, ctx, query) => listDisputes(from, ctx, query),
  });
}
