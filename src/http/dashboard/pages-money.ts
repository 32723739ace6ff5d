// Dashboard pages of money going out and coming in by debit: payouts and their beneficiaries,
// mandates, and the balance with its transactions. In test mode each pending object can be
// settled here (the API's test helpers) and the balance funded.
import type { App } from '../types.js';
import { listPayouts, resolveTestPayout, retrievePayout } from '../../domain/payouts/service.js';
import { listBeneficiaries } from '../../domain/beneficiaries/service.js';
import { listMandates, resolveTestMandate, retrieveMandate } from '../../domain/mandates/service.js';
import { listBalanceTransactions, retrieveBalance, fundTestBalance } from '../../ledger/balance.js';
import { listEvents } from '../../events/service.js';
import { ListPayoutsQuery, ResolvePayoutBody } from '../../domain/payouts/schema.js';
import { ListBeneficiariesQuery } from '../../domain/beneficiaries/schema.js';
import { ListMandatesQuery, ResolveMandateBody } from '../../domain/mandates/schema.js';
import { FundBalanceBody, ListBalanceTransactionsQuery } from '../../ledger/schema.js';
import { PAYOUT_STATUSES } from '../../domain/payouts/state.js';
import { MANDATE_STATUSES } from '../../domain/mandates/state.js';
import { BENEFICIARY_STATUSES } from '../../domain/beneficiaries/state.js';
import { act, checked, filled, formKey, viewOf, type DashboardDeps } from './act.js';
import { formOf } from './session.js';
import { code, facts, getForm, html, link, money, noticeOf, pager, parseMoney, postForm, sendView, status, table, timeline, when } from './layout.js';

const NOTICES: Record<string, string> = {
  resolved: 'The simulated bank has settled it.',
  funded: 'The test balance is funded.',
};

const payoutLink = (id: string) => link(`/dashboard/payouts/${id}`, id);
const mandateLink = (id: string) => link(`/dashboard/mandates/${id}`, id);
const listOf = <T>(schema: Parameters<typeof checked>[0], query: Record<string, string>) => checked<T>(schema, { limit: '25', ...query }, 'querystring');

