// HTTP surface of mandates and their test helper: validate, call one service function, shape the answer.
import { Type } from 'typebox';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Config } from '../../config.js';
import type { Db } from '../../storage/db.js';
import { bodyOptional, errorResponses, IdempotencyHeader, IdParam, NoParameters } from '../../kernel/schemas.js';
import { addSharedSchema } from '../validation.js';
import { CreateMandateBody, ListMandatesQuery, Mandate, ResolveMandateBody } from '../../domain/mandates/schema.js';
import { listMandates, newMandate, resolveTestMandate, retrieveMandate, revokeMandate } from '../../domain/mandates/service.js';
import { registerMovementRoute } from './movements.js';
import type { Runtime } from '../../runtime.js';
import { redactBankAccountForFingerprint, registerBankAccountSchemas } from './bank-account-schemas.js';
import { registerReadRoutes } from './reads.js';

const MandateRef = Type.Ref('Mandate');
const tags = ['mandates'];
const EXAMPLE_ID = 'mdt_01jd8x3v0pe7wbz0m4k6f2n9qa';

export function registerMandateRoutes(app: App, db: Db, config: Config, rt: Runtime) {
  registerBankAccountSchemas(app);
  app.addSchema(Mandate);
  addSharedSchema(Mandate);

  registerMovementRoute(app, db, rt, {
    path: '/v1/mandates',
    config: { idempotencyFingerprint: redactBankAccountForFingerprint(rt.config.cardFingerprintKey) },
    tags,
    operationId: 'createMandate',
    summary: "Register a mandate to debit a customer's bank account",
    description:
      "Validates the account and its fit with the scheme, registers the mandate with the customer's bank through a connector " +
      'and answers 201 with the mandate as it stands: `active`, `failed` (a refusal is not an HTTP error) or `pending` (the bank ' +
      'answers later, reported by webhook). The IBAN or account number is encrypted at rest and never logged or returned: only ' +
      '`last4` and a keyed `fingerprint`.',
    body: CreateMandateBody,
    answer: [201, 'Mandate'],
    errors: ['resource_missing', 'routing_no_match', 'processor_unavailable'],
    start: (ctx, body) => newMandate(db, rt, ctx, body),
  });

  registerReadRoutes(app, {
    path: '/v1/mandates', tags, schema: 'Mandate', names: ['mandate', 'mandates'], idExample: EXAMPLE_ID,
    query: ListMandatesQuery, retrieve: (ctx, id) => retrieveMandate(db, ctx, id), list: (from, ctx, query) => listMandates(from, ctx, query),
  });

  app.post(
    '/v1/mandates/:id/revoke',
    {
      config: { idempotency: 'optional' },
      preValidation: bodyOptional,
      schema: {
        tags,
        operationId: 'revokeMandate',
        summary: 'Revoke an active mandate',
        description:
          'From the answer on, payments on the mandate are refused (422 mandate_not_active). Debits already sent still settle, once. ' +
          'Only an active mandate can be revoked (422 invalid_state otherwise).',
        params: IdParam(EXAMPLE_ID),
        body: NoParameters,
        headers: IdempotencyHeader(false),
        response: { 200: MandateRef, ...errorResponses('resource_missing', 'invalid_state') },
      },
    },
    async (req, reply) => sendOutcome(reply, await revokeMandate(db, rt, req.ctx, req.params.id)),
  );

  app.post(
    '/v1/test-helpers/mandates/:id/resolve',
    {
      config: { idempotency: 'optional' },
      schema: {
        tags: ['test helpers'],
        operationId: 'resolveTestMandate',
        summary: "Have the simulated bank answer a pending test-mode mandate, or revoke an active one",
        description:
          '`active` / `failed`: the bank accepts or refuses a pending mandate. `revoked`: the customer revokes an active mandate ' +
          'through their bank. The simulated processor also reports it by webhook (mandate.active, mandate.failed, mandate.revoked). ' +
          'A mandate the processor had already settled (the timeout account) keeps its true outcome.',
        params: IdParam(EXAMPLE_ID),
        body: ResolveMandateBody,
        headers: IdempotencyHeader(false),
        response: { 200: MandateRef, ...errorResponses('resource_missing', 'invalid_state', 'permission_denied', 'processor_unavailable') },
      },
    },
    async (req, reply) =>
      sendOutcome(reply, await resolveTestMandate(db, rt, req.ctx, req.params.id, req.body.outcome as 'active' | 'failed' | 'revoked')),
  );
}
