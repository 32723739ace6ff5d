// A dispute's answer as the engine applies it (src/movement/report.ts), whoever learnt the outcome:
// the request that sent it, a retry of that request, or the worker's check. A taken submission
// puts the dispute under review (dispute.updated); a taken acceptance closes it (accepted, at a
// stage no later report of the processor undoes: dispute.closed). A refused answer leaves the
// dispute as it was, still answerable. The answer itself is internal and writes no event of its
// own: the dispute's say it all.
import { defineStateMachine } from '../../kernel/state-machine.js';
import { toPublicId } from '../../kernel/ids.js';
import type { Executor } from '../../storage/db.js';
import { disputeResponses, disputes } from '../../storage/schema.js';
import { ACCEPTED_STAGE, type DisputeResponseFailureCode } from '../../connectors/disputes.js';
import { lockRow } from '../../movement/apply.js';
import { SENT_TO_PARENTS_CONNECTOR, type ReportRules } from '../../movement/report.js';
import { disputeStates } from './state.js';
import { saveDispute, type DisputeRow } from './transitions.js';
import type { ChildUpdate } from '../../connectors/movements/children.js';

export type ResponseRow = typeof disputeResponses.$inferSelect;
export type ResponseStatus = ResponseRow['status'];

export type ResponseUpdate = ChildUpdate<DisputeResponseFailureCode>;

export const responseStates = defineStateMachine<ResponseStatus, 'awaiting' | 'final'>(
  'dispute answer',
  { pending: ['succeeded', 'failed'], succeeded: [], failed: [] },
  { awaiting: ['pending'], final: ['succeeded', 'failed'] },
);

/** The answer as logs and tests read it (it is no API object). */
export function responseView(row: ResponseRow) {
  return { id: toPublicId('dpr', row.id), dispute: toPublicId('dp', row.disputeId), action: row.action, status: row.status, failure_code: row.failureCode };
}

export async function lockDisputeOf(tx: Executor, response: Pick<ResponseRow, 'accountId' | 'livemode' | 'disputeId' | 'id'>): Promise<DisputeRow> {
  const dispute = await lockRow<DisputeRow>(tx, disputes, response.accountId, response.livemode, response.disputeId);
  if (!dispute) throw new Error(`dispute answer ${response.id} names a dispute that does not exist`);
  return dispute;
}

export const RESPONSE_RULES: ReportRules<ResponseRow, ResponseStatus, 'dispute', 'awaiting' | 'final', ResponseUpdate> = {
  object: 'dispute',
  table: disputeResponses,
  states: responseStates,
  view: responseView,
  // Created with its one connector, the dispute's: taken once it has a reference there.
  ...SENT_TO_PARENTS_CONNECTOR,
  effects: {
    async succeeded(tx, ctx, response, now) {
      const dispute = await lockDisputeOf(tx, response);
      // Decided meanwhile by the processor's own report: its word stands.
      if (disputeStates.is(dispute.status, 'closed')) return;
      if (response.action === 'accept') {
        await saveDispute(tx, ctx, dispute, { status: 'accepted', stage: ACCEPTED_STAGE }, 'dispute.closed', now);
        return;
      }
      if (dispute.status === 'under_review') return;
      await saveDispute(tx, ctx, dispute, { status: 'under_review' }, 'dispute.updated', now);
    },
  },
};