export function registerMoneyPages(app: App, deps: DashboardDeps) {
  const { db, rt } = deps;

  app.get('/dashboard/payouts', async (req, reply) => {
    const query = filled(req.query);
    const page = await req.read((from) => listPayouts(from, req.ctx, listOf(ListPayoutsQuery, query)));
    const filters = getForm('/dashboard/payouts', [
      { name: 'reference', label: 'Reference', value: query.reference },
      { name: 'status', label: 'Status', value: query.status, options: [...PAYOUT_STATUSES] },
      { name: 'beneficiary', label: 'Beneficiary', value: query.beneficiary, placeholder: 'ben_…' },
    ], 'Filter');
    const rows = table(page.data, [
      { label: 'Payout', cell: (p) => payoutLink(p.id) },
      { label: 'Reference', cell: (p) => p.reference },
      { label: 'Amount', cell: (p) => money(p.amount, p.currency) },
      { label: 'Status', cell: (p) => status(p.status) },
      { label: 'Beneficiary', cell: (p) => code(p.beneficiary) },
      { label: 'Created', cell: (p) => when(p.created_at) },
    ], 'No payouts match.');
    return sendView(reply, viewOf(req), 'Payouts', html`${filters}${rows}${pager('/dashboard/payouts', query, page)}`, { current: '/dashboard/payouts' });
  });

  app.get('/dashboard/payouts/:id', async (req, reply) => {
    const { id } = req.params as { id: string };
    const view = viewOf(req);
    const payout = await retrievePayout(db, req.ctx, id);
    const events = await listEvents(db, req.ctx, { objects: [payout.id], limit: 100 });
    const resolve = !view.livemode && (payout.status === 'pending' || payout.status === 'processing' || payout.status === 'paid')
      ? postForm(`/dashboard/payouts/${payout.id}/resolve`, view.csrf, [
          { hidden: 'idem', value: formKey() },
          { name: 'outcome', label: 'Test helper: settle as', value: payout.status === 'paid' ? 'returned' : 'paid', options: ['paid', 'failed', 'returned'] },
        ], 'Resolve')
      : '';
    const body = html`${facts([
      ['Id', code(payout.id)],
      ['Reference', payout.reference],
      ['Status', status(payout.status)],
      ['Amount', money(payout.amount, payout.currency)],
      ['Beneficiary', code(payout.beneficiary)],
      ['Connector reference', payout.connector_reference],
      ['Failure', payout.failure_code ? `${payout.failure_code}: ${payout.failure_message ?? ''}` : null],
      ['Created', when(payout.created_at)],
    ])}${resolve}<h2>Events</h2>${timeline(events.data)}`;
    return sendView(reply, view, `Payout ${payout.reference}`, body, { notice: noticeOf(req, NOTICES), current: '/dashboard/payouts' });
  });

  app.post('/dashboard/payouts/:id/resolve', async (req, reply) => {
    const { id } = req.params as { id: string };
    const form = formOf(req.body);
    const input = checked<ResolvePayoutBody>(ResolvePayoutBody, { outcome: form.outcome });
    await act(deps, req, form.idem, input, () => resolveTestPayout(db, rt, req.ctx, id, input.outcome as 'paid' | 'failed' | 'returned'));
    return reply.redirect(`/dashboard/payouts/${id}?notice=resolved`, 303);
  });

  app.get('/dashboard/beneficiaries', async (req, reply) => {
    const query = filled(req.query);
    const page = await req.read((from) => listBeneficiaries(from, req.ctx, listOf(ListBeneficiariesQuery, query)));
    const filters = getForm('/dashboard/beneficiaries', [{ name: 'status', label: 'Status', value: query.status, options: [...BENEFICIARY_STATUSES] }], 'Filter');
    const rows = table(page.data, [
      { label: 'Beneficiary', cell: (b) => code(b.id) },
      { label: 'Name', cell: (b) => b.name },
      { label: 'Type', cell: (b) => b.type },
      { label: 'Account', cell: (b) => `${b.bank_account.country} ${b.bank_account.currency} ·${b.bank_account.last4}` },
      { label: 'Status', cell: (b) => status(b.status) },
      { label: 'Payouts', cell: (b) => link(`/dashboard/payouts?beneficiary=${b.id}`, 'payouts') },
      { label: 'Created', cell: (b) => when(b.created_at) },
    ], 'No beneficiaries match.');
    return sendView(reply, viewOf(req), 'Beneficiaries', html`${filters}${rows}${pager('/dashboard/beneficiaries', query, page)}`, { current: '/dashboard/beneficiaries' });
  });

  app.get('/dashboard/mandates', async (req, reply) => {
    const query = filled(req.query);
    const page = await req.read((from) => listMandates(from, req.ctx, listOf(ListMandatesQuery, query)));
    const filters = getForm('/dashboard/mandates', [
      { name: 'status', label: 'Status', value: query.status, options: [...MANDATE_STATUSES] },
      { name: 'customer_email', label: 'Customer email', value: query.customer_email },
    ], 'Filter');
    const rows = table(page.data, [
      { label: 'Mandate', cell: (m) => mandateLink(m.id) },
      { label: 'Reference', cell: (m) => m.reference },
      { label: 'Scheme', cell: (m) => m.scheme },
      { label: 'Status', cell: (m) => status(m.status) },
      { label: 'Customer', cell: (m) => m.customer.email },
      { label: 'Created', cell: (m) => when(m.created_at) },
    ], 'No mandates match.');
    return sendView(reply, viewOf(req), 'Mandates', html`${filters}${rows}${pager('/dashboard/mandates', query, page)}`, { current: '/dashboard/mandates' });
  });

  app.get('/dashboard/mandates/:id', async (req, reply) => {
    const { id } = req.params as { id: string };
    const view = viewOf(req);
    const mandate = await retrieveMandate(db, req.ctx, id);
    const events = await listEvents(db, req.ctx, { objects: [mandate.id], limit: 100 });
    const outcomes = mandate.status === 'pending' ? ['active', 'failed'] : mandate.status === 'active' ? ['revoked'] : [];
    const resolve = !view.livemode && outcomes.length
      ? postForm(`/dashboard/mandates/${mandate.id}/resolve`, view.csrf, [
          { hidden: 'idem', value: formKey() },
          { name: 'outcome', label: 'Test helper: bank answers', value: outcomes[0], options: outcomes },
        ], 'Resolve')
      : '';
    const body = html`${facts([
      ['Id', code(mandate.id)],
      ['Reference', mandate.reference],
      ['Status', status(mandate.status)],
      ['Scheme', mandate.scheme],
      ['Currency', mandate.currency],
      ['Max amount', mandate.max_amount === null ? 'no limit' : money(mandate.max_amount, mandate.currency)],
      ['Customer', `${mandate.customer.name} <${mandate.customer.email}>`],
      ['Account', `${mandate.bank_account.country} ·${mandate.bank_account.last4}`],
      ['Connector', mandate.connector],
      ['Failure', mandate.failure_code ? `${mandate.failure_code}: ${mandate.failure_message ?? ''}` : null],
      ['Created', when(mandate.created_at)],
    ])}${resolve}<h2>Events</h2>${timeline(events.data)}`;
    return sendView(reply, view, `Mandate ${mandate.reference}`, body, { notice: noticeOf(req, NOTICES), current: '/dashboard/mandates' });
  });

  app.post('/dashboard/mandates/:id/resolve', async (req, reply) => {
    const { id } = req.params as { id: string };
    const form = formOf(req.body);
    const input = checked<ResolveMandateBody>(ResolveMandateBody, { outcome: form.outcome });
    await act(deps, req, form.idem, input, () => resolveTestMandate(db, rt, req.ctx, id, input.outcome as 'active' | 'failed' | 'revoked'));
    return reply.redirect(`/dashboard/mandates/${id}?notice=resolved`, 303);
  });

  app.get('/dashboard/balance', async (req, reply) => {
    const view = viewOf(req);
    const query = filled(req.query);
    // Both from the same server (replica or primary), never one from each; two pooled connections,
    // so not one snapshot: a transaction landing between them can show in one and not the other.
    const [balance, transactions] = await req.read((from) =>
      Promise.all([retrieveBalance(from, req.ctx), listBalanceTransactions(from, req.ctx, listOf(ListBalanceTransactionsQuery, query))]),
    );
    const currencies = [...new Set([...balance.available, ...balance.pending, ...balance.reserved].map((b) => b.currency))].sort();
    const amountIn = (list: { currency: string; amount: number }[], currency: string) => money(list.find((b) => b.currency === currency)?.amount ?? 0, currency);
    const totals = table(currencies, [
      { label: 'Currency', cell: (c) => c },
      { label: 'Available', cell: (c) => amountIn(balance.available, c) },
      { label: 'Pending', cell: (c) => amountIn(balance.pending, c) },
      { label: 'Reserved', cell: (c) => amountIn(balance.reserved, c) },
    ], 'No money has moved in this mode yet.');
    const fund = view.livemode
      ? ''
      : html`<h2>Test helper: fund the balance</h2>${postForm('/dashboard/balance/fund', view.csrf, [
          { hidden: 'idem', value: formKey() },
          { name: 'amount', label: 'Amount', value: '100.00', required: true },
          { name: 'currency', label: 'Currency', value: 'EUR', required: true },
        ], 'Fund')}`;
    const rows = table(transactions.data, [
      { label: 'When', cell: (t) => when(t.created_at) },
      { label: 'Type', cell: (t) => code(t.type) },
      { label: 'Amount', cell: (t) => money(t.amount, t.currency) },
      { label: 'Available', cell: (t) => money(t.balance_changes.available, t.currency) },
      { label: 'Pending', cell: (t) => money(t.balance_changes.pending, t.currency) },
      { label: 'Reserved', cell: (t) => money(t.balance_changes.reserved, t.currency) },
      { label: 'Source', cell: (t) => (t.source ? code(t.source) : '') },
    ], 'No balance transactions.');
    const body = html`${totals}${fund}<h2>Balance transactions</h2>${rows}${pager('/dashboard/balance', query, transactions)}`;
    return sendView(reply, view, 'Balance', body, { notice: noticeOf(req, NOTICES), current: '/dashboard/balance' });
  });

  app.post('/dashboard/balance/fund', async (req, reply) => {
    const form = formOf(req.body);
    const currency = (form.currency ?? '').trim().toUpperCase();
    const input = checked<FundBalanceBody>(FundBalanceBody, { amount: parseMoney(form.amount ?? '', currency), currency });
    await act(deps, req, form.idem, input, () => fundTestBalance(db, req.ctx, input, rt.now()));
    return reply.redirect('/dashboard/balance?notice=funded', 303);
  });
}
