// HTTP surface of beneficiaries: validate, call one service function, shape the answer.
import { Type } from 'typebox';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { bodyOptional, errorResponses, IdempotencyHeader, IdParam, NoParameters } from '../../kernel/schemas.js';
import { CreateBeneficiaryBody, ListBeneficiariesQuery, UpdateBeneficiaryBody } from '../../domain/beneficiaries/schema.js';
import {
  createBeneficiary,
  disableBeneficiary,
  listBeneficiaries,
  retrieveBeneficiary,
  updateBeneficiary,
} from '../../domain/beneficiaries/service.js';
import type { Runtime } from '../../runtime.js';
import { registerReadRoutes } from './reads.js';
import { redactBankAccountForFingerprint } from './bank-account-schemas.js';

const BeneficiaryRef = Type.Ref('Beneficiary');
const tags = ['beneficiaries'];
const BENEFICIARY_ID_EXAMPLE = 'ben_01jd8x3v0pe7wbz0m4k6f2n9qa';
const BeneficiaryId = IdParam(BENEFICIARY_ID_EXAMPLE);

export function registerBeneficiaryRoutes(app: App, db: Db, rt: Runtime) {
  app.post(
    '/v1/beneficiaries',
    {
      config: { idempotency: 'optional', idempotencyFingerprint: redactBankAccountForFingerprint(rt.fingerprintKey) },
      schema: {
        tags,
        operationId: 'createBeneficiary',
        summary: 'Create a beneficiary with a validated bank account',
        description:
          'Validates the bank account (IBAN checksum and country length, BIC, GB sort code + 8-digit account number, US ABA routing ' +
          'checksum, IN IFSC, country ↔ currency); each bad field is a 400 naming it in `param` (e.g. `bank_account.iban`). The IBAN or ' +
          'account number is encrypted at rest and never returned or logged: the answer carries `last4` and a `fingerprint` that is ' +
          'equal for the same account, so duplicates can be found (GET /v1/beneficiaries?fingerprint=…). In test mode the account ' +
          "number's last four digits choose the simulated bank's behaviour (0000 paid, 0002 account closed, 0003 pending, 0004 timeout, " +
          '0005 processor error).',
        body: CreateBeneficiaryBody,
        headers: IdempotencyHeader(false),
        response: { 201: BeneficiaryRef, ...errorResponses() },
      },
    },
    async (req, reply) => sendOutcome(reply, await createBeneficiary(db, rt, req.ctx, req.body)),
  );

  registerReadRoutes(app, {
    path: '/v1/beneficiaries', tags, schema: 'Beneficiary', names: ['beneficiary', 'beneficiaries'], idExample: BENEFICIARY_ID_EXAMPLE,
    query: ListBeneficiariesQuery, retrieve: (ctx, id) => retrieveBeneficiary(db, ctx, id), list: (from, ctx, query) => listBeneficiaries(from, ctx, query),
  });

  app.patch(
    '/v1/beneficiaries/:id',
    {
      schema: {
        tags,
        operationId: 'updateBeneficiary',
        summary: "Change a beneficiary's name, email or metadata",
        description: 'The bank account cannot change: create a new beneficiary (and delete this one) instead.',
        params: BeneficiaryId,
        body: UpdateBeneficiaryBody,
        response: { 200: BeneficiaryRef, ...errorResponses('resource_missing') },
      },
    },
    async (req, reply) => sendOutcome(reply, await updateBeneficiary(db, rt, req.ctx, req.params.id, req.body)),
  );

  app.delete(
    '/v1/beneficiaries/:id',
    {
      preValidation: bodyOptional,
      schema: {
        tags,
        operationId: 'deleteBeneficiary',
        summary: 'Disable a beneficiary',
        description:
          'The beneficiary becomes `disabled` and is kept for the history of its payouts; new payouts to it answer 422 beneficiary_disabled. ' +
          'Payouts already created are not affected. Repeating the call changes nothing.',
        params: BeneficiaryId,
        body: NoParameters,
        response: { 200: BeneficiaryRef, ...errorResponses('resource_missing') },
      },
    },
    async (req, reply) => sendOutcome(reply, await disableBeneficiary(db, rt, req.ctx, req.params.id)),
  );
}
