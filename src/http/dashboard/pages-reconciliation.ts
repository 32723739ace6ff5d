// Dashboard pages of reconciliation (docs/reconciliation.md): the runs, newest first, with the
// ledger's margin per connector and month (fees charged less processor fees); one run with its
// exceptions.
import type { App } from '../types.js';
import { listReconciliationRuns, retrieveReconciliationRun } from '../../domain/reconciliation/service.js';
import { ListReconciliationRunsQuery } from '../../domain/reconciliation/schema.js';
import { marginsByConnectorMonth } from '../../domain/reconciliation/margins.js';
import { checked, filled, viewOf, type DashboardDeps } from './act.js';
import { code, facts, getForm, html, idLink, money, pager, sendView, table, when } from './layout.js';

const PATH = '/dashboard/reconciliation';
const runLink = (id: string) => idLink(`${PATH}/${id}`, id);
const signed = (amount: number | null, currency: string) => (amount === null ? '—' : `${amount < 0 ? '−' : ''}${money(Math.abs(amount), currency)}`);

export function registerReconciliationPages(app: App, deps: DashboardDeps) {
  const { db } = deps;

  app.get(PATH, async (req, reply) => {
    const query = filled(req.query);
    const page = await req.read((from) => listReconciliationRuns(from, req.ctx, checked<ListReconciliationRunsQuery>(ListReconciliationRunsQuery, { limit: '25', ...query }, 'querystring')));
    const filters = getForm(PATH, [{ name: 'connector_account', label: 'Connector account', value: query.connector_account, placeholder: 'ca_…' }], 'Filter');
    const runs = table(page.data, [
      { label: 'Run', cell: (r) => runLink(r.id) },
      { label: 'Connector account', cell: (r) => code(r.connector_account) },
      { label: 'Source', cell: (r) => r.source },
      { label: 'Period', cell: (r) => html`${when(r.period_start)} – ${when(r.period_end)}` },
      { label: 'Matched', cell: (r) => String(r.matched) },
      { label: 'Exceptions', cell: (r) => String(r.exceptions.length) },
      { label: 'Created', cell: (r) => when(r.created_at) },
    ], 'No reconciliation runs yet: POST /v1/reconciliation-runs, or `npm run cli -- reconcile`.');
    const margins = table(await marginsByConnectorMonth(db, req.ctx), [
      { label: 'Month', cell: (m) => m.month },
      { label: 'Connector', cell: (m) => code(m.connector) },
      { label: 'Fees charged', cell: (m) => signed(m.feesCharged, m.currency) },
      { label: 'Processor fees', cell: (m) => signed(m.processorFees, m.currency) },
      { label: 'Margin', cell: (m) => signed(m.margin, m.currency) },
    ], 'No fees yet.');
    const body = html`${filters}${runs}${pager(PATH, query, page)}<h2>Margin per connector and month</h2>${margins}`;
    return sendView(reply, viewOf(req), 'Reconciliation', body, { current: PATH });
  });

  app.get(`${PATH}/:id`, async (req, reply) => {
    const { id } = req.params as { id: string };
    const run = await retrieveReconciliationRun(db, req.ctx, id);
    const fees = Object.entries(run.fees_booked).map(([currency, amount]) => money(amount, currency)).join(', ');
    const exceptions = table(run.exceptions, [
      { label: 'Exception', cell: (e) => e.type },
      { label: 'Object', cell: (e) => (e.object ? code(e.object) : '—') },
      { label: 'Status', cell: (e) => e.status ?? '—' },
      { label: 'Ledger', cell: (e) => signed(e.expected_amount, e.currency) },
      { label: 'Processor', cell: (e) => signed(e.processor_amount, e.currency) },
      { label: 'Processor records', cell: (e) => e.processor_records.join(', '), wrap: true },
    ], 'No exceptions: the processor’s records and the ledger agree.');
    const body = html`${facts([
      ['Id', code(run.id)],
      ['Connector account', code(run.connector_account)],
      ['Connector', run.connector],
      ['Source', run.source],
      ['Period', html`${when(run.period_start)} – ${when(run.period_end)}`],
      ['Records', String(run.records)],
      ['Matched', String(run.matched)],
      ['Processor fees booked', fees],
      ['Created', when(run.created_at)],
    ])}<h2>Exceptions</h2>${exceptions}`;
    return sendView(reply, viewOf(req), `Reconciliation ${run.id}`, body, { current: PATH });
  });
}
