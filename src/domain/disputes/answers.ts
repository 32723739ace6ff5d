// The merchant's answers to a dispute (docs/disputes.md): evidence saved (POST
// /v1/disputes/{id}/evidence), submitted with it (`submit: true`), or the dispute accepted (POST
// /v1/disputes/{id}/accept). Saving alone is one transaction. Submitting and accepting are
// movements on the engine like voids (response-kind.ts): (1) lock the dispute, check it still
// takes an answer (and, for evidence, that evidence_due_by has not passed), save the evidence and
// insert the answer `pending`; (2) send it to the dispute's processor under the answer's id; (3)
// apply what it said (response-rules.ts). A crash between the phases is resumed by a retry with
// the same Idempotency-Key, or by the worker's check of pending answers (jobs.ts).
import { and, eq } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { disputeResponses, disputes } from '../../storage/schema.js';
import { respond } from '../../idempotency/store.js';
import { ApiError } from '../../kernel/errors.js';
import { parseId } from '../../kernel/ids.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { notFound } from '../../storage/lookup.js';
import { newOwnedRow } from '../../storage/tenant.js';
import { lockRow } from '../../movement/apply.js';
import { runMovement, type NewMovement } from '../../movement/engine.js';
import { resendCheckAt } from '../../movement/saga.js';
import type { DisputeResponseRequest } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import { responseKind } from './response-kind.js';
import { responseRequest } from '../../connectors/movements/children.js';
import type { ResponseRow } from './response-rules.js';
import type { DisputeEvidenceBody } from './schema.js';
import { disputeStates } from './state.js';
import { disputeView, saveDispute, type DisputeRow } from './transitions.js';

type Answer = { action: 'submit' | 'accept'; evidence?: DisputeEvidenceBody['evidence']; defenseReason?: string };

/** POST /v1/disputes/{id}/evidence: saved, and sent with `submit: true`. The answer is the dispute. */
export async function answerWithEvidence(db: Db, rt: Runtime, ctx: RequestContext, id: string, body: DisputeEvidenceBody): Promise<Outcome> {
  if (body.submit) return runMovement(db, rt, ctx, answerOf(db, rt, ctx, id, { action: 'submit', evidence: body.evidence, defenseReason: body.defense_reason }));
  const uuid = parseId('dp', id);
  const saved = uuid
    ? await db.transaction(async (tx) => {
        const dispute = await lockRow<DisputeRow>(tx, disputes, ctx.accountId, ctx.livemode, uuid);
        if (!dispute) return undefined;
        const after = await saveEvidence(tx, ctx, dispute, body.evidence, body.defense_reason, rt.now());
        return respond(tx, ctx, 200, disputeView(after));
      })
    : undefined;
  return saved ?? Promise.reject(await missingDispute(db, ctx, id));
}

/** POST /v1/disputes/{id}/accept as the engine runs it (runMovement): the merchant gives the dispute up; the answer is the dispute (accepted). */
export function newAcceptance(db: Db, rt: Runtime, ctx: RequestContext, id: string): NewMovement<ResponseRow, DisputeResponseRequest> {
  return answerOf(db, rt, ctx, id, { action: 'accept' });
}

function answerOf(db: Db, rt: Runtime, ctx: RequestContext, id: string, answer: Answer): NewMovement<ResponseRow, DisputeResponseRequest> {
  const uuid = parseId('dp', id);
  const request = async (row: ResponseRow) => responseRequest(row);
  return {
    kind: responseKind,
    resend: request,
    plan: async () => ({
      admit: async (tx, now) => (uuid ? admitAnswer(tx, rt, ctx, uuid, answer, now) : undefined),
      missing: () => missingDispute(db, ctx, id),
      request,
    }),
  };
}

async function missingDispute(db: Db, ctx: RequestContext, id: string): Promise<ApiError> {
  const missing = await notFound(db, ctx, disputes, parseId('dp', id), 'dispute', id);
  return new ApiError('resource_missing', { param: 'id', message: missing.message });
}

/**
 * The evidence merged into what was saved (a field given again replaces its text), on a dispute
 * that still takes evidence and whose deadline has not passed; dispute.updated when it changed.
 */
async function saveEvidence(tx: Executor, ctx: RequestContext, dispute: DisputeRow, evidence: DisputeEvidenceBody['evidence'], defenseReason: string | undefined, now: Date): Promise<DisputeRow> {
  if (!disputeStates.is(dispute.status, 'answerable')) {
    throw new ApiError('dispute_evidence_closed', { message: `The dispute is ${dispute.status}: it no longer takes evidence.` });
  }
  if (dispute.evidenceDueBy && dispute.evidenceDueBy.getTime() <= now.getTime()) {
    throw new ApiError('dispute_evidence_closed', { message: `The evidence deadline (evidence_due_by ${dispute.evidenceDueBy.toISOString()}) has passed.` });
  }
  const merged = { ...dispute.evidence, ...(evidence as Record<string, string> | undefined) };
  const reason = defenseReason ?? dispute.defenseReason;
  if (JSON.stringify(merged) === JSON.stringify(dispute.evidence) && reason === dispute.defenseReason) return dispute;
  return saveDispute(tx, ctx, dispute, { evidence: merged, defenseReason: reason }, 'dispute.updated', now);
}

/**
 * The admit rule of an answer, in phase 1's transaction: the dispute locked and answerable, its
 * evidence saved first when submitting (and not empty), no other answer on its way.
 */
async function admitAnswer(tx: Executor, rt: Runtime, ctx: RequestContext, uuid: string, answer: Answer, now: Date): Promise<ResponseRow | undefined> {
  let dispute = await lockRow<DisputeRow>(tx, disputes, ctx.accountId, ctx.livemode, uuid);
  if (!dispute) return undefined;
  if (answer.action === 'submit') {
    dispute = await saveEvidence(tx, ctx, dispute, answer.evidence, answer.defenseReason, now);
    if (Object.values(dispute.evidence).every((text) => text.trim() === '')) {
      throw new ApiError('parameter_missing', { param: 'evidence', message: 'No evidence is saved: give at least one evidence field to submit.' });
    }
  } else disputeStates.require(dispute.status, 'answerable', 'accept');
  const [onItsWay] = await tx
    .select({ action: disputeResponses.action })
    .from(disputeResponses)
    .where(and(eq(disputeResponses.accountId, ctx.accountId), eq(disputeResponses.disputeId, dispute.id), eq(disputeResponses.status, 'pending')));
  if (onItsWay) throw new ApiError('invalid_state', { message: `An answer to this dispute (${onItsWay.action}) is already on its way to the processor.` });
  const [row] = await tx
    .insert(disputeResponses)
    .values({
      ...newOwnedRow(ctx, 'dpr', now),
      disputeId: dispute.id,
      paymentId: dispute.paymentId,
      action: answer.action,
      status: 'pending',
      connector: dispute.connector,
      disputeConnectorReference: dispute.connectorReference,
      evidence: answer.action === 'submit' ? dispute.evidence : {},
      defenseReason: answer.action === 'submit' ? dispute.defenseReason : null,
      nextStatusCheckAt: resendCheckAt(rt, now),
    })
    .returning();
  return row!;
}
