// Dashboard pages of disputes: the list (by status), and a dispute with its deadline, its money,
// its evidence form (save, or save and submit to the processor), accepting it, and its events —
// the same calls as POST /v1/disputes/{id}/evidence and /accept (src/domain/disputes/answers.ts).
import { runMovement } from '../../movement/engine.js';
import type { App } from '../types.js';
import { listDisputes, retrieveDispute } from '../../domain/disputes/service.js';
import { newAcceptance, answerWithEvidence } from '../../domain/disputes/answers.js';
import { DisputeEvidenceBody, EVIDENCE_FIELDS, ListDisputesQuery, type DisputeView } from '../../domain/disputes/schema.js';
import { DISPUTE_STATUSES, disputeStates } from '../../domain/disputes/state.js';
import { listEvents } from '../../events/service.js';
import { act, checked, filled, formKey, viewOf, type DashboardDeps } from './act.js';
import { formOf } from './session.js';
import { code, facts, getForm, html, idLink, money, noticeOf, pager, postForm, sendView, status, table, timeline, when } from './layout.js';

const NOTICES: Record<string, string> = {
  saved: 'Evidence saved. It is sent to the processor when you submit it.',
  submitted: 'Evidence submitted: the dispute is under review until the processor decides.',
  accepted: 'Dispute accepted: its funds stay with the cardholder.',
};
const disputeLink = (id: string) => idLink(`/dashboard/disputes/${id}`, id);

export function registerDisputePages(app: App, deps: DashboardDeps) {
  const { db, rt } = deps;

  app.get('/dashboard/disputes', async (req, reply) => {
    const query = filled(req.query);
    const page = await req.read((from) => listDisputes(from, req.ctx, checked(ListDisputesQuery, { limit: '25', ...query }, 'querystring')));
    const filters = getForm('/dashboard/disputes', [{ name: 'status', label: 'Status', value: query.status, options: [...DISPUTE_STATUSES] }], 'Filter');
    const rows = table(page.data, [
      { label: 'Dispute', cell: (d: DisputeView) => disputeLink(d.id) },
      { label: 'Amount', cell: (d) => money(d.amount, d.currency) },
      { label: 'Status', cell: (d) => status(d.status) },
      { label: 'Reason', cell: (d) => d.reason },
      { label: 'Evidence due', cell: (d) => (d.evidence_due_by ? when(d.evidence_due_by) : '') + (d.evidence_due_soon ? ' (soon)' : '') },
      { label: 'Payment', cell: (d) => idLink(`/dashboard/payments/${d.payment}`, d.payment) },
    ], 'No disputes match.');
    return sendView(reply, viewOf(req), 'Disputes', html`${filters}${rows}${pager('/dashboard/disputes', query, page)}`, { current: '/dashboard/disputes' });
  });

  app.get('/dashboard/disputes/:id', async (req, reply) => {
    const { id } = req.params as { id: string };
    const view = viewOf(req);
    const dispute = await retrieveDispute(db, req.ctx, id);
    const events = await listEvents(db, req.ctx, { objects: [dispute.id], limit: 100 });
    const open = disputeStates.is(dispute.status, 'answerable');
    const evidence = EVIDENCE_FIELDS.map((name) => ({ name, label: name.replace(/_/g, ' '), value: dispute.evidence[name] ?? '' }));
    const answer = open
      ? html`<h2>Evidence</h2>${postForm(`/dashboard/disputes/${dispute.id}/evidence`, view.csrf, [
          { hidden: 'idem', value: formKey() },
          ...evidence,
          { name: 'defense_reason', label: 'Defense reason (Adyen; empty: the first that applies)', value: dispute.defense_reason ?? '' },
          { name: 'submit', label: 'Then', value: 'save only', options: ['save only', 'submit to the processor'] },
        ], 'Save evidence')}${postForm(`/dashboard/disputes/${dispute.id}/accept`, view.csrf, [{ hidden: 'idem', value: formKey() }], 'Accept the dispute', 'danger')}`
      : html`<h2>Evidence</h2>${facts(EVIDENCE_FIELDS.filter((f) => dispute.evidence[f]).map((f) => [f.replace(/_/g, ' '), dispute.evidence[f]!] as [string, string]))}`;
    const body = html`${facts([
      ['Id', code(dispute.id)],
      ['Status', status(dispute.status)],
      ['Amount', money(dispute.amount, dispute.currency)],
      ['Reason', `${dispute.reason}${dispute.processor_reason ? ` (${dispute.processor_reason})` : ''}`],
      ['Evidence due', dispute.evidence_due_by ? html`${when(dispute.evidence_due_by)}${dispute.evidence_due_soon ? ' — less than three days left' : ''}` : 'not given'],
      ['Funds withdrawn', dispute.funds_withdrawn ? `yes (fee ${money(dispute.fee, dispute.currency)})` : 'no'],
      ['Payment', idLink(`/dashboard/payments/${dispute.payment}`, dispute.payment)],
      ['Connector', `${dispute.connector} · ${dispute.connector_reference}`],
      ['Created', when(dispute.created_at)],
    ])}${answer}<h2>Events</h2>${timeline(events.data)}`;
    return sendView(reply, view, `Dispute ${money(dispute.amount, dispute.currency)}`, body, { notice: noticeOf(req, NOTICES), current: '/dashboard/disputes' });
  });

  app.post('/dashboard/disputes/:id/evidence', async (req, reply) => {
    const { id } = req.params as { id: string };
    const form = formOf(req.body);
    const given = Object.fromEntries(EVIDENCE_FIELDS.filter((f) => form[f]?.trim()).map((f) => [f, form[f]!]));
    const submit = form.submit === 'submit to the processor';
    const input = checked<DisputeEvidenceBody>(DisputeEvidenceBody, { evidence: given, ...(form.defense_reason?.trim() ? { defense_reason: form.defense_reason.trim() } : {}), submit });
    await act(deps, req, form.idem, input, () => answerWithEvidence(db, rt, req.ctx, id, input));
    return reply.redirect(`/dashboard/disputes/${id}?notice=${submit ? 'submitted' : 'saved'}`, 303);
  });

  app.post('/dashboard/disputes/:id/accept', async (req, reply) => {
    const { id } = req.params as { id: string };
    await act(deps, req, formOf(req.body).idem, {}, () => runMovement(db, rt, req.ctx, newAcceptance(db, rt, req.ctx, id)));
    return reply.redirect(`/dashboard/disputes/${id}?notice=accepted`, 303);
  });
}
